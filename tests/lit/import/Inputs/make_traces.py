"""Writes the small Kineto traces the import tests read (run once; the
outputs are committed). Shapes follow what PyTorch 2.x writes: GPU ops with
args.stream/correlation/grid/block, cuda_runtime launch calls, cuda_sync
events ("Stream Wait Event" with wait_on_stream and
wait_on_cuda_event_record_corr_id), ProfilerStep#N annotations, and
deviceProperties."""
import gzip
import json
import os
import sys

out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
A100 = {"id": 0, "name": "NVIDIA A100-SXM4-80GB", "totalGlobalMem": 85097971712,
        "computeMajor": 8, "computeMinor": 0, "maxThreadsPerBlock": 1024,
        "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
        "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
        "sharedMemPerMultiprocessor": 167936, "numSms": 108,
        "sharedMemPerBlockOptin": 166912}


class Builder:
    def __init__(self):
        self.events, self.corr = [], 100

    def runtime(self, name, ts, dur=4.0):
        self.corr += 1
        self.events.append({"ph": "X", "cat": "cuda_runtime", "name": name, "pid": 1,
                            "tid": 1, "ts": ts, "dur": dur,
                            "args": {"correlation": self.corr, "cbid": 211}})
        return self.corr

    def kernel(self, name, stream, launch_ts, ts, dur, grid=(108, 1, 1), block=(256, 1, 1),
               regs=32, smem=0):
        c = self.runtime("cudaLaunchKernel", launch_ts)
        self.events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0,
                            "tid": stream, "ts": ts, "dur": dur,
                            "args": {"queued": 0, "device": 0, "context": 1,
                                     "stream": stream, "correlation": c,
                                     "registers per thread": regs, "shared memory": smem,
                                     "grid": list(grid), "block": list(block)}})
        return c

    def memcpy(self, kind, stream, launch_ts, ts, dur, nbytes):
        c = self.runtime("cudaMemcpyAsync", launch_ts)
        names = {"h2d": "Memcpy HtoD (Pinned -> Device)", "d2h": "Memcpy DtoH (Device -> Pinned)",
                 "d2d": "Memcpy DtoD (Device -> Device)"}
        self.events.append({"ph": "X", "cat": "gpu_memcpy", "name": names[kind], "pid": 0,
                            "tid": stream, "ts": ts, "dur": dur,
                            "args": {"device": 0, "context": 1, "stream": stream,
                                     "correlation": c, "bytes": nbytes,
                                     "memory bandwidth (GB/s)": nbytes / dur / 1e3}})
        return c

    def memset(self, stream, launch_ts, ts, dur, nbytes):
        c = self.runtime("cudaMemsetAsync", launch_ts)
        self.events.append({"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)",
                            "pid": 0, "tid": stream, "ts": ts, "dur": dur,
                            "args": {"device": 0, "context": 1, "stream": stream,
                                     "correlation": c, "bytes": nbytes}})

    def record(self, ts):
        return self.runtime("cudaEventRecord", ts, 1.0)

    def wait(self, stream, on_stream, record_corr, ts):
        c = self.runtime("cudaStreamWaitEvent", ts, 1.0)
        self.events.append({"ph": "X", "cat": "cuda_sync", "name": "Stream Wait Event",
                            "pid": 0, "tid": stream, "ts": ts + 2, "dur": 0,
                            "args": {"cuda_sync_kind": "Stream Wait Event", "stream": stream,
                                     "correlation": c, "device": 0, "context": 1,
                                     "wait_on_stream": on_stream,
                                     "wait_on_cuda_event_record_corr_id": record_corr,
                                     "wait_on_cuda_event_id": 1}})

    def sync(self, kind, stream, ts, dur):
        name = {"stream": "cudaStreamSynchronize", "context": "cudaDeviceSynchronize"}[kind]
        c = self.runtime(name, ts, dur)
        label = {"stream": "Stream Sync", "context": "Context Sync"}[kind]
        self.events.append({"ph": "X", "cat": "cuda_sync", "name": label, "pid": 0,
                            "tid": stream, "ts": ts + dur - 1, "dur": 1,
                            "args": {"cuda_sync_kind": label, "stream": stream,
                                     "correlation": c, "device": 0, "context": 1}})

    def step(self, n, ts, dur):
        self.events.append({"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{n}",
                            "pid": 1, "tid": 1, "ts": ts, "dur": dur, "args": {}})

    def write(self, path, compress=False):
        doc = {"schemaVersion": 1, "deviceProperties": [A100], "traceEvents": self.events}
        data = json.dumps(doc, indent=1).encode()
        if compress:
            with gzip.open(path, "wb") as f:
                f.write(data)
        else:
            open(path, "wb").write(data)


# Two streams: an upload on stream 13 waited for by stream 7, a side
# branch on stream 21 joined back into 7. Two profiler steps; the second
# is the default.
b = Builder()
for step, base in ((1, 1000.0), (2, 2000.0)):
    b.step(step, base, 900)
    up = b.memcpy("h2d", 13, base + 10, base + 20, 40.0, 2_000_000)
    rec = b.record(base + 15)
    b.wait(7, 13, rec, base + 16)
    k1 = b.kernel("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>(int, at::native::FillFunctor<float>)",
                  7, base + 20, base + 62, 30.0)
    rec2 = b.record(base + 25)
    b.wait(21, 7, rec2, base + 26)
    b.kernel("ampere_sgemm_128x64_tn", 21, base + 30, base + 95, 120.0, grid=(216, 1, 1),
             block=(128, 1, 1), regs=128, smem=32768)
    b.kernel("void at::native::vectorized_elementwise_kernel<4, at::native::TanhFunctor<float>>(int, at::native::TanhFunctor<float>)",
             7, base + 35, base + 95, 25.0)
    rec3 = b.record(base + 40)
    b.wait(7, 21, rec3, base + 41)
    b.kernel("void at::native::reduce_kernel<512, 1>(at::native::ReduceOp<float>)", 7,
             base + 45, base + 218, 12.0, grid=(1, 1, 1), block=(512, 1, 1))
    b.memcpy("d2h", 7, base + 50, base + 232, 3.0, 4)
b.write(os.path.join(out, "streams.json"))
b.write(os.path.join(out, "streams.json.gz"), compress=True)

# Host syncs: a stream sync and a device sync order what follows; a memset.
h = Builder()
h.memset(7, 10, 20, 5.0, 1 << 20)
h.kernel("first_kernel", 7, 15, 26, 50.0)
h.sync("stream", 7, 20, 60)
h.kernel("after_stream_sync", 9, 82, 90, 10.0)
h.kernel("independent_kernel", 11, 84, 92, 10.0)
h.sync("context", 7, 90, 20)
h.kernel("after_device_sync", 11, 112, 120, 5.0)
h.write(os.path.join(out, "syncs.json"))

# Not a trace, and a trace without GPU work.
open(os.path.join(out, "not-json.json"), "w").write("ProfilerStep#1 kernel 10us\n")
json.dump({"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 1,
                            "dur": 2}]}, open(os.path.join(out, "no-gpu.json"), "w"))
# A ROCm trace.
r = Builder()
r.kernel("hip_kernel", 0, 1, 2, 3.0)
r.events[0]["name"] = "hipLaunchKernel"
r.write(os.path.join(out, "rocm.json"))
# A truncated gzip.
data = gzip.compress(json.dumps({"traceEvents": b.events}).encode())
open(os.path.join(out, "truncated.json.gz"), "wb").write(data[: len(data) // 2])
