#!/usr/bin/env python3
"""What a run's what-ifs cost beside its simulations: the gap between a run
and its bound is explained by nine more runs of the model, each a mode of
it (issue 42 asked that they cost no more than the simulations they are).
For each program: the whole command's CPU time and peak memory, and the
simulations' own time as --stats reports it. Prints a Markdown table.

    bench/whatif-cost.py [path/to/pipec]     (default: build/pipec)
"""
import os
import re
import resource
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
pipec = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "build", "pipec")


def devices(n):
    lines = ["version 4;", "pipeline many {", "  iterations 10;"]
    lines += [f"  device gpu{d};\n  stream s{d} on gpu{d};" for d in range(n)]
    lines += [f"  stage K{d} on s{d} kernel 10us;" for d in range(n)]
    return "\n".join(lines + ["}"]) + "\n"


def measure(path, command):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    extra = ["--stats"] if command == "run" else []
    r = subprocess.run([pipec, command, path, "--backend=sim", *extra, "-o", os.devnull],
                       capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    sims = sum(float(s) for s in re.findall(r"simulated events in ([\d.]+) s", r.stderr))
    return r.returncode, cpu, sims, after.ru_maxrss // 1024


with tempfile.TemporaryDirectory() as work:
    cases = []
    p = os.path.join(work, "stages.pipe")
    subprocess.run([sys.executable, os.path.join(here, "gen.py"), "random", "--stages", "64",
                    "--streams", "8", "--iterations", "100", "-o", p], check=True)
    cases.append(("64 stages x 100 iterations, 8 streams", p))
    p = os.path.join(work, "devices.pipe")
    open(p, "w").write(devices(64))
    cases.append((f"64 devices, one kernel each ({os.path.getsize(p):,} bytes)", p))
    print("| program | command | CPU s | simulations s (run's own) | peak MiB |")
    print("|---|---|---|---|---|")
    for name, path in cases:
        for command in ("run", "advise"):
            rc, cpu, sims, mib = measure(path, command)
            shown = f"{sims:.3f}" if command == "run" else "-"
            print(f"| {name} | {command} | {cpu:.2f} | {shown} | {mib} |"
                  + ("" if rc == 0 else f" (exit {rc})"))
