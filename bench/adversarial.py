#!/usr/bin/env python3
"""Time and peak memory of pipec on inputs built to hurt it.

Usage: bench/adversarial.py [PIPEC] [--scale=F] [--only=WORD]

Each case is written to a temporary folder and run once; the table gives
the command, wall time, peak resident memory, the exit status (1 is
expected where the input is wrong) and whether it kept to its budget: an
input under a megabyte never needs more than 2 s or 500 MB (a case with
another budget says why). Exits 1 when a case is over budget or crashes.
Results are kept in docs/robustness.md.
"""
import gzip
import os
import subprocess
import sys
import tempfile
import time

BUDGET = (2.0, 500)  # seconds, MB


def write(folder, name, text):
    path = os.path.join(folder, name)
    mode = "wb" if isinstance(text, bytes) else "w"
    with open(path, mode) as f:
        f.write(text)
    return path


def gzip_of(folder, name, parts):
    """A gzip file made of `parts` (bytes), written as they come."""
    path = os.path.join(folder, name)
    with gzip.open(path, "wb", compresslevel=9) as f:
        for p in parts:
            f.write(p)
    return path


def cases(tmp, scale):
    n = lambda k: max(1, int(k * scale))
    # ---- The front end (issue 17) ----------------------------------------
    yield "10 MB of '(' at top level", ["run", "--error-limit=0", write(tmp, "a.pipe", "(" * n(10_000_000))], None
    yield "1 MB of '(' inside one stage", ["run", "--error-limit=0", write(
        tmp, "b.pipe", "pipeline p { stream s; stage a on s kernel " + "(" * n(1_000_000) + "}")], None
    names = n(20_000)
    yield f"{names} stages naming unknown stages", ["run", "--error-limit=0", write(
        tmp, "c.pipe", "pipeline p {\n stream s;\n" + "".join(
            f" stage a{i} on s kernel 1us depends_on b{i}x;\n" for i in range(names)) + "}\n")], None
    yield "30,000 errors on one line", ["run", "--error-limit=0", write(
        tmp, "d.pipe", "pipeline p { " + "stage ; " * n(30_000) + "}")], None
    yield "300 streams declared (limit 256)", ["run", write(tmp, "e.pipe", "pipeline p {\n" + "".join(
        f" stream s{i};\n stage k{i} on s{i} kernel 1us;\n" for i in range(300)) + "}\n")], None
    yield "huge grid (2^31-1 blocks)", ["run", write(
        tmp, "f.pipe", "pipeline p { stream s; stage k on s kernel 10us [blocks=2147483647, "
        "threads=1024]; stage h on s kernel 10us [blocks=2147483647]; }")], None
    pipes = n(2_000)
    yield f"{pipes} pipelines", ["run", write(tmp, "g.pipe", "".join(
        f"pipeline p{i} {{ stream s; stage k on s kernel 1us; }}\n" for i in range(pipes)))], None
    yield "1 MB name-like token", ["run", write(tmp, "h.pipe", "pipeline " + "x" * n(1_000_000) + " { }")], None

    # ---- Issue 26 --------------------------------------------------------
    one_queue = write(tmp, "q1.json", '{"hardware_queues": 1}')
    unpinned8 = write(tmp, "u8.pipe", "pipeline p {\n" + "".join(
        f"  stage K{i} kernel 10us;\n" for i in range(8)) + "}\n")
    yield "8 stages without 'on', one hardware queue", ["compile", unpinned8, f"--profile={one_queue}"], None
    unpinned12 = write(tmp, "u12.pipe", "pipeline p {\n" + "".join(
        f"  stage K{i} kernel 10us;\n" for i in range(12)) + "}\n")
    yield "12 stages without 'on', --max-streams=11", ["compile", unpinned12, "--max-streams=11"], None
    dense = ["pipeline dense {", "  iterations 50000;"]
    for i in range(300):
        deps = ", ".join(f"S{j}" for j in range(max(0, i - 40), i))
        dense.append(f"  stage S{i} kernel 1us" + (f" depends_on({deps})" if deps else "") + ";")
    yield "dense DAG x 50,000 iterations (edge limit)", ["check", write(tmp, "dense.pipe", "\n".join(dense) + "\n}\n")], None
    yield "20 pipelines of 10^7 instances (file limit)", ["check", write(tmp, "many.pipe", "".join(
        f"pipeline p{i} {{ iterations 10000000; stage A kernel 1us; }}\n" for i in range(20)))], None
    window = ["pipeline w {", "  iterations 40000;"] + [f"  stream s{i};" for i in range(256)]
    window += [f"  stage A{i} on s{i} kernel 1us;" for i in range(255)]
    window.append("  stage Z on s255 kernel 1us depends_on(A0@prev(39061));")
    yield "@prev(39061) over 256 stages and streams (clock window)", ["check", write(tmp, "window.pipe", "\n".join(window) + "\n}\n")], None
    writers = ["pipeline p {", "  sync declared;", "  buffer x 1KB;"] + [f"  stream s{s};" for s in range(256)]
    writers += [f"  stage W{i} on s{i % 256} kernel 1us writes(x);" for i in range(2000)]
    yield "2,000 unordered writers of one buffer, sync declared", ["check", write(tmp, "writers.pipe", "\n".join(writers) + "\n}\n")], None
    ordered = ["pipeline q {", "  sync declared;", "  iterations 312500;"]
    ordered += [f"  buffer b{b} 1KB;" for b in range(8)] + [f"  stream s{s};" for s in range(32)]
    for i in range(32):
        dep = f"S{i - 1}" if i else "S31@prev"
        ordered.append(f"  stage S{i} on s{i} kernel 1us reads(b{i % 8}) writes(b{(i + 1) % 8}) depends_on({dep});")
    yield "10^7 ordered instances, 32 streams, 8 buffers, sync declared", ["check", write(tmp, "ordered.pipe", "\n".join(ordered) + "\n}\n")], None
    wide = "pipeline w {\n  iterations 2000;\n  stream s;\n  stage W on s kernel 100us [blocks=2147483647, threads=1024];\n  stage X on s kernel 10us [blocks=2147483647, threads=32];\n}\n"
    yield "maximum grids x 2,000 iterations, run", ["run", "--backend=sim", write(tmp, "wide.pipe", wide)], None
    yield "the same without 'on', compile (assignment)", ["compile", write(
        tmp, "wide2.pipe", wide.replace("  stream s;\n", "").replace(" on s", ""))], (6.0, 500, "issue 29: the assignment simulates each candidate")
    rings = ["pipeline rings {", "  iterations 4;"] + [f"  buffer r{i} 1KB;" for i in range(400)]
    rings += [f"  stage K{i} kernel 1us" + (f" reads(r{i - 1})" if i else "") + f" writes(r{i});" for i in range(400)]
    yield "advise, 400 rings on the critical path", ["advise", "--backend=sim", write(tmp, "rings.pipe", "\n".join(rings) + "\n}\n")], None
    slots = ["pipeline slots {"] + [f"  buffer r{i}[65536] 1KB; stage K{i} kernel 1us writes(r{i});" for i in range(200)]
    yield "--emit=cuda, 200 rings of 65,536 slots", ["compile", "--emit=cuda", "-o", os.devnull, write(tmp, "slots.pipe", "\n".join(slots) + "\n}\n")], None
    big = write(tmp, "big.pipe", "pipeline big { iterations 10000000; stream s; stage A on s kernel 1us; }\n")
    yield "10^7 instances, run --trace --html (capped)", ["run", "--backend=sim", "--replays=1", big,
        f"--trace={os.path.join(tmp, 't.json')}", f"--html={os.path.join(tmp, 't.html')}"], (30.0, 2500, "the 10^7 limit itself: issue 29")

    # ---- Issue 45 ----------------------------------------------------------
    dev64 = ["version 4;", "pipeline p {"] + [f"  device g{d};" for d in range(64)]
    dev64 += [f"  stream s{d} on g{d};" for d in range(64)]
    dev64 += [f"  stage K{d} on s{d} kernel 1us;" for d in range(64)] + ["}"]
    dev64 = write(tmp, "dev64.pipe", "\n".join(dev64) + "\n")
    yield "64 devices, one 1 us kernel each, run", ["run", "--backend=sim", dev64], (2.0, 500, "")
    yield "64 devices, one 1 us kernel each, advise", ["advise", "--backend=sim", dev64], (2.0, 500, "")
    pairs = ["pipeline p {", "  iterations 1000;", "  stream a;", "  stream b;"]
    pairs += [f"  buffer x{i} 1KB;" for i in range(25)]
    for i in range(25):
        pairs.append(f"  stage W{i} on a kernel 1us writes(x{i})" + (f" depends_on(R{i - 1})" if i else "") + ";")
        pairs.append(f"  stage R{i} on b kernel 1us reads(x{i});")
    pairs = write(tmp, "pairs.pipe", "\n".join(pairs) + "\n}\n")
    yield "25 writer/reader pairs x 1,000 iterations, run", ["run", "--backend=sim", pairs], (2.0, 500, "")
    yield "25 writer/reader pairs x 1,000 iterations, advise", ["advise", "--backend=sim", pairs], (6.0, 500, "advise runs the model once per change it tries")
    rings2 = ["pipeline rings {", "  iterations 1000;", "  stream a;", "  stream b;"]
    rings2 += [f"  buffer r{i}[2] 1KB;" for i in range(400)]
    rings2 += [f"  stage K{i} on {'ab'[i % 2]} kernel 1us" + (f" reads(r{i - 1})" if i else "") + f" writes(r{i});" for i in range(400)]
    yield "advise, 400 two-slot rings x 1,000 iterations", ["advise", "--backend=sim", write(tmp, "rings2.pipe", "\n".join(rings2) + "\n}\n")], (120.0, 1500, "4 x 10^5 instances: linear in them, a run per ring tried")

    # ---- Imports ----------------------------------------------------------
    events, corr = [], 1000
    for i in range(12000):
        corr += 1
        events.append('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,'
                      f'"ts":{1000 + 10 * i},"dur":2,"args":{{"correlation":{corr}}}}}')
        events.append(f'{{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":{i % 256},'
                      f'"ts":{1003 + 10 * i},"dur":1,"args":{{"stream":{i % 256},"correlation":{corr}}}}}')
        corr += 1
        events.append('{"ph":"X","cat":"cuda_sync","name":"Context Sync","pid":1,"tid":1,'
                      f'"ts":{1005 + 10 * i},"dur":1,"args":{{"correlation":{corr},'
                      '"cuda_sync_kind":"Context Sync"}}')
        events.append('{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,'
                      f'"tid":1,"ts":{1005 + 10 * i},"dur":1,"args":{{"correlation":{corr}}}}}')
    syncs = gzip_of(tmp, "syncs.json.gz", [('{"traceEvents":[' + ",".join(events) + "]}").encode()])
    yield "import: 12,000 context syncs over 256 streams", ["import", syncs, "-o", os.devnull], None
    name = gzip_of(tmp, "name.json.gz", [b'{"traceEvents":[{"ph":"X","cat":"kernel","name":"'] +
                   [b"A" * (1 << 24)] * n(64) + [b'","ts":1,"dur":1,"args":{}}]}'])
    yield "import: a gzip bomb, a kernel named with 1 GiB of 'A'", ["import", name, "-o", os.devnull], None
    entry = b'{"id": 0, "name": "NVIDIA A100", "numSms": 108},'
    devices = gzip_of(tmp, "devices.json.gz", [b'{"deviceProperties": ['] +
                      [entry * 20000] * n(900) + [b'{"id":0}], "traceEvents": []}'])
    yield "import: a gzip bomb of 900 MB of deviceProperties", ["import", devices, "-o", os.devnull], None
    # One rank: 1,000 kernels over 4 streams, a context sync after each.
    four = [e.replace('"tid":%d,' % (i % 256), '"tid":%d,' % (i % 4)).replace(
        '"stream":%d,' % (i % 256), '"stream":%d,' % (i % 4)) for i, e in
        ((k // 4, e) for k, e in enumerate(events[:4000]))]
    rank = gzip_of(tmp, "rank.json.gz", [('{"traceEvents":[' + ",".join(four) + "]}").encode()])
    yield "import: 200 copies of one rank's trace as ranks (limit 64)", ["import", "-o", os.devnull] + [rank] * 200, None
    yield "import: 64 ranks of 1,000 kernels and 1,000 syncs each", ["import", "-o", os.devnull] + [rank] * 64, (6.0, 500, "12 MB of JSON: linear in the ops")
    wide_rank = gzip_of(tmp, "wide-rank.json.gz", [('{"traceEvents":[' + ",".join(events[:1000]) + "]}").encode()])
    yield "import: 2 ranks of 250 streams (limit 256 in all)", ["import", "-o", os.devnull, wide_rank, wide_rank], None
    spaces = gzip_of(tmp, "spaces.json.gz", [b'{"traceEvents":['] + [b" " * (1 << 20)] * n(1023) + [b"]}"])
    yield "import: a gzip bomb of 1 GiB of white space (1 MB)", ["import", spaces, "-o", os.devnull], None


def run(pipec, args):
    start = time.monotonic()
    proc = subprocess.Popen([pipec] + args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    cpu = usage.ru_utime + usage.ru_stime
    return wall, cpu, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    options = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
    scale = float(options.get("scale", "1"))
    only = options.get("only", "")
    pipec = args[0] if args else "build/pipec"
    print("| input | command | wall s | CPU s | peak MB | exit | budget |")
    print("| --- | --- | ---: | ---: | ---: | ---: | --- |")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for label, command, budget in cases(tmp, scale):
            if only and only not in label:
                continue
            seconds, mb, why = budget if budget else BUDGET + ("",)
            wall, cpu, peak, rc = run(pipec, command)
            over = wall > seconds or peak > mb or rc < 0 or rc > 4
            failed |= over
            verdict = ("OVER " if over else "") + f"{seconds:g} s, {mb} MB" + (f" ({why})" if why else "")
            print(f"| {label} | `{command[0]}` | {wall:.2f} | {cpu:.2f} | {peak:.0f} | {rc} | {verdict} |", flush=True)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
