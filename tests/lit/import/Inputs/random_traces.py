"""Writes random Kineto traces (a fixed seed; made here, not committed):
launches, kernels, copies and memsets on a few streams, their calls from one
or two host threads with random gaps (some hours long), syncs of each kind
(some blocking for hours), stream waits, frees, random grids and blocks
(some of tens of thousands of waves), and ProfilerStep ranges. The shapes
pipec import must either refuse, naming why, or write as a file that checks
without an error or a warning.

  random_traces.py OUT_DIR COUNT [SEED]
"""
import json
import os
import random
import sys

out, count = sys.argv[1], int(sys.argv[2])
rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 550)
os.makedirs(out, exist_ok=True)
GPUS = [
    {"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0,
     "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
     "regsPerMultiprocessor": 65536, "sharedMemPerMultiprocessor": 167936, "numSms": 108,
     "sharedMemPerBlockOptin": 166912},
    {"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0,
     "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
     "regsPerMultiprocessor": 65536, "sharedMemPerMultiprocessor": 233472, "numSms": 132,
     "sharedMemPerBlockOptin": 232448},
]


def gap():
    """Host time between calls: mostly microseconds, now and then hours."""
    r = rng.random()
    if r < 0.02:
        return rng.uniform(3.0e9, 5.0e9)  # over an hour
    if r < 0.1:
        return rng.uniform(100, 5000)
    return rng.uniform(0.5, 20)


def one():
    events, corr = [], 1000
    ts = 1000.0
    streams = rng.sample([7, 13, 20, 24, 31], rng.randint(1, 4))
    busy = {s: 0.0 for s in streams}  # each stream's last end
    threads = [1, 2] if rng.random() < 0.3 else [1]
    records = []  # (corr, stream, ts)
    steps = rng.randint(1, 3)
    for step in range(steps):
        begin = ts
        for _ in range(rng.randint(1, 30)):
            ts += gap()
            tid = rng.choice(threads)
            corr += 1
            kind = rng.random()
            if kind < 0.6:
                s = rng.choice(streams)
                start = max(ts + rng.uniform(1, 10), busy[s])
                r = rng.random()
                dur = rng.uniform(0.5, 5) if r < 0.3 else rng.uniform(5, 500) if r < 0.95 \
                    else rng.uniform(1e3, 1e5)
                grid = [rng.choice([1, 8, 108, 132, 1024, 65536, 1 << 20, 1 << 24]), 1, 1]
                block = [rng.choice([32, 128, 256, 1024]), 1, 1]
                cat = rng.choice(["kernel", "kernel", "kernel", "gpu_memcpy", "gpu_memset"])
                name = {"kernel": "cudaLaunchKernel", "gpu_memcpy": "cudaMemcpyAsync",
                        "gpu_memset": "cudaMemsetAsync"}[cat]
                events.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1,
                               "tid": tid, "ts": ts, "dur": 3.0,
                               "args": {"correlation": corr}})
                args = {"device": 0, "stream": s, "correlation": corr}
                if cat == "kernel":
                    args.update({"grid": grid, "block": block,
                                 "registers per thread": rng.choice([16, 32, 64, 128]),
                                 "shared memory": rng.choice([0, 1024, 49152])})
                else:
                    args.update({"bytes": rng.choice([1 << 10, 1 << 20, 1 << 26])})
                events.append({"ph": "X", "cat": cat, "name": "op%d" % corr, "pid": 0, "tid": s,
                               "ts": start, "dur": dur, "args": args})
                busy[s] = start + dur
                ts += 3.0
            elif kind < 0.7:
                s = rng.choice(streams)
                events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord",
                               "pid": 1, "tid": tid, "ts": ts, "dur": 2.0,
                               "args": {"correlation": corr}})
                records.append((corr, s, ts))
                ts += 2.0
            elif kind < 0.8 and records:
                rc, rs, _ = rng.choice(records)
                s = rng.choice(streams)
                events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent",
                               "pid": 1, "tid": tid, "ts": ts, "dur": 1.0,
                               "args": {"correlation": corr}})
                events.append({"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event",
                               "pid": 0, "tid": s, "ts": ts + 1, "dur": 0,
                               "args": {"correlation": corr, "stream": s,
                                        "wait_on_stream": rs,
                                        "wait_on_cuda_event_record_corr_id": rc}})
                ts += 1.0
            elif kind < 0.95:
                name, sync = rng.choice([("cudaDeviceSynchronize", "Context Sync"),
                                         ("cudaStreamSynchronize", "Stream Sync"),
                                         ("cudaEventSynchronize", "Event Sync")])
                done = max(busy.values()) if busy else ts
                wait = max(1.0, done - ts) if rng.random() < 0.9 else rng.uniform(3.7e9, 5e9)
                args = {"correlation": corr}
                events.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1,
                               "tid": tid, "ts": ts, "dur": wait, "args": args})
                sargs = {"correlation": corr, "cuda_sync_kind": sync}
                if sync == "Stream Sync":
                    sargs["stream"] = rng.choice(streams)
                events.append({"ph": "X", "cat": "cuda_sync", "name": sync, "pid": 0,
                               "tid": sargs.get("stream", 7), "ts": ts, "dur": wait,
                               "args": sargs})
                ts += wait
            else:
                events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaFree", "pid": 1,
                               "tid": tid, "ts": ts, "dur": rng.uniform(1, 50),
                               "args": {"correlation": corr}})
                ts += 50
        ts += gap()
        events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d" % step,
                       "pid": 1, "tid": 1, "ts": begin, "dur": ts - begin, "args": {}})
    return {"schemaVersion": 1, "deviceProperties": [rng.choice(GPUS)], "traceEvents": events}


for i in range(count):
    with open(os.path.join(out, "t%03d.json" % i), "w") as f:
        json.dump(one(), f)
