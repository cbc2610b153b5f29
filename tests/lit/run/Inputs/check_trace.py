"""Reads a Chrome trace and prints what a test can check."""
import json
import sys

trace = json.load(open(sys.argv[1]))
events = trace["traceEvents"]
for e in events:
    assert e["ph"] in ("M", "X"), e
    if e["ph"] == "X":
        assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0, e
processes = [e["args"]["name"] for e in events if e["name"] == "process_name"]
threads = [e["args"]["name"] for e in events if e["name"] == "thread_name"]
stages = [e for e in events if e["ph"] == "X" and e["cat"] != "api"]
host = [e for e in events if e["ph"] == "X" and e["cat"] == "api"]
print("processes:", ", ".join(processes))
print("threads:", ", ".join(threads))
print("stage events:", len(stages))
print("host events:", len(host))
for e in stages:
    print(f'{e["name"]} {e["cat"]} ts={round(e["ts"], 3)} dur={round(e["dur"], 3)}')
