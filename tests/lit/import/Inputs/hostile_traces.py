"""Writes traces that once ended pipec import in "internal error", took
minutes, or were read wrongly (issue 26), into the folder given. Each is
small: made here, not committed."""
import copy
import gzip
import json
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
A100 = {"id": 0, "name": "NVIDIA A100-SXM4-80GB", "computeMajor": 8, "computeMinor": 0,
        "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
        "regsPerMultiprocessor": 65536, "sharedMemPerMultiprocessor": 167936,
        "numSms": 108, "sharedMemPerBlockOptin": 166912}


def kernel(name, stream, ts, dur, corr, grid=(108, 1, 1), block=(256, 1, 1), device=0):
    ev = {"ph": "X", "cat": "kernel", "name": name, "pid": device, "tid": stream, "ts": ts,
          "args": {"device": device, "stream": stream, "correlation": corr,
                   "grid": list(grid), "block": list(block)}}
    if dur is not None:
        ev["dur"] = dur
    return ev


def launch(ts, corr):
    return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
            "ts": ts, "dur": 2, "args": {"correlation": corr}}


def trace(events, devices=(A100,), **extra):
    t = {"schemaVersion": 1, "deviceProperties": list(devices), "traceEvents": events}
    t.update(extra)
    return t


def ops(*specs):
    """(name, stream, dur) per op, one after another."""
    events, ts = [], 1000.0
    for i, (name, stream, dur) in enumerate(specs):
        events.append(launch(ts - 5, 500 + i))
        events.append(kernel(name, stream, ts, dur, 500 + i))
        ts += 100
    return events


def write(name, value, text=None):
    with open(os.path.join(out, name), "w") as f:
        f.write(text if text is not None else json.dumps(value))


write("negative-stream.json", trace(ops(("k", -1, 10), ("k", 7, 10))))
step = {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#-3", "pid": 1, "tid": 1,
        "ts": 0, "dur": 100000}
write("negative-step.json", trace([step] + ops(("k", 7, 10))))
write("infinite-dur.json", None, json.dumps(trace(ops(("k", 7, 10)))).replace('"dur": 10', '"dur": 1e400', 1))
write("long-dur.json", trace(ops(("k", 7, 4000e6))))
write("negative-dur.json", trace(ops(("k", 7, -5))))
write("string-dur.json", trace(ops(("k", 7, "fast"))))
write("missing-dur.json", trace(ops(("k", 7, None))))
write("names.json", trace(ops(("foo", 7, 10), ("foo", 7, 10), ("foo_2", 7, 10))))
write("streams-257.json", trace(ops(*[("k", s, 10) for s in range(257)])))
small = dict(A100, maxThreadsPerMultiprocessor=512)
write("block-too-big.json", trace([launch(995, 1), kernel("k", 7, 1000, 10, 1, block=(1024, 1, 1))],
                                  devices=[small]))
far = ops(("k", 7, 10), ("k", 7, 10))
far[3]["ts"] = 1e300
write("far-ts.json", trace(far))
# A time in nanoseconds where microseconds belong (2026 since the epoch).
nanos = ops(("k", 7, 10), ("k", 7, 10))
nanos[3]["ts"] = 1.77e18
write("nanos-ts.json", trace(nanos))
# Two ops 4,000 s apart: a step longer than a .pipe holds.
span = ops(("k", 7, 10), ("k", 7, 10))
span[3]["ts"] = 1000.0 + 4.0e9
write("far-span.json", trace(span))
write("huge-grid.json", trace([launch(995, 1), kernel("k", 7, 1000, 10, 1, grid=(2**40, 2**40, 2**40))]))
# A nested "traceEvents" (distributedInfo) before the real one: not the trace's.
write("nested.json", trace(ops(("real", 7, 10)),
                           distributedInfo={"traceEvents": [kernel("decoy", 3, 5, 5, 1)]}))
# Two GPUs, the H100 listed second and doing the work.
h100 = dict(A100, id=1, name="NVIDIA H100 80GB HBM3", computeMajor=9, numSms=132)
write("two-gpus.json", trace([launch(995, 1), kernel("k", 7, 1000, 10, 1, device=1),
                              launch(1095, 2), kernel("k", 7, 1100, 10, 2, device=1),
                              launch(1195, 3), kernel("k", 8, 1200, 10, 3, device=0)],
                             devices=[A100, h100]))
# Escape sequences in the device's name: title set, screen cleared.
write("escapes.json", trace(ops(("k", 7, 10)),
                            devices=[dict(A100, name="NVIDIA\u001b]0;owned\u0007\u001b[2J A100")]))
# A stream id that is no integer.
write("fraction-stream.json", trace([launch(995, 1), kernel("k", 7.5, 1000, 10, 1)]))
# Stream ids past int64: every reader saturates them, so two would share.
write("int64-stream.json", trace([launch(995, 1), kernel("k", 2**63, 1000, 10, 1),
                                  launch(1005, 2), kernel("k", 2**63 + 1, 1010, 10, 2)]))
# A duration no stage may take, far past it.
write("huge-dur.json", trace([launch(995, 1), kernel("k", 7, 1000, 1e300, 1)]))
# An event larger than pipec reads (a gzip bomb's name, small here).
write("huge-event.json", trace([launch(995, 1), kernel("A" * (17 << 20), 7, 1000, 10, 1)]))
# 12,000 context syncs over 256 streams, each after one op.
events, ts, corr = [], 1000.0, 1000
for i in range(12000):
    corr += 1
    events.append(launch(ts, corr))
    events.append(kernel("k", i % 256, ts + 3, 1, corr))
    corr += 1
    events.append({"ph": "X", "cat": "cuda_sync", "name": "Context Sync", "pid": 1, "tid": 1,
                   "ts": ts + 5, "dur": 1, "args": {"correlation": corr,
                                                     "cuda_sync_kind": "Context Sync"}})
    events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize",
                   "pid": 1, "tid": 1, "ts": ts + 5, "dur": 1, "args": {"correlation": corr}})
    ts += 10
with gzip.open(os.path.join(out, "context-syncs.json.gz"), "wt") as f:
    json.dump(trace(events), f)

# A gzip bomb of small events: 64 MiB of one kernel record repeated, from
# some 200 KB.
with gzip.open(os.path.join(out, "events-bomb.json.gz"), "wb", compresslevel=9) as f:
    f.write(b'{"traceEvents":[')
    one = json.dumps(kernel("k", 7, 1000.0, 1.0, 1)).encode() + b","
    f.write(one * ((64 << 20) // len(one)))
    f.write(json.dumps(kernel("k", 7, 1000.0, 1.0, 1)).encode() + b"]}")

# A gzip bomb of white space: 66 MiB from some 65 KB, over the inflation
# a trace may have (it costs seconds of CPU before a byte is parsed).
with gzip.open(os.path.join(out, "spaces.json.gz"), "wb", compresslevel=9) as f:
    f.write(b'{"traceEvents":[')
    for _ in range(66):
        f.write(b" " * (1 << 20))
    f.write(b"]}")

# Text encodings: a UTF-8 byte-order mark (read past), UTF-16 and UTF-32
# (named), an empty file.
small_trace = json.dumps(trace(ops(("k", 7, 10))))
with open(os.path.join(out, "bom.json"), "wb") as f:
    f.write(b"\xef\xbb\xbf" + small_trace.encode())
with open(os.path.join(out, "utf16.json"), "wb") as f:
    f.write(small_trace.encode("utf-16"))
with open(os.path.join(out, "utf16le.json"), "wb") as f:
    f.write(small_trace.encode("utf-16-le"))
with open(os.path.join(out, "utf32.json"), "wb") as f:
    f.write(small_trace.encode("utf-32"))
open(os.path.join(out, "empty.json"), "w").close()
# A key of 5,000 bytes at the top level: no trace has one.
write("long-key.json", None, '{"' + "k" * 5000 + '": 1, "traceEvents": []}')

# The ranks of a job merged into one file: two processes' calls, each
# launching on its own GPU; and one process driving two GPUs.
merged = ops(("k", 7, 10), ("k", 7, 10))
for e in ops(("k", 7, 10), ("k", 7, 10)):
    e = copy.deepcopy(e)
    e["args"]["correlation"] += 1000
    if e["cat"] == "kernel":
        e["args"]["device"] = 1
        e["pid"] = 1
    else:
        e["pid"] = 2
    merged.append(e)
write("merged-ranks.json", trace(merged))
two = ops(("k", 7, 10), ("k", 7, 10), ("k", 7, 10))
two[-1]["args"]["device"] = 1
write("two-gpus-one-process.json", trace(two))
