"""Each device's host thread on the device model: host-threads.pipe's run.

  check_host_threads.py RUN_JSON TRACE_JSON

From the run (`pipec run --json`): every stage ran on the device the
schedule says; the two threads' first cpu stages overlap (one thread would
put them one after the other); B starts after both Prep0 and Prep1, Post
after A. From the trace: on each device's host thread (tid 0 of its
process), the calls and cpu stages never overlap: a thread does one thing
at a time. Exits 1, naming the failure, when one does not hold.
"""
import json
import sys

run = json.load(open(sys.argv[1]))["pipelines"][0]
trace = json.load(open(sys.argv[2]))["traceEvents"]
failures = []
stage = {s["instance"]: s for s in run["stages"]}
expected = {"Prep0": "gpu0", "Prep1": "gpu1", "A": "gpu0", "B": "gpu1", "Post": "gpu1"}
for name, device in expected.items():
    if stage[name].get("device") != device:
        failures.append(f"{name} ran on {stage[name].get('device')}, not {device}")
if not stage["Prep1"]["start_us"] < stage["Prep0"]["end_us"]:
    failures.append("Prep0 and Prep1 do not overlap: one host thread, not two")
for before, after in (("Prep0", "A"), ("Prep0", "B"), ("Prep1", "B"), ("A", "Post"),
                      ("Prep1", "Post")):
    if stage[after]["start_us"] < stage[before]["end_us"] - 1e-9:
        failures.append(f"{after} starts before {before} ends")
if run["dependency_violations"] != 0:
    failures.append(f"{run['dependency_violations']} dependency violations")

threads = {}
for e in trace:
    if e.get("ph") == "M" and e["name"] == "thread_name" and e["args"]["name"] == "host":
        threads[e["pid"]] = []
for e in trace:
    if e.get("ph") == "X" and e["tid"] == 0 and e["pid"] in threads:
        threads[e["pid"]].append((e["ts"], e["ts"] + e["dur"], e["name"]))
if len(threads) != 2:
    failures.append(f"{len(threads)} host threads in the trace, not 2")
for pid, spans in threads.items():
    spans.sort()
    if not spans:
        failures.append(f"host thread of process {pid} did nothing")
    for (a0, a1, a), (b0, b1, b) in zip(spans, spans[1:]):
        if b0 < a1 - 1e-9:
            failures.append(f"process {pid}: '{b}' starts at {b0} during '{a}' ({a0} to {a1})")

for f in failures:
    print("FAIL:", f)
print("host threads:", "ok" if not failures else f"{len(failures)} failure(s)")
sys.exit(1 if failures else 0)
