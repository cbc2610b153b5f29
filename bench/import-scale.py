#!/usr/bin/env python3
"""Import speed: a synthetic Kineto trace of N GPU ops (kernels and copies
on 4 streams, a stream wait every 8 ops, one profiler step), imported to a
.pipe file and with --report; then the same trace as each of R ranks (the
import of several ranks, which checks and lays out its file with the front
end). Prints Markdown tables.

  bench/import-scale.py [build dir]        (default: build)
"""
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build")
pipec = os.path.join(build, "pipec")


def trace(n):
    events, corr, t = [], 0, 0.0
    events.append({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1",
                   "ts": 0, "dur": 10.0 * n + 100, "args": {}})
    last_record = {}
    for i in range(n):
        stream = 7 + i % 4
        corr += 1
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel",
                       "ts": t, "dur": 3.0, "args": {"correlation": corr}})
        gpu = {"ph": "X", "ts": t + 5, "dur": 4.0 + i % 5, "pid": 0, "tid": stream,
               "args": {"stream": stream, "correlation": corr, "grid": [64, 1, 1],
                        "block": [256, 1, 1], "registers per thread": 32}}
        if i % 10 == 9:
            gpu.update(cat="gpu_memcpy", name="Memcpy HtoD (Pinned -> Device)")
            gpu["args"]["bytes"] = 1 << 20
        else:
            gpu.update(cat="kernel", name=f"void ns::kernel_{i % 50}<float>(float*)")
        events.append(gpu)
        t += 4.0
        if i % 8 == 7:
            corr += 1
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaEventRecord",
                           "ts": t, "dur": 1.0, "args": {"correlation": corr}})
            record = corr
            corr += 1
            events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamWaitEvent",
                           "ts": t + 1, "dur": 1.0, "args": {"correlation": corr}})
            events.append({"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event",
                           "ts": t + 2, "dur": 0, "pid": 0, "tid": 7 + (i + 1) % 4,
                           "args": {"cuda_sync_kind": "Stream Wait Event",
                                    "stream": 7 + (i + 1) % 4, "correlation": corr,
                                    "wait_on_stream": stream,
                                    "wait_on_cuda_event_record_corr_id": record}})
            t += 2
    return {"deviceProperties": [{"name": "NVIDIA A100-SXM4-80GB", "numSms": 108,
                                  "computeMajor": 8, "computeMinor": 0}],
            "traceEvents": events}


def measure(args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.monotonic()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - start, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


work = tempfile.mkdtemp()
print("| GPU ops | trace MB | import s | import --report s | target |")
print("|---|---|---|---|---|")
for n in (2000, 20000):
    path = os.path.join(work, f"t{n}.json")
    json.dump(trace(n), open(path, "w"))
    size = os.path.getsize(path) / 1e6
    plain, _ = measure([pipec, "import", path, "-o", os.path.join(work, "out.pipe")])
    report, _ = measure([pipec, "import", path, "--report"])
    print(f"| {n} | {size:.1f} | {plain:.2f} | {report:.2f} | {'< 2 s' if n == 20000 else ''} |")

print()
print("| ranks x GPU ops | import s | peak MiB | import --report s |")
print("|---|---|---|---|")
for ranks, n in ((4, 20000), (8, 100000)):
    path = os.path.join(work, f"t{n}.json")
    if not os.path.exists(path):
        json.dump(trace(n), open(path, "w"))
    # Peak memory of this child alone: /usr/bin/time when there is one.
    args = [pipec, "import"] + [path] * ranks
    start = time.monotonic()
    timed = subprocess.run(["/usr/bin/time", "-f", "%M"] + args + ["-o", os.path.join(work, "r.pipe")],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    plain = time.monotonic() - start
    peak = int(timed.stderr.strip().splitlines()[-1]) / 1024
    report, _ = measure(args + ["--report"])
    print(f"| {ranks} x {n} | {plain:.2f} | {peak:.0f} | {report:.2f} |")
