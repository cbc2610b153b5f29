"""Writes the traces of a data-parallel step on N ranks, one file per rank
(as the PyTorch profiler writes them), for the import of several ranks.

  make_ranks.py DIR N [--extra-collective] [--apart] [--sendrecv]

Each rank, recorded with sync events: forward kernels on stream 7, then
its gradients' all-reduce (an NCCL kernel on stream 20, after a stream wait
on 7), the rest of the backward on 7 meanwhile, a second all-gather, the
optimizer on 7 after a wait on 20, and a stream sync. The ranks' hosts
differ (rank r spends 10 + 15r us of dispatch before each launch, so later
ranks reach each collective later), and an NCCL kernel ends on every rank
when the last rank's has started and the work is done: the earlier ranks'
kernels last longer, waiting inside it. --extra-collective gives the last
rank one more all-reduce the others do not have; --apart moves rank 1's
clock a second ahead (traces not recorded on one clock); --sendrecv gives
every rank a point-to-point NCCL SendRecv kernel after the all-gather (a
pipeline's send, its peer not in the trace). The matched collectives' kernels
run 32 blocks, NCCL's channels. Prints each rank's file.
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_traces import Builder  # noqa: E402

out, ranks = sys.argv[1], int(sys.argv[2])
extra = "--extra-collective" in sys.argv[3:]
apart = "--apart" in sys.argv[3:]
sendrecv = "--sendrecv" in sys.argv[3:]
NCCL = {"allreduce": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
        "allgather": "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)"}
WORK = {"allreduce": 300.0, "allgather": 120.0}


class Rank:
    def __init__(self, r):
        self.b = Builder()
        self.dispatch = 10.0 + 15.0 * r
        self.host = 1000.0
        self.free = {7: 0.0, 20: 0.0}
        self.b.step(3, 990.0, 5000.0)

    def kernel(self, name, stream, dur, after=0.0):
        call = self.host + self.dispatch
        start = max(call + 2.0, self.free[stream], after)
        self.b.kernel(name, stream, call, start, dur)
        self.free[stream] = start + dur
        self.host = call + 4.0
        return start

    def wait(self, stream, on):
        rec = self.b.record(self.host)
        self.b.wait(stream, on, rec, self.host + 1.0)
        self.host += 3.0
        return self.free[on]


rs = [Rank(r) for r in range(ranks)]


def collective(kind, late_stream_work):
    """Every rank launches its part; all end together."""
    starts = []
    for rk in rs:
        ready = rk.wait(20, 7)
        call = rk.host + rk.dispatch
        starts.append(max(call + 2.0, rk.free[20], ready))
        rk.host = call + 4.0
        rk.call = call
    end = max(starts) + WORK[kind]
    for rk, start in zip(rs, starts):
        rk.b.kernel(NCCL[kind], 20, rk.call, start, end - start, grid=(32, 1, 1))
        rk.free[20] = end
        for name, dur in late_stream_work:
            rk.kernel(name, 7, dur)


for rk in rs:
    for i in range(4):
        rk.kernel(f"void at::native::forward_kernel_{i}<float>(float*)", 7, 40.0)
collective("allreduce", [("void at::native::backward_kernel_0<float>(float*)", 150.0),
                         ("void at::native::backward_kernel_1<float>(float*)", 150.0)])
collective("allgather", [("void at::native::backward_kernel_2<float>(float*)", 60.0)])
if sendrecv:
    for rk in rs:
        ready = rk.wait(20, 7)
        rk.kernel("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", 20, 80.0,
                  after=ready)
if extra:
    rk = rs[-1]
    ready = rk.wait(20, 7)
    rk.kernel(NCCL["allreduce"], 20, WORK["allreduce"], after=ready)
for rk in rs:
    ready = rk.wait(7, 20)
    rk.kernel("void at::native::adam_kernel<float>(float*)", 7, 50.0, after=ready)
    done = rk.free[7]
    call = rk.host + 5.0
    rk.b.sync("stream", 7, call, max(done + 3.0 - call, 2.0))

for r, rk in enumerate(rs):
    if apart and r == 1:
        for e in rk.b.events:
            e["ts"] += 1e6
    path = os.path.join(out, f"rank{r}.json")
    rk.b.write(path)
    print(path)
