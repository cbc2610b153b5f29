"""One recorded program written in both profilers' forms: a Kineto trace
(JSON) and an Nsight Systems export (SQLite, created here from SQL text
with the real schema's table and column names), so that a test can import
both and compare the programs.

Usage: two_forms.py OUT_FOLDER   (writes kineto.json and nsys.sqlite)

The program: two ProfilerStep ranges, each on three streams: a kernel on
stream 7, an event recorded after it, a stream wait for that event on
stream 8 and a kernel there, a copy from device to pinned memory on stream
8, a cudaStreamSynchronize of stream 8, a kernel on stream 9, an event
synchronised on, and a cudaDeviceSynchronize; the host works between the
calls; then a CUDA graph of two kernels, launched by one cudaGraphLaunch,
and a sync of its stream. Times are whole microseconds (nanoseconds in the
export).
"""
import json
import os
import sqlite3
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)

# The recording, in one form of our own: calls, GPU ops, syncs, records.
calls, ops, syncs, records, steps = [], [], [], [], []
corr = 100
t = 1000


def call(name, dur, **extra):
    global corr, t
    corr += 1
    calls.append(dict(name=name, ts=t, dur=dur, corr=corr, **extra))
    t += dur
    return corr


for step in (1, 2):
    begin = t
    t += 5
    c = call("cudaLaunchKernel", 4)
    ops.append(dict(kind="kernel", name="void gemm<float>(float*)", stream=7, ts=t + 2, dur=40,
                    corr=c, grid=(132, 1, 1), block=(256, 1, 1), regs=64, smem=1024))
    t += 3
    event = 11 + step
    rec = call("cudaEventRecord", 2)
    records.append(dict(event=event, stream=7, corr=rec))
    w = call("cudaStreamWaitEvent", 2)
    syncs.append(dict(kind="wait", stream=8, corr=w, event=event, ts=t))
    c = call("cudaLaunchKernel", 4)
    ops.append(dict(kind="kernel", name="void relu<float>(float*)", stream=8, ts=begin + 60,
                    dur=20, corr=c, grid=(64, 1, 1), block=(128, 1, 1), regs=16, smem=0))
    c = call("cudaMemcpyAsync", 5)
    ops.append(dict(kind="memcpy", name="Memcpy DtoH (Device -> Pinned)", stream=8,
                    ts=begin + 82, dur=15, corr=c, bytes=1 << 20))
    s = call("cudaStreamSynchronize", begin + 100 - t)
    syncs.append(dict(kind="stream", stream=8, corr=s, ts=t))
    t += 30  # the host's own work
    c = call("cudaLaunchKernel", 4)
    ops.append(dict(kind="kernel", name="void softmax<float>(float*)", stream=9, ts=t + 2,
                    dur=25, corr=c, grid=(8, 1, 1), block=(1024, 1, 1), regs=32, smem=4096))
    rec = call("cudaEventRecord", 2)
    records.append(dict(event=event + 10, stream=9, corr=rec))
    s = call("cudaEventSynchronize", ops[-1]["ts"] + 25 - t + 1)
    syncs.append(dict(kind="event", stream=9, corr=s, event=event + 10, ts=t))
    s = call("cudaDeviceSynchronize", 3)
    syncs.append(dict(kind="device", stream=-1, corr=s, ts=t))
    t += 10
    # A CUDA graph of two kernels, launched by one call (one correlation).
    c = call("cudaGraphLaunch", 8)
    for k, name in enumerate(("void graph_a<float>(float*)", "void graph_b<float>(float*)")):
        ops.append(dict(kind="kernel", name=name, stream=7, ts=t + 2 + 12 * k, dur=10, corr=c,
                        grid=(32, 1, 1), block=(256, 1, 1), regs=24, smem=0, node=500 + k))
    s = call("cudaStreamSynchronize", 25)
    syncs.append(dict(kind="stream", stream=7, corr=s, ts=t))
    t += 10
    steps.append(dict(number=step, ts=begin, dur=t - begin))

# ---- Kineto -----------------------------------------------------------------
record_of = {r["corr"]: r for r in records}
events = []
for s in steps:
    events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{s['number']}",
                   "pid": 1, "tid": 1, "ts": s["ts"], "dur": s["dur"], "args": {}})
    # The same span as a range of the program's own name (a record_function).
    events.append({"ph": "X", "cat": "user_annotation", "name": "iteration",
                   "pid": 1, "tid": 1, "ts": s["ts"], "dur": s["dur"], "args": {}})
for c in calls:
    events.append({"ph": "X", "cat": "cuda_runtime", "name": c["name"], "pid": 1, "tid": 1,
                   "ts": c["ts"], "dur": c["dur"], "args": {"correlation": c["corr"]}})
for o in ops:
    args = {"stream": o["stream"], "correlation": o["corr"], "device": 0}
    if o["kind"] == "kernel":
        args.update({"grid": list(o["grid"]), "block": list(o["block"]),
                     "registers per thread": o["regs"], "shared memory": o["smem"]})
        cat = "kernel"
    else:
        args["bytes"] = o["bytes"]
        cat = "gpu_memcpy"
    events.append({"ph": "X", "cat": cat, "name": o["name"], "pid": 0, "tid": o["stream"],
                   "ts": o["ts"], "dur": o["dur"], "args": args})
kinds = {"wait": "Stream Wait Event", "stream": "Stream Sync", "event": "Event Sync",
         "device": "Context Sync"}
for s in syncs:
    args = {"correlation": s["corr"], "cuda_sync_kind": kinds[s["kind"]],
            "stream": s["stream"]}
    if s["kind"] in ("wait", "event"):
        rec = [r for r in records if r["event"] == s["event"]][-1]
        args.update({"wait_on_stream": rec["stream"],
                     "wait_on_cuda_event_record_corr_id": rec["corr"]})
    events.append({"ph": "X", "cat": "cuda_sync", "name": kinds[s["kind"]], "pid": 0,
                   "tid": max(s["stream"], 0), "ts": s["ts"], "dur": 0, "args": args})
device = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "numSms": 132, "computeMajor": 9,
          "computeMinor": 0, "maxThreadsPerMultiprocessor": 2048, "maxThreadsPerBlock": 1024,
          "sharedMemPerMultiprocessor": 233472, "sharedMemPerBlockOptin": 232448,
          "regsPerMultiprocessor": 65536}
with open(os.path.join(out, "kineto.json"), "w") as f:
    json.dump({"deviceProperties": [device], "traceEvents": events}, f)

# ---- Nsight Systems ------------------------------------------------------------
# The real schema's tables and columns, those pipec reads (nsys-schema.sql).
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "nsys-schema.sql")) as f:
    SCHEMA = f.read()
ns = 1000
versions = {"cudaLaunchKernel": "_v7000", "cudaMemcpyAsync": "_v3020"}
types = {"event": 1, "wait": 2, "stream": 3, "device": 4}


def export(name, processes):
    """An export of the program as recorded by each of `processes` (each its
    own GPU; their correlation and event ids are the same numbers, each
    process's own)."""
    path = os.path.join(out, name)
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path)
    db.executescript(SCHEMA)
    strings = {}

    def sid(text):
        if text not in strings:
            strings[text] = len(strings) + 1
            db.execute("INSERT INTO StringIds VALUES (?, ?)", (strings[text], text))
        return strings[text]

    meta = [("EXPORT_PRODUCT_NAME", "NVIDIA Nsight Systems"),
            ("EXPORT_SCHEMA_VERSION", "3.13.2"), ("EXPORT_SCHEMA_VERSION_MAJOR", "3")]
    db.executemany("INSERT INTO META_DATA_EXPORT VALUES (?, ?)", meta)
    for gpu, pid in enumerate(processes):
        # nsys's serialized ids: a process's globalPid has its thread bits
        # (the low 24) zero; a thread's globalTid is its process's plus its
        # thread id.
        gpid = pid << 24
        gtid = gpid + 77
        db.execute("INSERT INTO TARGET_INFO_GPU VALUES (1, ?, ?, 132, 49152, 232448, 233472, "
                   "65536, 32, 64, 1024, 9, 0)", (gpu, device["name"]))
        for c in calls:
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, 1, ?, ?, ?, 0, NULL)",
                       (c["ts"] * ns, (c["ts"] + c["dur"]) * ns, gtid, c["corr"],
                        sid(c["name"] + versions.get(c["name"], "_v3020"))))
        for o in ops:
            if o["kind"] == "kernel":
                db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?, ?, ?, 1, ?, ?, ?, ?, "
                           "?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?)",
                           (o["ts"] * ns, (o["ts"] + o["dur"]) * ns, gpu, o["stream"], o["corr"],
                            gpid, sid(o["name"]), sid(o["name"].split("<")[0].split()[-1]),
                            o["regs"], *o["grid"], *o["block"], o["smem"], o.get("node")))
            else:
                db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES (?, ?, ?, 1, ?, ?, ?, ?, "
                           "2, 2, 1, NULL)",
                           (o["ts"] * ns, (o["ts"] + o["dur"]) * ns, gpu, o["stream"], o["corr"],
                            gpid, o["bytes"]))
        for s in syncs:
            event = s.get("event", 0xFFFFFFFF)
            stream = s["stream"] if s["stream"] >= 0 else 0xFFFFFFFF
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_SYNCHRONIZATION VALUES "
                       "(?, ?, ?, 1, ?, ?, ?, ?, ?)",
                       (s["ts"] * ns, s["ts"] * ns, gpu, stream, s["corr"], gpid,
                        types[s["kind"]], event))
        for r in records:
            db.execute("INSERT INTO CUPTI_ACTIVITY_KIND_CUDA_EVENT VALUES (?, 1, ?, ?, ?, ?)",
                       (gpu, r["stream"], r["corr"], gpid, r["event"]))
        for s in steps:
            db.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, NULL, NULL, NULL, ?, ?, NULL, "
                       "NULL, 0)",
                       (s["ts"] * ns, (s["ts"] + s["dur"]) * ns, f"ProfilerStep#{s['number']}",
                        gtid))
            # The same span as an NVTX range of the program's own name, its
            # text a registered string (textId) as nvtxDomainRegisterString
            # writes it.
            db.execute("INSERT INTO NVTX_EVENTS VALUES (?, ?, 59, NULL, NULL, NULL, NULL, ?, "
                       "NULL, ?, 0)",
                       (s["ts"] * ns, (s["ts"] + s["dur"]) * ns, gtid, sid("iteration")))
    db.commit()
    db.close()


export("nsys.sqlite", [5])
# Two processes (an MPI program of two ranks recorded by one nsys).
export("nsys-2proc.sqlite", [5, 6])
