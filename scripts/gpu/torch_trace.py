"""Records a PyTorch profiler trace (Kineto's Chrome trace JSON) of a small
multi-stream program: uploads on a side stream, matmuls on two streams joined
by events, a download, over three profiler steps. Test data for `pipec
import`, and for measuring what its model of a recorded step predicts:

    python3 torch_trace.py OUT.json                 the step run eagerly
    python3 torch_trace.py --mode=graph OUT.json    the same GPU work captured
                                                    once with torch.cuda.graph
                                                    and replayed each step (the
                                                    download stays eager)
    CUDA_DEVICE_MAX_CONNECTIONS=1 python3 torch_trace.py OUT.json
                                                    eagerly, every stream on one
                                                    hardware queue

The three record one program three ways: the eager step against its graph
replay is the graph verdict `pipec import --report` predicts, and against one
hardware queue the cost of false serialisation the model charges.
"""
import json
import os
import sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
mode = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--mode=")), "eager")
if len(args) != 1 or mode not in ("eager", "graph"):
    sys.exit(__doc__)

import torch  # noqa: E402 (after the usage, which needs no GPU)
out = args[0]
dev = torch.device("cuda")
copy, side = torch.cuda.Stream(), torch.cuda.Stream(priority=-1)
host = torch.randn(2048, 2048).pin_memory()
w = torch.randn(2048, 2048, device=dev)


def work():
    """The step's GPU work: the side streams fork from the current one
    (which a graph capture requires) and join it again."""
    main = torch.cuda.current_stream()
    copy.wait_stream(main)
    side.wait_stream(main)
    with torch.cuda.stream(copy):
        x = host.to(dev, non_blocking=True)
        uploaded = torch.cuda.Event()
        uploaded.record(copy)
    main.wait_event(uploaded)
    a = x @ w
    ready = torch.cuda.Event()
    ready.record(main)
    with torch.cuda.stream(side):
        side.wait_event(ready)
        b = torch.relu(a) @ w
        done = torch.cuda.Event()
        done.record(side)
    c = torch.tanh(a)
    main.wait_event(done)
    return (b + c).sum()


if mode == "graph":
    # Warm up on a side stream, as torch.cuda.graph asks, then capture once.
    warm = torch.cuda.Stream()
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):
        for _ in range(3):
            work()
    torch.cuda.current_stream().wait_stream(warm)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = work()


def step():
    if mode == "graph":
        graph.replay()
        d = captured
    else:
        d = work()
    result = d.to("cpu", non_blocking=True)
    torch.cuda.synchronize()
    return result


for _ in range(3):  # warm-up outside the trace
    step()
activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
# One cycle only (repeat=1): a schedule that repeats starts a new cycle at the
# fourth step and throws the recorded one away. The trace is written when the
# cycle is ready, not after the profiler exits.
schedule = torch.profiler.schedule(wait=0, warmup=1, active=3, repeat=1)
written = []


def export(prof):
    prof.export_chrome_trace(out)
    written.append(out)


# Stream Wait Events with their streams, for pipec import (PyTorch 2.1+).
extra = {}
try:
    extra["experimental_config"] = torch._C._profiler._ExperimentalConfig(
        enable_cuda_sync_events=True)
except (AttributeError, TypeError):
    pass
# The step's own time, without the profiler: the median of 20 steps. This
# is the measured side of the eager-against-graph figure (summarise.py);
# record_shapes stays off below, as its per-op cost falls on eager steps only
# and would favour the graph.
import time
times = []
for _ in range(20):
    t0 = time.perf_counter()
    step()
    times.append((time.perf_counter() - t0) * 1e6)
times.sort()
with open(out + ".times.json", "w") as f:
    json.dump({"mode": mode, "step_us": times[len(times) // 2],
               "connections": os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS", "default")}, f)
with torch.profiler.profile(activities=activities, schedule=schedule,
                            on_trace_ready=export, record_shapes=False, **extra) as prof:
    for _ in range(4):
        step()
        prof.step()
if not written:
    sys.exit("the profiler wrote no trace")
with open(out) as f:
    events = json.load(f).get("traceEvents", [])
kernels = sum(1 for e in events if e.get("cat") == "kernel")
if kernels == 0:
    sys.exit(f"{out}: the trace holds no kernel ({len(events)} events)")
connections = os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS", "default")
print(f"wrote {out}: {len(events)} events, {kernels} kernels, {mode}, "
      f"CUDA_DEVICE_MAX_CONNECTIONS={connections} "
      f"(torch {torch.__version__}, {torch.cuda.get_device_name()})")
