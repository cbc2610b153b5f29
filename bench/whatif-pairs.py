#!/usr/bin/env python3
"""What-if error, measured: pairs of recordings of one workload, before and
after one change, with the edit of the imported .pipe file that expresses
the change. For each pair:

  - the recorded change: the step's period (its ProfilerStep range, host
    included; the GPU span for a whole trace), after against before, from
    `pipec import --report --json` of each recording;
  - the predicted change: the imported `before` step and the same file with
    the edit applied, each run on the device model with the recorded GPU's
    profile (`--profile-out` of the import), the run's makespan (first stage
    start to last end, the host's work included) after against before;
  - their difference, in percentage points.

The model is never tuned to a pair: the edit says what changed, nothing
else. A manifest (JSON) lists the pairs:

  {"pairs": [{"name": "input copy on a side stream",
              "before": "before.json.gz", "after": "after.json.gz",
              "step": "5",                       (optional: --step)
              "edits": [["regex", "replacement"], ...]}]}

Paths are relative to the manifest. Each edit is a Python regular
expression substitution on the imported file's text, applied in order; an
edit that changes nothing is an error (the pair's edit no longer matches
the import).

  bench/whatif-pairs.py MANIFEST.json [--build=DIR]
"""
import json
import os
import re
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
build = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--build=")),
             os.path.join(here, "..", "build"))
if len(args) != 1:
    sys.exit(__doc__)
pipec = os.path.join(build, "pipec")
manifest_path = args[0]
root = os.path.dirname(os.path.abspath(manifest_path))
manifest = json.load(open(manifest_path))


def run(*cmd):
    out = subprocess.run([pipec, *cmd], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"pipec {' '.join(cmd)} failed:\n{out.stderr}")
    return out.stdout


def recorded(trace, step):
    r = json.loads(run("import", trace, "--report", "--json", *(["--step=" + step] if step else [])))
    rec = r["recorded"]
    return rec.get("period_us") or rec["span_us"]


def makespan(pipe, profile):
    r = json.loads(run("run", pipe, "--backend=sim", "--json", "--profile=" + profile))
    return r["pipelines"][0]["makespan_us"]


print("| pair | recorded before | recorded after | recorded change | predicted change | "
      "difference |")
print("|---|---|---|---|---|---|")
worst = 0.0
with tempfile.TemporaryDirectory() as tmp:
    for i, pair in enumerate(manifest["pairs"]):
        before = os.path.join(root, pair["before"])
        after = os.path.join(root, pair["after"])
        step = pair.get("step")
        pipe, profile = os.path.join(tmp, f"{i}.pipe"), os.path.join(tmp, f"{i}.json")
        run("import", before, "-o", pipe, "--profile-out=" + profile,
            *(["--step=" + step] if step else []))
        text = open(pipe).read()
        for pattern, replacement in pair["edits"]:
            changed = re.sub(pattern, replacement, text, flags=re.M)
            if changed == text:
                sys.exit(f"{pair['name']}: the edit {pattern!r} changes nothing in the import")
            text = changed
        edited = os.path.join(tmp, f"{i}.edited.pipe")
        open(edited, "w").write(text)
        run("check", edited, "--profile=" + profile)
        rec_before, rec_after = recorded(before, step), recorded(after, step)
        pred_before, pred_after = makespan(pipe, profile), makespan(edited, profile)
        rec_change = rec_after / rec_before - 1
        pred_change = pred_after / pred_before - 1
        worst = max(worst, abs(pred_change - rec_change))
        print(f"| {pair['name']} | {rec_before / 1e3:.2f} ms | {rec_after / 1e3:.2f} ms | "
              f"{rec_change * 100:+.1f}% | {pred_change * 100:+.1f}% | "
              f"{(pred_change - rec_change) * 100:+.1f} points |")
print(f"\n{len(manifest['pairs'])} pair(s); the largest difference: {worst * 100:.1f} points")
