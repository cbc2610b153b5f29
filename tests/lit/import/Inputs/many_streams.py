"""Writes a trace of one kernel on each of N streams: many_streams.py N OUT."""
import json
import sys

n, out = int(sys.argv[1]), sys.argv[2]
events = []
for i in range(n):
    events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1,
                   "tid": 1, "ts": 1000 + 10 * i, "dur": 2, "args": {"correlation": 100 + i}})
    events.append({"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": i,
                   "ts": 1003 + 10 * i, "dur": 1,
                   "args": {"stream": i, "correlation": 100 + i}})
with open(out, "w") as f:
    json.dump({"traceEvents": events}, f)
