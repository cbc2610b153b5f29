"""Checks a Chrome trace's host thread: one thread, so its events (calls
and cpu stages) never overlap; prints the cpu stages in order."""
import json
import sys

events = json.load(open(sys.argv[1]))["traceEvents"]
names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}
host = sorted((e for e in events if e["ph"] == "X" and names[e["tid"]] == "host"),
              key=lambda e: e["ts"])
for a, b in zip(host, host[1:]):
    assert a["ts"] + a["dur"] <= b["ts"] + 1e-6, (a, b)
print("host events do not overlap:", len(host))
for e in host:
    if e["cat"] == "cpu":
        print(f'cpu {e["name"]} dur={round(e["dur"], 3)}')
