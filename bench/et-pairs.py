#!/usr/bin/env python3
"""The execution-trace pairs of a folder (X_et.json[.gz] beside
X_kineto.json[.gz], there or in its et/ folder), each imported with
`pipec import X_kineto --et=X_et --report --json`: how many of the step's
GPU ops the execution trace linked and how; refused below the default 80%,
and then imported again at --et-least-linked=LEAST (default 75) to show
what the data makes of it: buffers, same-stream orderings left to the
data, the model's span against the recording (the data must not change
what ran: within 5%), and advise's first suggestion on the written file.
As a Markdown table (docs/measurements.md).

  bench/et-pairs.py DIR [--build=DIR] [--least=75]
"""
import glob
import json
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
build = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--build=")),
             os.path.join(here, "..", "build"))
least = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--least=")), "75")
if not args:
    sys.exit(__doc__)
pipec = os.path.join(build, "pipec")
pairs = []
for folder in (args[0], os.path.join(args[0], "et")):
    for et in sorted(glob.glob(os.path.join(folder, "*_et.json*"))):
        kineto = et.replace("_et.json", "_kineto.json")
        if os.path.exists(kineto):
            pairs.append((os.path.basename(et).split("_et.json")[0], kineto, et))
if not pairs:
    sys.exit(f"no execution-trace pair (X_et.json beside X_kineto.json) in {args[0]}")


def run(cmd, stdin=None):
    return subprocess.run(cmd, capture_output=True, text=True, input=stdin, timeout=600)


print("| pair | default (80%) | linked | by | with data | buffers | orderings left to the data "
      "| model span error | advise |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
missed = 0
for name, kineto, et in pairs:
    default = run([pipec, "import", kineto, f"--et={et}", "-o", "/dev/null"])
    verdict = "imported" if default.returncode == 0 else "refused"
    share = re.search(r"links (\d+) of the step's (\d+) GPU ops \(([0-9.]+)%", default.stderr)
    lowered = run([pipec, "import", kineto, f"--et={et}", f"--et-least-linked={least}",
                   "--report", "--json"])
    if lowered.returncode != 0:
        print(f"| {name} | {verdict} | {share.group(3) + '%' if share else '?'} | | | | | "
              f"refused at {least}% too | |")
        continue
    r = json.loads(lowered.stdout)
    d = r["data"]
    span, model = r["recorded"]["span_us"], r["predicted"]["streams_makespan_us"]
    error = model / span - 1
    missed += abs(error) > 0.05
    pipe = run([pipec, "import", kineto, f"--et={et}", f"--et-least-linked={least}"]).stdout
    advice = run([pipec, "advise", "-"], stdin=pipe).stdout
    first = re.search(r"^\s+1\. (.*)$", advice, re.M)
    print(f"| {name} | {verdict} | {d['linked_ops']} of {d['step_ops']} "
          f"({100 * d['linked_ops'] / d['step_ops']:.1f}%) | {d['linked_by']} | "
          f"{d['data_ops']} | {d['buffers']} | {d['stream_orders_freed']} | {100 * error:+.1f}% | "
          f"{first.group(1) if first else 'none'} |")
print()
print(f"model within 5% of the span on every pair imported: {'yes' if not missed else 'no'}")
sys.exit(1 if missed else 0)
