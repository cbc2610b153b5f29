"""The tables of gpu-check's summary.md, from the files it wrote:
GPU against the calibrated model per sample and lowering, the priority
sample's urgent kernel, the emitted programs, CUDA graphs on many kernels."""
import glob
import json
import os
import re
import sys

work = sys.argv[1]


def load(name):
    try:
        with open(os.path.join(work, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


rows = []
for path in sorted(glob.glob(os.path.join(work, "cuda-*.json"))):
    name = os.path.basename(path)[5:-5]
    if name.endswith(("-without", "-events")):
        continue
    gpu, sim = load(f"cuda-{name}.json"), load(f"sim-{name}.json")
    if not gpu:
        continue
    sims = {p["name"] + p["lowering"]: p for p in (sim or {}).get("pipelines", [])}
    for g in gpu["pipelines"]:
        s = sims.get(g["name"] + g["lowering"])
        real = g["timings_us"]["replay_median"]
        model = s["timings_us"]["replay_median"] if s else None
        err = f"{(model - real) / real * 100:+.0f}%" if model and real else "-"
        rows.append(f"| {name} | {g['lowering']} | {g.get('timing', '?')} | {real:.1f} | "
                    f"{g['timings_us']['replay_p95']:.1f} | {g['makespan_us']:.1f} | "
                    f"{model if model is None else round(model, 1)} | "
                    f"{s['makespan_us'] if s else '-'} | {err} | {g['dependency_violations']} |")
if rows:
    print("## Samples: GPU against the calibrated model\n")
    print("| sample | lowering | timing | GPU replay median us | GPU p95 us | GPU makespan us "
          "| model replay us | model makespan us | model error (replay) | violations |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
else:
    print("No GPU run result.")


def urgent_end(result):
    if not result:
        return None
    for st in result["pipelines"][0]["stages"]:
        if st["instance"] == "Urgent":
            return st["end_us"]


cases = [("GPU, CUPTI or auto", "cuda-priority.json"),
         ("GPU, timing events", "cuda-priority-events.json"),
         ("GPU, --ignore-priorities", "cuda-priority-without.json"),
         ("model", "sim-priority.json"),
         ("model, --ignore-priorities", "sim-priority-without.json")]
found = [(label, urgent_end(load(f))) for label, f in cases]
if any(v is not None for _, v in found):
    print("\n## samples/priority.pipe: when the urgent kernel ends\n")
    print("| run | Urgent ends (us after the first start) |")
    print("|---|---|")
    for label, v in found:
        print(f"| {label} | {'-' if v is None else f'{v:.1f}'} |")

emitted = sorted(glob.glob(os.path.join(work, "emitted-*.txt")))
if emitted:
    print("\n## Emitted programs against pipec run --backend=cuda\n")
    print("| sample | lowering | emitted replay median us | pipec run us |")
    print("|---|---|---|---|")
    for path in emitted:
        base = os.path.basename(path)[8:-4]
        name, lowering = base.rsplit("-", 1)
        m = re.search(r"replay median\s+([\d.]+)", open(path).read())
        gpu = load(f"cuda-{name}.json")
        ours = next((p["timings_us"]["replay_median"] for p in gpu["pipelines"]
                     if p["lowering"] == lowering), None) if gpu else None
        print(f"| {name} | {lowering} | {m.group(1) if m else 'failed'} | "
              f"{'-' if ours is None else f'{ours:.1f}'} |")

many = load("cuda-many-kernels.json")
if many and len(many["pipelines"]) >= 2:
    s, g = many["pipelines"][:2]
    print(f"\nmany-kernels on the GPU: streams replay {s['timings_us']['replay_median']:.1f} us, "
          f"graph replay {g['timings_us']['replay_median']:.1f} us; capture "
          f"{g['timings_us']['capture']:.1f} us, instantiate {g['timings_us']['instantiate']:.1f} us.")

profile = load("profile.json")
defaults = load("default-profile.json") or {}
if profile:
    print("\n## Calibrated profile against the defaults\n")
    print("The defaults are published figures (docs/device-model.md names each source);")
    print("the measured column is what `pipec calibrate` found, each key as the model uses it.\n")
    print("| key | default | measured |")
    print("|---|---|---|")
    for k, v in profile.items():
        d = defaults.get(k, "-")
        mark = "" if d == v else " *"
        print(f"| {k} | {d} | {v}{mark} |")

notes = []
for path in sorted(glob.glob(os.path.join(work, "cuda-*.json"))) + [os.path.join(work, "cupti-seed.json")]:
    result = load(os.path.basename(path))
    for p in (result or {}).get("pipelines", []):
        for n in p.get("notes", []) + ([p["timing_note"]] if p.get("timing_note") else []):
            line = f"{os.path.basename(path)[:-5]} ({p['lowering']}, {p.get('timing')}): {n}"
            if line not in notes:
                notes.append(line)
if notes:
    print("\n## What the GPU runs noted\n")
    for n in notes[:40]:
        print(f"- {n}")

log = os.path.join(work, "calibrate.log")
if os.path.exists(log):
    print("\n```\n" + open(log).read()[-3000:] + "```")


# The PyTorch step eagerly and as a CUDA graph, each timed without the
# profiler (torch_trace.py), against what pipec's import of the eager trace
# predicts a graph gains on the recorded step (import-eager.json).
eager, graph = load("torch-trace.json.times.json"), load("torch-trace-graph.json.times.json")
imported = load("import-eager.json")
if eager and graph:
    measured = graph["step_us"] / eager["step_us"]
    print("\n## PyTorch: a step eagerly and as a CUDA graph\n")
    print("| step | eager us | graph us | graph / eager | pipec predicted graph / eager |")
    print("|---|---|---|---|---|")
    predicted = "-"
    if imported and imported.get("predicted"):
        p = imported["predicted"]
        if p.get("streams_replay_us") and p.get("graph_replay_us"):
            predicted = f"{p['graph_replay_us'] / p['streams_replay_us']:.2f}"
    print(f"| torch_trace.py | {eager['step_us']:.1f} | {graph['step_us']:.1f} | "
          f"{measured:.2f} | {predicted} |")
