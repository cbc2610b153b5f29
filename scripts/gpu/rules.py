"""The rules under every what-if, one small program each: what the device
model predicts, and what the GPU measures where there is one. Writes the
what-if error table of docs/measurements.md (rules.md in WORK).

  rules.py PIPEC WORK [--gpu] [--profile=FILE]

Without --gpu it runs the model's side and says it did not measure. Each
rule is a ratio or a time that does not depend on how fast this GPU is:

  - two kernels side by side: fitting in the SMs' slots together (1.00x of
    one alone), at the per-SM thread limit (2.00x), memory-bound (the pair's
    bandwidth at most the device's: each 2x; measured with PyTorch copies);
  - an urgent kernel behind a low-priority grid of 16, 64 and 128 waves:
    it waits for the wave in flight, T/waves;
  - N tiny kernels as stream launches and as a graph, the one-time cost
    (capture, instantiation, first upload) included;
  - a comm-like kernel issued before a GEMM that fills the device, through
    1 and 8 connections (CUDA_DEVICE_MAX_CONNECTIONS): when it starts.
"""
import json
import os
import subprocess
import sys

pipec, work = sys.argv[1], sys.argv[2]
gpu = "--gpu" in sys.argv[3:]
profile = [a for a in sys.argv[3:] if a.startswith("--profile=")]
os.makedirs(work, exist_ok=True)

PAIR = """pipeline pair {{
  stream a;
  stream b;
  stage K0 on a kernel 200us [blocks={blocks}, threads={threads}{attrs}];
  stage K1 on b kernel 200us [blocks={blocks}, threads={threads}{attrs}];
}}
"""
ALONE = """pipeline alone {{
  stream a;
  stage K0 on a kernel 200us [blocks={blocks}, threads={threads}{attrs}];
}}
"""
URGENT = """pipeline urgent {{
  stream low priority low;
  stream high priority high;
  stage Big on low kernel 2ms [blocks={blocks}, threads=256];
  stage Urgent on high kernel 5us [blocks=132, threads=256, issue=501us];
}}
"""
TINY = """pipeline tiny {
  stream s;
""" + "".join(f"  stage K{i} on s kernel 2us;\n" for i in range(200)) + "}\n"
TP = """pipeline tp {
  stream compute;
  stream comm;
  stage Attn on compute kernel 100us [blocks=1056, threads=256];
  stage AR   on comm kernel 50us [blocks=16, threads=1024, smem=200KiB] depends_on(Attn);
  stage Mlp  on compute kernel 400us [blocks=4224, threads=256] depends_on(Attn);
}
"""


def run(name, text, backend, extra=(), env=None):
    """pipec run of `text` on `backend`: its first pipeline's JSON, or None."""
    path = os.path.join(work, f"rule-{name}.pipe")
    with open(path, "w") as f:
        f.write(text)
    out = os.path.join(work, f"rule-{name}-{backend}.json")
    args = [pipec, "run", path, f"--backend={backend}", "--json", "-o", out, "--replays=20"]
    args += list(extra)
    if backend == "sim":
        args += profile
    try:
        subprocess.run(args, check=True, timeout=120, capture_output=True,
                       env=dict(os.environ, **(env or {})))
        with open(out) as f:
            return json.load(f)["pipelines"]
    except (subprocess.SubprocessError, OSError, ValueError) as e:
        print(f"rules: {name} on {backend}: {e}", file=sys.stderr)
        return None


def stages(pipelines, lowering="streams"):
    for p in pipelines or []:
        if p["lowering"] == lowering:
            return {s["instance"]: s for s in p["stages"]}
    return {}


def span(pipelines):
    s = stages(pipelines)
    return max(x["end_us"] for x in s.values()) - min(x["start_us"] for x in s.values()) if s else None


rows = []  # (rule, predicted, measured, unit)


def measured(value):
    return value if gpu else None


def pair_rule(label, blocks, threads, attrs=""):
    fmt = dict(blocks=blocks, threads=threads, attrs=attrs)
    sim = span(run(f"{label}-pair", PAIR.format(**fmt), "sim"))
    sim1 = span(run(f"{label}-alone", ALONE.format(**fmt), "sim"))
    real = real1 = None
    if gpu:
        real = span(run(f"{label}-pair", PAIR.format(**fmt), "cuda"))
        real1 = span(run(f"{label}-alone", ALONE.format(**fmt), "cuda"))
    ratio = lambda a, b: a / b if a and b else None
    rows.append((f"two kernels side by side, {label}: the pair's span over one alone",
                 ratio(sim, sim1), ratio(real, real1), "x"))


pair_rule("slot-fitting", 132, 256)
pair_rule("at the thread limit", 264, 1024)


def torch_memory_pair():
    """Two large copies on two streams against one alone: the ratio."""
    code = r"""
import torch
n = 1 << 28  # 1 GiB of float32 each way
a, b = torch.empty(n, device="cuda"), torch.empty(n, device="cuda")
c, d = torch.empty(n, device="cuda"), torch.empty(n, device="cuda")
s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
def timed(f):
    for _ in range(3):
        f()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    e0.record(); f(); e1.record(); torch.cuda.synchronize()
    return e0.elapsed_time(e1)
def alone():
    b.copy_(a)
def pair():
    cur = torch.cuda.current_stream()
    s1.wait_stream(cur); s2.wait_stream(cur)
    with torch.cuda.stream(s1): b.copy_(a)
    with torch.cuda.stream(s2): d.copy_(c)
    cur.wait_stream(s1); cur.wait_stream(s2)
print(timed(pair) / timed(alone))
"""
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120, check=True)
        return float(r.stdout.strip().splitlines()[-1])
    except (subprocess.SubprocessError, OSError, ValueError, IndexError) as e:
        print(f"rules: the memory-bound pair with PyTorch: {e}", file=sys.stderr)
        return None


fmt = dict(blocks=132, threads=256, attrs=", bound=memory")
sim = span(run("memory-pair", PAIR.format(**fmt), "sim"))
sim1 = span(run("memory-alone", ALONE.format(**fmt), "sim"))
rows.append(("two memory-bound kernels side by side (PyTorch copies on a GPU): the pair's "
             "span over one alone", sim / sim1 if sim and sim1 else None,
             torch_memory_pair() if gpu else None, "x"))

for waves in (16, 64, 128):
    text = URGENT.format(blocks=1056 * waves)
    ready_text = URGENT.format(blocks=1).replace("2ms", "1us")
    predicted = (stages(run(f"urgent-{waves}", text, "sim")).get("Urgent", {}).get("start_us"),
                 stages(run(f"urgent-{waves}-ready", ready_text, "sim")).get("Urgent", {})
                 .get("start_us"))
    real = (None, None)
    if gpu:
        real = (stages(run(f"urgent-{waves}", text, "cuda")).get("Urgent", {}).get("start_us"),
                stages(run(f"urgent-{waves}-ready", ready_text, "cuda")).get("Urgent", {})
                .get("start_us"))
    wait = lambda pair: pair[0] - pair[1] if None not in pair else None
    rows.append((f"an urgent kernel behind {waves} waves of 2 ms (a wave {2000 / waves:.1f} us): "
                 "its wait", wait(predicted), wait(real), "us"))


def graph_rule(backend):
    pipelines = run("tiny", TINY, backend, ["--lower=both"])
    if not pipelines:
        return None, None
    by = {p["lowering"]: p["timings_us"] for p in pipelines}
    if "streams" not in by or "graph" not in by:
        return None, None
    g = by["graph"]
    one_time = g["capture"] + g["instantiate"] + max(0.0, g["first_launch"] - g["replay_median"])
    return by["streams"]["replay_median"] - g["replay_median"], one_time


saved, one_time = graph_rule("sim")
real_saved, real_one_time = graph_rule("cuda") if gpu else (None, None)
rows.append(("200 tiny kernels: a replay's saving as a graph", saved, real_saved, "us"))
rows.append(("200 tiny kernels: the graph's one-time cost", one_time, real_one_time, "us"))

for queues in (1, 8):
    prof = os.path.join(work, f"queues-{queues}.json")
    with open(prof, "w") as f:
        json.dump({"hardware_queues": queues}, f)
    sim = stages(run(f"tp-{queues}", TP, "sim", [f"--profile={prof}"] if not profile else []))
    real = stages(run(f"tp-{queues}", TP, "cuda",
                      env={"CUDA_DEVICE_MAX_CONNECTIONS": str(queues)})) if gpu else {}
    start = lambda s: s["AR"]["start_us"] - s["Attn"]["end_us"] if "AR" in s else None
    rows.append((f"a comm-like kernel issued before a device-filling GEMM, {queues} "
                 "connection(s): its start after what it waits for", start(sim),
                 start(real) if real else None, "us"))

lines = ["## The what-if rules: predicted against measured", ""]
if not gpu:
    lines += ["No GPU: the model's side only; nothing was measured.", ""]
lines += ["| rule | predicted | measured | error |", "|---|---|---|---|"]
for rule, p, m, unit in rows:
    fmt_v = lambda v: "-" if v is None else (f"{v:.2f}x" if unit == "x" else f"{v:.1f} us")
    err = f"{(p - m) / m * 100:+.0f}%" if p is not None and m else "-"
    lines.append(f"| {rule} | {fmt_v(p)} | {fmt_v(m) if gpu else 'not measured'} | {err} |")
with open(os.path.join(work, "rules.md"), "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
sys.exit(0 if all(p is not None for _, p, _, _ in rows) else 1)
