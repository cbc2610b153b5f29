"""The bubble formulas on the device model: `pipec run --json`'s devices.

  check_model_bubbles.py PIPEC GENERATE WORKDIR

The same cases as check_bubbles.py (P in {2, 4, 8}, M in {4, 8, 32}; 1F1B,
ZB-H1, interleaved 1F1B with V = 2), with passes of 1 ms each and no
communication, run on the device model (streams). The model adds what the
analysis leaves out (launches, the host thread, cross-device waits, the gap
between a stream's kernels), so it can only be slower: each device's busy
time is still the passes it runs, the makespan is at least the analysis's
critical path (the formula's step) and within 2% of it, and each device's
bubble is at least the formula's and within 0.02 of it (2% of the step).
Prints one line per case, with the model's bubble.
"""
import json
import os
import subprocess
import sys

pipec, generate, work = sys.argv[1:4]
failed = 0
PASS = 1000.0  # microseconds
for kind, v in (("1f1b", 1), ("zbh1", 1), ("interleaved", 2)):
    for p in (2, 4, 8):
        for m in (4, 8, 32):
            label = f"{kind} v={v}" if kind == "interleaved" else kind
            if kind == "interleaved" and m % p:
                continue
            path = os.path.join(work, f"model-{kind}-{v}-{p}-{m}.pipe")
            subprocess.run([sys.executable, generate, kind, str(p), str(m), "--v", str(v),
                            "--f", str(PASS), "--b", str(PASS), "--w", str(PASS),
                            "-o", path], check=True)
            compiled = json.loads(subprocess.run([pipec, "compile", path, "--emit=json"],
                                                 check=True, capture_output=True,
                                                 text=True).stdout)
            step = compiled["pipelines"][0]["analysis"]["critical_path_us"]
            bound = compiled["pipelines"][0]["analysis"]["lower_bound_us"]
            run = json.loads(subprocess.run([pipec, "run", path, "--json", "--backend=sim"],
                                            check=True, capture_output=True,
                                            text=True).stdout)["pipelines"][0]
            formula = {"1f1b": (p - 1) / (m + p - 1), "zbh1": (p - 1) / (3 * m + p - 1),
                       "interleaved": (p - 1) / (v * m + p - 1)}[kind]
            if kind == "zbh1" and m < p:
                formula = compiled["pipelines"][0]["analysis"]["devices"][0]["bubble_fraction"]
            makespan = run["makespan_us"]
            ok = bound <= makespan <= 1.02 * step and run["dependency_violations"] == 0
            if not ok:
                failed += 1
                print(f"FAIL {label} p={p} m={m}: makespan {makespan}, step {step}, "
                      f"bound {bound}")
            worst = 0.0
            for d in run["devices"]:
                busy_ok = abs(d["busy_us"] - m * 3 * PASS) < 1e-6 * m * PASS
                off = d["bubble_fraction"] - formula
                worst = max(worst, off)
                if not (busy_ok and -1e-9 <= off <= 0.02):
                    failed += 1
                    print(f"FAIL {label} p={p} m={m} {d} formula={formula}")
            print(f"{label} p={p} m={m}: model step {makespan / step - 1:+.2%} of the formula's, "
                  f"bubble at most {worst:+.4f} from it")
sys.exit(1 if failed else 0)
