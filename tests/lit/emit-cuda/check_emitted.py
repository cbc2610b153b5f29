"""Emits, builds (together.py) and runs the CUDA program of every sample in both lowerings
(a pipeline of several devices, or with collectives, in streams; its graph
lowering is refused). A program with collectives says NCCL is missing when
PIPEC_NCCL names no library."""
import concurrent.futures
import glob
import json
import os
import shutil
import subprocess
import sys

samples, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
nvcc = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"


def text_of(path):
    with open(path) as f:
        return f.read()


def check(path, lowering):
    name = os.path.basename(path)[:-5]
    source = os.path.join(work, f"{name}-{lowering}.cu")
    binary = source[:-3]
    several = "\n  device " in open(path).read()
    collectives = any(op in text_of(path) for op in (
        " allreduce ", " allgather ", " reducescatter ", " broadcast "))
    if collectives and not several and lowering == "graph":
        # NCCL's calls are made on streams, and the graph lowering says so.
        r = subprocess.run(["pipec", "compile", path, "--emit=cuda", "--lower=graph",
                            "-o", source], capture_output=True, text=True)
        assert r.returncode == 2 and "NCCL calls on streams" in r.stderr, name
        assert not os.path.exists(source), name
        return None
    if several and lowering == "graph":
        # Several devices are lowered to streams only, and say so.
        r = subprocess.run(["pipec", "compile", path, "--emit=cuda", "--lower=graph",
                            "-o", source], capture_output=True, text=True)
        assert r.returncode == 2 and "lowers such pipelines to streams" in r.stderr, name
        assert not os.path.exists(source), name
        return None
    subprocess.run(["pipec", "compile", path, "--emit=cuda", f"--lower={lowering}",
                    "-o", source], check=True)
    if several:
        assert "cudaSetDevice(kStreamDevice[i])" in text_of(source), name
    text = open(source).read()
    if lowering == "streams":
        schedule = json.loads(subprocess.run(
            ["pipec", "compile", path, "--emit=json"], check=True,
            capture_output=True, text=True).stdout)
        waits = sum(p["waits"] for p in schedule["pipelines"])
        calls = text.count("cudaStreamWaitEvent(")
        assert calls == waits, (name, calls, waits)
    else:
        assert "cudaStreamWaitEvent(" not in text, name
    return (name, source, collectives)


def runs(binary, name, source, collectives):
    """The program NAME of the built binary, without a GPU or without NCCL."""
    text = text_of(source)
    program = together.name_of(source)
    run = subprocess.run([binary, program, "3"], capture_output=True, text=True,
                         timeout=120)
    if collectives:
        assert "loadNccl()" in text and "NCCL_CHECK(nccl.groupStart())" in text, name
        # Without NCCL it says so (exit 4), whatever the devices.
        missing = subprocess.run([binary, program, "3"], capture_output=True, text=True, timeout=120,
                                 env=dict(os.environ, PIPEC_NCCL="/nonexistent/libnccl.so.2"))
        assert missing.returncode == 4 and "NCCL is missing" in missing.stderr, name
    if "NCCL is missing" in run.stderr:
        assert run.returncode == 4, (name, run.returncode)
    elif "no CUDA device" in run.stderr or "devices; the CUDA runtime sees" in run.stderr:
        assert run.returncode == 3, (name, run.returncode)
    else:
        assert run.returncode == 0, (name, lowering, run.stderr[-2000:])


files = sorted(glob.glob(os.path.join(samples, "*.pipe")) +
               glob.glob(os.path.join(samples, "pipeline-parallel", "*.pipe")) +
               glob.glob(os.path.join(samples, "collectives", "*.pipe")))
jobs = [(p, l) for p in files for l in ("streams", "graph")]
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    done = list(pool.map(lambda job: check(*job), jobs))
built = [d for d in done if d is not None]
# Every program in one nvcc run (together.py says why), and the first alone,
# as its header says to build it: nvcc -O2 -arch=sm_90 (the GPU the project
# borrows; no other flag is needed).
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import together
binary = os.path.join(work, "all")
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    results = list(pool.map(
        lambda alone: together.build(binary + ".cu", binary, [s for _, s, _ in built][
            :1 if alone else None], alone=alone)[0], (False, True)))
for result in results:
    assert result.returncode == 0, result.stderr[-4000:]
alone = subprocess.run([built[0][1][:-3], "3"], capture_output=True, text=True, timeout=120)
assert alone.returncode in (0, 3), alone.stderr[-2000:]
for name, source, collectives in built:
    runs(binary, name, source, collectives)
print(f"built {sum(d is not None for d in done)} programs; "
      f"refused {sum(d is None for d in done)} graph lowerings of several devices "
      f"or of collectives")
