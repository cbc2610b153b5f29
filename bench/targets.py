#!/usr/bin/env python3
"""Issue 18's figures, each next to its target.

Usage: bench/targets.py [PIPEC] [--quick]

Measures, on generated pipelines (bench/gen.py):
  - `pipec check` of flat files of 10^5 and 10^6 stages (time, peak memory);
  - the redundant-dependency lint on flat files of 4,000, 6,000 and 10^5
    stages (how many it reports: never silently none);
  - emit time of JSON for 10^7 instances and of CUDA and text against JSON
    for 10^6, all to /dev/null (the `--stats` emit phase);
  - write calls for the diagnostics of a file with ten warnings (strace);
  - the transitive reduction and the model per instance/event at 128
    streams against 8;
  - the model's events per second, both lowerings, 10^6 instances;
  - issue 29's rows: compile of 10^7 instances with real grids (time and
    peak memory, the whole command), the automatic assignment and advise of
    10^4 unpinned stages with real grids, import of a synthetic trace of
    800,000 GPU ops (time, peak memory against the trace's bytes, --report).
--quick skips the 10^6-stage file, the 10^7-instance emit and compile, and
the trace import. --issue46 adds issue 46's rows: CPU seconds (user and
system), the peak per instance, event or stage, the system-time share, and
the ratio to a floor measured in the same run (`gzip -dc | wc -c`, Python's
`json.load`); it takes minutes.
Times are the best of a few runs (interleaved where two are compared): this
virtual machine's speed wanders by tens of percent from minute to minute.
Results are kept in docs/performance.md.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
quick = "--quick" in sys.argv
pipec = args[0] if args else os.path.join(here, "..", "build", "pipec")
work = tempfile.mkdtemp()
rows = []


def gen(name, *opts):
    path = os.path.join(work, name)
    subprocess.run([sys.executable, os.path.join(here, "gen.py"), *opts, "-o", path],
                   check=True)
    return path


def timed(cmd):
    """Wall seconds, peak MiB and stderr of one run."""
    t = time.time()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    wall = time.time() - t
    lines = p.stderr.strip().splitlines()
    return wall, int(lines[-1]) / 1024, "\n".join(lines[:-1])


def stat(text, pattern):
    m = re.search(pattern, text)
    return float(m.group(1)) if m else float("nan")


def row(figure, measured, target, met):
    rows.append(f"| {figure} | {measured} | {target} | {'yes' if met else '**no**'} |")


# Front end: flat files.
for n, t_target, m_target in [(100_000, 0.5, 100)] + ([] if quick else [(1_000_000, 4.0, 600)]):
    f = gen(f"flat{n}.pipe", "random", "--stages", str(n), "--seed", "1")
    wall, mib, _ = min(timed([pipec, "check", f]) for _ in range(2))
    row(f"check, {n:,} flat stages", f"{wall:.2f} s, {mib:.0f} MiB",
        f"< {t_target} s, < {m_target} MiB", wall < t_target and mib < m_target)

# The lint at every size.
for n in (4000, 6000, 100_000):
    f = gen(f"lint{n}.pipe", "random", "--stages", str(n), "--seed", "1")
    err = subprocess.run([pipec, "check", f], stderr=subprocess.PIPE, text=True).stderr
    shown = len(re.findall(r"warning: redundant dependency on", err))
    more = stat(err, r"warning: (\d+) more redundant dependencies")
    total = shown + (0 if more != more else int(more))
    skipped = "were not checked" in err
    row(f"redundant-dependency lint, {n:,} flat stages", f"{total} reported",
        "reported, never silently none", total > 0 and not skipped)

# Emitters.
emit = r"emit ([\d.]+) s"
u6 = gen("u6.pipe", "random", "--stages", "100", "--iterations", "10000", "--seed", "1")
times = {}
for _ in range(3):
    for what in ("json", "cuda", "text"):
        err = subprocess.run([pipec, "compile", u6, f"--emit={what}", "-o", "/dev/null",
                              "--stats"], stderr=subprocess.PIPE, text=True).stderr
        times[what] = min(times.get(what, float("inf")), stat(err, emit))
for what in ("cuda", "text"):
    ratio = times[what] / times["json"]
    row(f"--emit={what} of 10^6 instances, against JSON",
        f"{times[what]:.3f} s ({ratio:.2f}x JSON's {times['json']:.3f} s)", "within 2x",
        ratio <= 2)
if not quick:
    u7 = gen("u7.pipe", "random", "--stages", "100", "--iterations", "100000", "--seed", "1")
    e = min(stat(subprocess.run([pipec, "compile", u7, "--emit=json", "-o", "/dev/null",
                                 "--stats"], stderr=subprocess.PIPE, text=True).stderr, emit)
            for _ in range(2))
    row("JSON emit of 10^7 instances to /dev/null", f"{e:.2f} s", "< 2 s", e < 2)

# Diagnostics: write calls.
if shutil.which("strace"):
    f = os.path.join(work, "lint4000.pipe")
    p = subprocess.run(["strace", "-f", "-c", "-e", "trace=write", pipec, "check", f],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    m = re.search(r"^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?write$",
                  p.stderr, re.M)
    calls = int(m.group(1)) if m else -1
    row("write calls for 11 diagnostics (10 warnings with notes, 1 summary)",
        str(calls), "one per diagnostic", 0 < calls <= 11)

# Streams: 8 against 128.
per = {8: (float("inf"), 0.0), 128: (float("inf"), 0.0)}
files = {s: gen(f"s{s}.pipe", "random", "--stages", "1000", "--streams", str(s),
                "--iterations", "1000", "--seed", "1") for s in (8, 128)}
for _ in range(3):
    for s in (8, 128):
        err = subprocess.run([pipec, "compile", files[s], "--max-streams=256", "--stats", "-o",
                              "/dev/null"], stderr=subprocess.PIPE, text=True).stderr
        red = stat(err, r"reduction ([\d.]+) s")
        err = subprocess.run([pipec, "run", files[s], "--max-streams=256", "--backend=sim",
                              "--lower=graph", "--replays=1", "--stats", "-o", "/dev/null"],
                             stderr=subprocess.PIPE, text=True).stderr
        rate = stat(err, r"(\d+) events per second")
        per[s] = (min(per[s][0], red), max(per[s][1], rate))
r = per[128][0] / per[8][0]
row("reduction per instance, 128 streams against 8 (10^6 instances)",
    f"{per[128][0]:.3f} s / {per[8][0]:.3f} s = {r:.2f}x", "within 1.3x", r <= 1.3)
r = per[8][1] / per[128][1]
row("model, graph lowering, time per event, 128 streams against 8",
    f"{per[8][1]:,.0f} / {per[128][1]:,.0f} events/s = {r:.2f}x", "within 1.3x", r <= 1.3)

# Model rate: sim-speed.sh's pipeline at 10^6 instances.
best = {}
for _ in range(3):
    err = subprocess.run([pipec, "run", u6, "--backend=sim", "--lower=both", "--replays=1",
                          "--stats", "-o", "/dev/null"], stderr=subprocess.PIPE, text=True).stderr
    for lowering, rate in re.findall(r"\((\w+)\): .* (\d+) events per second", err):
        best[lowering] = max(best.get(lowering, 0), int(rate))
for lowering, rate in best.items():
    row(f"model, {lowering} lowering, 10^6 instances", f"{rate:,} events/s",
        ">= 14,000,000", rate >= 14_000_000)

# Issue 29: the model-driven compile, the assignment on real grids, import.
GRID = "[blocks=528, threads=256]"


def with_grids(path):
    text = re.sub(r"kernel (\d+)us", r"kernel \1us " + GRID, open(path).read())
    open(path, "w").write(text)
    return path


def big_pipe(name):
    """10^7 instances: 4 stages with 528-block kernels x 2.5M iterations."""
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write("pipeline big {\n  iterations 2500000;\n  stream a; stream b;\n"
                f"  stage A on a kernel 10us {GRID};\n"
                f"  stage B on b kernel 10us {GRID} depends_on(A);\n"
                f"  stage C on a kernel 10us {GRID} depends_on(B);\n"
                f"  stage D on b kernel 10us {GRID} depends_on(C);\n}}\n")
    return path


def synthetic_trace(name, ops):
    """bench/import-scale.py's trace of `ops` GPU ops, as a JSON file."""
    spec = {"__file__": os.path.join(here, "import-scale.py")}
    exec(open(spec["__file__"]).read().split("\ndef measure")[0], spec)
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump(spec["trace"](ops), f)
    return path


if not quick:
    big = big_pipe("big.pipe")
    wall, mib, _ = min(timed([pipec, "compile", big, "--emit=json", "-o", "/dev/null"])
                       for _ in range(2))
    row("compile of 10^7 instances (4 stages x 2.5M iterations, 528-block kernels) "
        "to JSON on /dev/null", f"{wall:.2f} s, {mib:.0f} MiB", "< 2 s, < 1 GB",
        wall < 2 and mib * 2**20 < 1e9)

flat = with_grids(gen("assign4.pipe", "random", "--stages", "10000", "--seed", "1",
                      "--unpinned"))
streams, compile_s = float("inf"), float("inf")
for _ in range(2):
    t = time.time()
    err = subprocess.run([pipec, "compile", flat, "--stats", "-o", "/dev/null"],
                         stderr=subprocess.PIPE, text=True).stderr
    compile_s = min(compile_s, time.time() - t)
    streams = min(streams, stat(err, r"streams ([\d.]+) s"))
row("automatic assignment, 10^4 stages with 528-block kernels", f"{streams:.2f} s", "< 1 s",
    streams < 1)
advise, _, _ = min(timed([pipec, "advise", flat]) for _ in range(2))
row("advise of the same 10^4 automatic stages, against compile",
    f"{advise:.2f} s ({advise / compile_s:.1f}x {compile_s:.2f} s)", "< 10x compile",
    advise < 10 * compile_s)

if not quick:
    trace = synthetic_trace("trace.json", 800_000)
    size = os.path.getsize(trace)
    wall, mib, _ = min(timed([pipec, "import", trace, "-o", os.path.join(work, "t.pipe")])
                       for _ in range(3))
    row(f"import of 800,000 GPU ops ({size / 1e6:.0f} MB of trace)",
        f"{wall:.1f} s, {mib:.0f} MiB ({mib * 2**20 / size:.1f}x the trace)",
        "< 5 s, < 1.5x the trace", wall < 5 and mib * 2**20 < 1.5 * size)
    wall, _, _ = min(timed([pipec, "import", trace, "--report"]) for _ in range(3))
    row("import --report of the same", f"{wall:.1f} s", "< 10 s", wall < 10)
    os.remove(trace)

# Issue 46: CPU seconds, peak, bytes per unit, the system-time share, and
# the ratio to a floor measured in the same run (--issue46; minutes).
if "--issue46" in sys.argv:

    def cpu(cmd, shell=False):
        """(wall, user + system CPU s, system share, peak MiB, the rest of
        stderr) of one run."""
        fmt = ["/usr/bin/time", "-f", "%e %U %S %M"]
        p = subprocess.run(fmt + (["sh", "-c", cmd] if shell else cmd),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        lines = p.stderr.strip().splitlines()
        wall, user, system, peak = lines[-1].split()
        c = float(user) + float(system)
        return (float(wall), c, float(system) / c if c else 0.0, int(peak) / 1024,
                "\n".join(lines[:-1]))

    def best(cmd, runs=2, shell=False):
        return min((cpu(cmd, shell) for _ in range(runs)), key=lambda r: r[1])

    big = big_pipe("big46.pipe")
    wall, c, sys_share, mib, _ = best([pipec, "compile", big, "--emit=json", "-o", "/dev/null"])
    per = mib * 2**20 / 1e7
    row("compile of 10^7 instances to JSON: bytes an instance at the peak, system share, wall",
        f"{per:.0f} B ({mib:.0f} MiB), {sys_share:.0%} of {c:.2f} s CPU, {wall:.2f} s",
        "<= 50 B, < 15%, < 2 s", per <= 50 and sys_share < 0.15 and wall < 2)

    trace = synthetic_trace("trace46.json", 800_000)
    size = os.path.getsize(trace)
    subprocess.run(["gzip", "-1", "-k", "-f", trace], check=True)
    gz = trace + ".gz"
    _, floor, _, _, _ = best(f"gzip -dc {gz} | wc -c", shell=True)
    _, c, _, mib, _ = best([pipec, "import", gz, "-o", "/dev/null"])
    row(f"import of 800,000 GPU ops ({size / 1e6:.0f} MB of JSON, gzip -1): CPU against "
        "gzip -dc; peak against the JSON",
        f"{c:.2f} s / {floor:.2f} s = {c / floor:.1f}x; {mib * 2**20 / size:.2f}x",
        "<= 3x; < 1.5x", c <= 3 * floor and mib * 2**20 < 1.5 * size)
    _, load, _, load_mib, _ = best([sys.executable, "-c",
                                 f"import json; json.load(open({trace!r}))"], runs=1)
    _, c, _, mib, _ = best([pipec, "import", gz, "--report", "-o", "/dev/null"])
    row("import --report of the same: CPU against Python's json.load; peak against the JSON",
        f"{c:.2f} s / {load:.2f} s = {c / load:.2f}x; {mib * 2**20 / size:.2f}x "
        f"(json.load {load_mib:.0f} MiB)", "<= 0.5x; < 1.5x",
        c <= 0.5 * load and mib * 2**20 < 1.5 * size)

    rates = {}
    for n in (10_000, 100_000, 1_000_000):
        f = gen(f"r46_{n}.pipe", "random", "--stages", "100", "--iterations", str(n // 100),
                "--seed", "1")
        _, c, _, _, err = best([pipec, "run", f, "--backend=sim", "--lower=both",
                                "--replays=1", "--stats", "-o", "/dev/null"])
        events = sum(int(e) for e in re.findall(r"(\d+) simulated events", err))
        rates[n] = (c / n * 1e6, events / c)
    row("run --lower=both: CPU an instance at 10^4 / 10^5 / 10^6 (linear: no step)",
        " / ".join(f"{rates[n][0]:.2f} us" for n in rates), "flat",
        max(r[0] for r in rates.values()) <= 1.5 * min(r[0] for r in rates.values()))
    row("the model, events per CPU second of the whole run, 10^6 instances",
        f"{rates[1_000_000][1]:,.0f}", ">= 50,000,000", rates[1_000_000][1] >= 5e7)

    f = gen("flat46.pipe", "random", "--stages", "1000000", "--seed", "1")
    _, c, _, mib, _ = best([pipec, "check", f])
    row("check of 10^6 flat stages: bytes a stage at the peak", f"{mib * 2**20 / 1e6:.0f} B "
        f"({mib:.0f} MiB, {c:.2f} s CPU)", "< 500 B", mib * 2**20 / 1e6 < 500)

    small = synthetic_trace("rank46.json", 100_000)
    _, c, _, mib, _ = best([pipec, "import", "-o", "/dev/null"] + [small] * 8, runs=1)
    row("import of 8 ranks x 100,000 ops: CPU, peak", f"{c:.2f} s, {mib * 2**20 / 1e6:.0f} MB",
        "< 5 s, < 500 MB", c < 5 and mib * 2**20 < 5e8)

shutil.rmtree(work)
print("| figure | measured | target | met |")
print("|---|---|---|---|")
print("\n".join(rows))
