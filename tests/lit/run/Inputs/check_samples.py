"""Runs every sample on the device model and checks what the issue asks."""
import glob
import json
import os
import subprocess
import sys

samples = sorted(glob.glob(os.path.join(sys.argv[1], "*.pipe")))
backend = sys.argv[2] if len(sys.argv) > 2 else "--backend=sim"
simulated = backend == "--backend=sim"
results = {}
for path in samples:
    name = os.path.basename(path)[:-5]
    run = json.loads(subprocess.run(
        ["pipec", "run", path, backend, "--json", "--lower=both", "--replays=20"],
        check=True, capture_output=True, text=True).stdout)
    schedule = json.loads(subprocess.run(
        ["pipec", "compile", path, "--emit=json"],
        check=True, capture_output=True, text=True).stdout)
    for p in run["pipelines"]:
        assert p["dependency_violations"] == 0, (name, p["lowering"])
        assert p["makespan_us"] >= p["lower_bound_us"] - 1e-6, (name, p)
    results[name] = (run, schedule)
print(f"checked {len(samples)} samples in 2 lowerings")
if not simulated:
    sys.exit(0)  # the comparisons below are the model's; a GPU is measured

run = results["many-kernels"][0]["pipelines"]
streams, graph = run[0], run[1]
assert graph["timings_us"]["replay_median"] < streams["timings_us"]["replay_median"]
print("many-kernels: graph replay beats streams")

run, schedule = results["chunked"]
bound = schedule["pipelines"][0]["analysis"]["stream_bound_us"]
makespan = run["pipelines"][0]["makespan_us"]
assert makespan <= 1.3 * bound, (makespan, bound)
print(f"chunked: within {100 * (makespan / bound - 1):.1f}% of the per-stream bound")
