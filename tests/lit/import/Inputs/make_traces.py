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
               regs=32, smem=0, call_dur=4.0):
        c = self.runtime("cudaLaunchKernel", launch_ts, call_dur)
        self.launched(c, name, stream, ts, dur, grid, block, regs, smem)
        return c

    def launched(self, corr, name, stream, ts, dur, grid=(108, 1, 1), block=(256, 1, 1),
                 regs=32, smem=0):
        """A kernel the call `corr` launched (a graph launch launches several)."""
        self.events.append({"ph": "X", "cat": "kernel", "name": name, "pid": 0,
                            "tid": stream, "ts": ts, "dur": dur,
                            "args": {"queued": 0, "device": 0, "context": 1,
                                     "stream": stream, "correlation": corr,
                                     "registers per thread": regs, "shared memory": smem,
                                     "grid": list(grid), "block": list(block)}})

    def memcpy(self, kind, stream, launch_ts, ts, dur, nbytes, call_dur=4.0):
        c = self.runtime("cudaMemcpyAsync", launch_ts, call_dur)
        names = {"h2d": "Memcpy HtoD (Pinned -> Device)", "d2h": "Memcpy DtoH (Device -> Pinned)",
                 "d2d": "Memcpy DtoD (Device -> Device)",
                 "d2h pageable": "Memcpy DtoH (Device -> Pageable)",
                 "h2d pageable": "Memcpy HtoD (Pageable -> Device)"}
        self.events.append({"ph": "X", "cat": "gpu_memcpy", "name": names[kind], "pid": 0,
                            "tid": stream, "ts": ts, "dur": dur,
                            "args": {"device": 0, "context": 1, "stream": stream,
                                     "correlation": c, "bytes": nbytes,
                                     "memory bandwidth (GB/s)": nbytes / dur / 1e3}})
        if kind == "d2h pageable":
            self.events[-1]["name"] = names[kind]
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


def main():
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

    # A host-bound step on one stream, recorded without sync events: dispatch
    # before each launch, a copy to pageable memory whose call returns once it
    # is done (.item()), 2 ms of host work with no runtime call, then a stream
    # sync whose stream the trace does not name.
    g = Builder()
    g.kernel("first", 7, 10, 20, 10.0)
    g.kernel("second", 7, 44, 50, 10.0)
    g.memcpy("d2h pageable", 7, 60, 65, 2.0, 4, call_dur=20.0)
    g.kernel("after_host_work", 7, 2085, 2090, 10.0)
    g.runtime("cudaStreamSynchronize", 2100, 5.0)
    g.kernel("after_sync", 7, 2120, 2126, 10.0)
    g.write(os.path.join(out, "host.json"))

    # Stream waits recorded without sync events: the cudaStreamWaitEvent call
    # orders each stream's next op behind the last op before it on every other
    # stream that had ended when that op started (one still running is not
    # what it waited for).
    w = Builder()
    w.kernel("producer", 1, 10, 20, 100.0)
    w.kernel("long_side", 3, 15, 25, 300.0)
    w.runtime("cudaEventRecord", 20, 1.0)
    w.runtime("cudaStreamWaitEvent", 22, 1.0)
    w.kernel("consumer", 2, 25, 122, 50.0)
    w.kernel("side_after", 3, 30, 325, 10.0)
    w.write(os.path.join(out, "nosync.json"))

    # The previous step's backlog: the host runs ahead, so step 2's kernels
    # queue behind step 1's, which still run for 300 us after step 2's first
    # op starts on the other stream.
    p = Builder()
    p.step(1, 0, 100)
    p.kernel("step1_long", 1, 10, 20, 500.0)
    p.step(2, 100, 100)
    p.kernel("step2_other", 2, 110, 220, 50.0)
    p.kernel("step2_queued", 1, 120, 520, 100.0)
    p.write(os.path.join(out, "backlog.json"))

    # A small training step as PyTorch runs it, recorded with sync events: the
    # forward's kernels, each after 35 us of Python and dispatch; loss.item()
    # (a copy to pageable memory that returns once done); the backward's; the
    # optimizer's. The GPU runs each kernel in a few microseconds and waits for
    # the host most of the step.
    s = Builder()
    s.step(7, 0, 2000)
    t = 10.0
    gpu_free = 0.0

    def launch(name, dur, dispatch):
        nonlocal t, gpu_free
        call = t + dispatch
        start = max(call + 5, gpu_free + 1)
        s.kernel(name, 7, call, start, dur)
        gpu_free = start + dur
        t = call + 4

    for i in range(12):
        launch(f"void at::native::forward_kernel_{i}<float>(float*)", 8.0, 35.0)
    copy_call = t + 20
    copy_start = max(copy_call + 6, gpu_free + 1)
    s.memcpy("d2h pageable", 7, copy_call, copy_start, 2.0, 4,
             call_dur=copy_start + 2.0 + 8 - copy_call)
    t = copy_start + 10.0
    for i in range(12):
        launch(f"void at::native::backward_kernel_{i}<float>(float*)", 15.0, 30.0)
    for i in range(6):
        launch(f"void at::native::adam_kernel_{i}<float>(float*)", 5.0, 25.0)
    s.write(os.path.join(out, "training.json"))

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


if __name__ == "__main__":
    main()
