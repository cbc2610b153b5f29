#!/usr/bin/env python3
"""How close pipec's model of an imported step comes to its recording, on
real PyTorch profiler traces and Nsight Systems exports: for each trace in
a folder (*.json, *.json.gz; *.sqlite there or in its nsys/ folder),
`pipec import --report --json` of its default step (and of
every other step with --all-steps), as a Markdown table:

  - span: the recorded step (first GPU op start to last GPU op end);
  - model: the imported program, host thread included, on the trace's
    profile, over the same window (predicted.streams_makespan_us), and its
    error;
  - op-end error: the same free run's median |predicted - recorded| op
    end, as a share of the span (fidelity, report version 4); and the
    pinned replay's (each launch returning when its call did), a
    secondary check;
  - critical path, GPU busy: the longest chain through the recorded
    orderings (host order and cpu stages included), and the GPU's recorded
    busy time;
  - period: the step's host range as users time it (host work before its
    first launch included), recorded and as the model has it for a loop of
    such steps, and the error (none for a whole trace);
  - op-end p95: the free run's 95th percentile |predicted - recorded| op
    end, as a share of the span;
  - graph: the break-even against the recorded host, and against pipec's
    own launches.

Targets (issues 41 and 57): the free run within 5% of the span and its
median op-end error at most 2% of the span, on every step; no critical
path longer than the step's window (its host range and its GPU ops
together: the orderings are the recording's, host work included). Exit 1
when one is missed. Reported beside them, not yet met on every step: the
period within 5% of the recorded one (a step where the launch queue filled
part of the way through misses), and the op-end p95 within 3% of the span.

  bench/real-traces.py DIR [--build=DIR] [--all-steps]
"""
import glob
import json
import os
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
build = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--build=")),
             os.path.join(here, "..", "build"))
all_steps = "--all-steps" in sys.argv
if not args:
    sys.exit(__doc__)
pipec = os.path.join(build, "pipec")
traces = sorted(glob.glob(os.path.join(args[0], "*.json")) +
                glob.glob(os.path.join(args[0], "*.json.gz")))
# Nsight Systems exports, beside the traces or in an nsys/ folder of them.
traces += sorted(glob.glob(os.path.join(args[0], "*.sqlite")) +
                 glob.glob(os.path.join(args[0], "nsys", "*.sqlite")))
if not traces:
    sys.exit(f"no trace (*.json, *.json.gz) in {args[0]}")


def report(path, step=None):
    cmd = [pipec, "import", path, "--report", "--json"] + ([f"--step={step}"] if step else [])
    clock = time.time()
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    return json.loads(out.stdout), time.time() - clock


def steps(path):
    """Every ProfilerStep of the trace (from the import's error message)."""
    out = subprocess.run([pipec, "import", path, "--step=-999999"], capture_output=True,
                         text=True)
    marker = "it has "
    if marker not in out.stderr:
        return [None]
    return [int(s) for s in out.stderr.split(marker, 1)[1].strip().split(", ")]


def breakeven(g):
    return str(g["break_even_replays"]) if g["break_even_replays"] else "never"


rows, within, errors_ok, paths_ok, periods, periods_within = [], 0, True, True, 0, 0
print("| trace | step | ops | span ms | model ms | model error | op-end error | op-end p95 | "
      "pinned op-end | period ms | model period ms | period error | "
      "critical path ms | GPU busy ms | host-bound | graph pays after (recorded host / pipec's) | s |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for path in traces:
    name = os.path.basename(path).split(".json")[0].split(".sqlite")[0]
    for step in (steps(path) if all_steps else [None]):
        r, seconds = report(path, step)
        rec, pred, fid, ana = r["recorded"], r["predicted"], r["fidelity"], r["analysis"]
        span = rec["span_us"]
        err = pred["streams_makespan_us"] / span - 1
        oe = fid["median_op_end_error_us"] / span
        pinned = fid["pinned"]["median_op_end_error_us"] / span
        p95 = fid["p95_op_end_error_us"] / span
        period, model_period = rec.get("period_us"), pred.get("period_us")
        within += abs(err) <= 0.05
        rows.append(name)
        errors_ok &= oe <= 0.02
        paths_ok &= ana["critical_path_us"] <= rec["window_us"] * 1.001
        if period:
            period_err = model_period / period - 1
            periods += 1
            periods_within += abs(period_err) <= 0.05
            period_cells = f"{period / 1e3:.2f} | {model_period / 1e3:.2f} | {period_err * 100:+.1f}%"
        else:
            period_cells = "- | - | -"
        print(f"| {name[:40]} | {r['step']} | {rec['ops']} | {span / 1e3:.2f} | "
              f"{pred['streams_makespan_us'] / 1e3:.2f} | {err * 100:+.1f}% | "
              f"{oe * 100:.2f}% | {p95 * 100:.2f}% | {pinned * 100:.2f}% | {period_cells} | "
              f"{ana['critical_path_us'] / 1e3:.2f} | {rec['busy_us'] / 1e3:.2f} | {rec['host_bound_fraction'] * 100:.0f}% | "
              f"{breakeven(pred)} / {breakeven(pred['own_launches'])} | {seconds:.1f} |")
        for note in r["notes"]:
            print(f"|  | note: {note[:60]}... | | | | | | | | | | | | | | | |")
print(f"\nmodel within 5% of the span: {within} of {len(rows)} (target: all); "
      f"op-end error at most 2% of the span on every step: {'yes' if errors_ok else 'NO'}; "
      f"no critical path past the step's window: {'yes' if paths_ok else 'NO'}; "
      f"period within 5%: {periods_within} of {periods} steps")
sys.exit(0 if within == len(rows) and errors_ok and paths_ok else 1)
