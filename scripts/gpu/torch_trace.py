"""Records a PyTorch profiler trace (Kineto's Chrome trace JSON) of a small
multi-stream program: uploads on a side stream, matmuls on two streams joined
by events, a download, over three profiler steps. Test data for `pipec import`.

    python3 torch_trace.py OUT.json
"""
import sys

import torch

out = sys.argv[1]
dev = torch.device("cuda")
copy, side = torch.cuda.Stream(), torch.cuda.Stream(priority=-1)
host = torch.randn(2048, 2048).pin_memory()
w = torch.randn(2048, 2048, device=dev)


def step():
    with torch.cuda.stream(copy):
        x = host.to(dev, non_blocking=True)
        uploaded = torch.cuda.Event()
        uploaded.record(copy)
    main = torch.cuda.current_stream()
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
    d = (b + c).sum()
    result = d.to("cpu", non_blocking=True)
    torch.cuda.synchronize()
    return result


for _ in range(3):  # warm-up outside the trace
    step()
activities = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
schedule = torch.profiler.schedule(wait=0, warmup=1, active=3)
# Stream Wait Events with their streams, for pipec import (PyTorch 2.1+).
extra = {}
try:
    extra["experimental_config"] = torch._C._profiler._ExperimentalConfig(
        enable_cuda_sync_events=True)
except (AttributeError, TypeError):
    pass
with torch.profiler.profile(activities=activities, schedule=schedule,
                            record_shapes=True, **extra) as prof:
    for _ in range(4):
        step()
        prof.step()
prof.export_chrome_trace(out)
print(f"wrote {out} (torch {torch.__version__}, {torch.cuda.get_device_name()})")
