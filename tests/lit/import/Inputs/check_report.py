"""Recomputes a step's span, GPU busy time and stream waits from the trace
itself, independently of pipec, and compares them with pipec's JSON report
(within 1%)."""
import json
import subprocess
import sys

path, step = sys.argv[1], int(sys.argv[2])
doc = json.load(open(path))
events = doc["traceEvents"]
span = [e for e in events if e.get("name") == f"ProfilerStep#{step}"][0]
lo, hi = span["ts"], span["ts"] + span["dur"]
launch = {e["args"]["correlation"]: e["ts"] for e in events if e.get("cat") == "cuda_runtime"}
gpu = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
       and lo <= launch[e["args"]["correlation"]] < hi]
start = min(e["ts"] for e in gpu)
end = max(e["ts"] + e["dur"] for e in gpu)
busy, covered = 0.0, start
for e in sorted(gpu, key=lambda e: e["ts"]):
    busy += max(0.0, e["ts"] + e["dur"] - max(covered, e["ts"]))
    covered = max(covered, e["ts"] + e["dur"])
waits = sum(1 for e in events if e.get("cat") == "cuda_sync" and e["name"] == "Stream Wait Event"
            and lo <= launch[e["args"]["correlation"]] < hi)
report = json.loads(subprocess.run(["pipec", "import", path, "--json", f"--step={step}"],
                                   check=True, capture_output=True, text=True).stdout)
rec = report["recorded"]
def close(a, b):
    return abs(a - b) <= 0.01 * max(abs(a), abs(b), 1e-9)
assert close(rec["span_us"], end - start), (rec["span_us"], end - start)
assert close(rec["busy_us"], busy), (rec["busy_us"], busy)
assert rec["waits_issued"] == waits, (rec["waits_issued"], waits)
print("span, busy and waits agree with the trace")
