#!/usr/bin/env python3
"""Automatic stream assignment: the simulated makespan and the waits of each
--assign method on generated DAGs whose stages have no `on`, and the time
compile takes to assign 10^4 and 10^5 stages. Prints Markdown tables.

  bench/assign.py [build dir]        (default: build)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build")
pipec = os.path.join(build, "pipec")
methods = ["round-robin", "levels", "matching", "makespan"]
work = tempfile.mkdtemp()


def gen(args, path):
    subprocess.run([sys.executable, os.path.join(here, "gen.py")] + args +
                   ["--unpinned", "-o", path], check=True)


def measure(path, method):
    run = json.loads(subprocess.run(
        [pipec, "run", path, "--backend=sim", "--json", "--replays=1",
         f"--assign={method}"], check=True, capture_output=True, text=True).stdout)
    schedule = json.loads(subprocess.run(
        [pipec, "compile", path, "--emit=json", f"--assign={method}"],
        check=True, capture_output=True, text=True).stdout)
    return run["pipelines"][0]["makespan_us"], schedule["pipelines"][0]["waits"]


shapes = []
# Short kernels (1-7 us): issuing them is the bottleneck, and the host's calls
# (launches, waits, records) decide the makespan. Long kernels (20-200 us):
# the device is the bottleneck, and how stages share streams decides it.
for stages in (100, 1000, 10000):
    for seed in (1, 2):
        shapes.append((f"random {stages} long seed {seed}",
                       ["random", "--stages", str(stages), "--seed", str(seed),
                        "--long", "20", "200"]))
shapes.append(("layered 40x16 long", ["layered", "--layers", "40", "--width", "16",
                                      "--long", "20", "200"]))
shapes.append(("transformer 24x8 long", ["transformer", "--layers", "24",
                                         "--microbatches", "8", "--long", "20", "200"]))
for stages in (100, 1000, 10000):
    for seed in (1, 2, 3):
        shapes.append((f"random {stages} seed {seed}",
                       ["random", "--stages", str(stages), "--seed", str(seed)]))
for width, seed in ((8, 1), (16, 2), (32, 3)):
    shapes.append((f"layered 40x{width} seed {seed}",
                   ["layered", "--layers", "40", "--width", str(width), "--seed", str(seed)]))
for layers, mb in ((12, 4), (24, 8)):
    shapes.append((f"transformer {layers}x{mb}",
                   ["transformer", "--layers", str(layers), "--microbatches", str(mb)]))
shapes.append(("random 100 x 50 iterations",
               ["random", "--stages", "100", "--iterations", "50"]))

print("| DAG (no `on`) | " + " | ".join(f"{m} makespan us (waits)" for m in methods) +
      " | default vs matching |")
print("|---|" + "---|" * (len(methods) + 1))
gains, worse = {}, 0
for label, args in shapes:
    path = os.path.join(work, "dag.pipe")
    gen(args, path)
    results = {m: measure(path, m) for m in methods}
    best_baseline = min(results[m][0] for m in methods[:-1])
    ours = results["makespan"][0]
    if ours > best_baseline + 1e-6:
        worse += 1
    gain = 1 - ours / results["matching"][0]
    gains.setdefault("long" in label, []).append(gain)
    print(f"| {label} | " + " | ".join(f"{results[m][0]:.1f} ({results[m][1]})" for m in methods) +
          f" | {gain * 100:+.1f}% |")
print()
every = gains.get(True, []) + gains.get(False, [])
print(f"The default was worse than the best baseline on {worse} of {len(shapes)} DAGs. "
      f"Against the matching it is {statistics.mean(every) * 100:.1f}% faster on average: "
      f"{statistics.mean(gains.get(True, [0])) * 100:.1f}% with long kernels, "
      f"{statistics.mean(gains.get(False, [0])) * 100:.1f}% with short ones "
      f"(target: never worse, 15% on average).")

print()
print("| unpinned stages | assignment (compile --stats 'streams'), s | target | whole compile --emit=json, s |")
print("|---|---|---|---|")
import re
for stages, target in ((10000, 1), (100000, 15)):
    path = os.path.join(work, f"big{stages}.pipe")
    gen(["random", "--stages", str(stages), "--long", "20", "200"], path)
    start = time.monotonic()
    err = subprocess.run([pipec, "compile", path, "--emit=json", "-o", "/dev/null", "--stats"],
                         check=True, capture_output=True, text=True).stderr
    whole = time.monotonic() - start
    assign = float(re.search(r"streams ([0-9.]+) s", err).group(1))
    print(f"| {stages} | {assign:.2f} | < {target} | {whole:.2f} |")
