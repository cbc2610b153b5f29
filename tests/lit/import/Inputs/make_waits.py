"""Small Kineto traces that each show one way the host waits or the GPU
idles (docs/import.md, "The host, as recorded"), written to a folder:

  calls.json  a cudaMalloc that takes 300 us of the host's own time, and a
              cudaFree that waits for the kernels before it (it synchronises
              the device) and then frees;
  queue.json  600 launches of 20 us kernels, one every 5 us, into a driver
              queue that holds 300: from the 300th on, each launch call
              returns only once an op has started;
  graph.json  a cudaGraphLaunch of three kernels, the GPU idle 400 us
              between the first two for no reason the trace holds.

  make_waits.py DIR"""
import json
import os
import sys

DEVICE = {"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0,
          "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
          "regsPerBlock": 65536, "regsPerMultiprocessor": 65536, "warpSize": 32,
          "sharedMemPerBlock": 49152, "sharedMemPerMultiprocessor": 167936, "numSms": 108}


class Trace:
    def __init__(self):
        self.events, self.corr = [], 100

    def call(self, name, ts, dur, corr=None):
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1, "tid": 1,
                            "ts": ts, "dur": dur,
                            "args": {"correlation": corr if corr is not None else self.next()}})

    def next(self):
        self.corr += 1
        return self.corr

    def kernel(self, name, ts, dur, corr, stream=7):
        self.events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream,
                            "ts": ts, "dur": dur,
                            "args": {"device": 0, "stream": stream, "correlation": corr,
                                     "registers per thread": 32, "shared memory": 0,
                                     "grid": [108, 1, 1], "block": [256, 1, 1]}})

    def launch(self, name, call_ts, call_dur, ts, dur, stream=7):
        c = self.next()
        self.call("cudaLaunchKernel", call_ts, call_dur, c)
        self.kernel(name, ts, dur, c, stream)

    def write(self, path):
        with open(path, "w") as f:
            json.dump({"schemaVersion": 1, "deviceProperties": [DEVICE],
                       "traceEvents": self.events}, f, indent=1)


def calls():
    t = Trace()
    t.launch("first", 10, 4, 20, 500)
    t.call("cudaMalloc", 30, 300)                 # the host's own 300 us
    t.launch("second", 340, 4, 520, 20)
    t.call("cudaFree", 350, 200)                  # waits for 'second' (ends 540), frees
    t.launch("third", 560, 4, 570, 10)
    return t


def queue(depth=300, n=600, kernel=20.0):
    t = Trace()
    ready, host, calls_done, starts = 0.0, 10.0, [], []
    for i in range(n):
        # Launches not yet started when the call is made: a full queue makes
        # it wait until the next op starts.
        pending = [s for r, s in calls_done if r <= host and s > host]
        ret = host + 4
        if len(pending) >= depth:
            ret = min(pending) + 1
        start = max(ret + 5, ready)
        ready = start + kernel + 0.9  # the device between two kernels
        c = t.next()
        t.call("cudaLaunchKernel", host, ret - host, c)
        t.kernel("k", start, kernel, c)
        calls_done.append((ret, start))
        host = ret + 1
    return t


def graph():
    t = Trace()
    t.launch("before", 10, 4, 20, 100)
    c = t.next()
    t.call("cudaGraphLaunch", 30, 10, c)
    t.kernel("g1", 120, 50, c)
    t.kernel("g2", 570, 50, c)                     # 400 us idle before it
    t.kernel("g3", 620, 50, c)
    t.launch("after", 700, 4, 710, 10)
    return t


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
calls().write(os.path.join(out, "calls.json"))
queue().write(os.path.join(out, "queue.json"))
graph().write(os.path.join(out, "graph.json"))
