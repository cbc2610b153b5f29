#!/usr/bin/env python3
"""Time and peak memory of `pipec check` on inputs built to hurt it.

Usage: bench/adversarial.py [PIPEC] [--scale=F]

Each case is written to a temporary folder and checked once; the table
gives wall time, peak resident memory and the exit status (1 is expected
where the input is wrong). Results are kept in docs/robustness.md.
"""
import os
import subprocess
import sys
import tempfile
import time


def cases(scale):
    n = lambda k: max(1, int(k * scale))
    yield "10 MB of '(' at top level", "(" * n(10_000_000)
    yield "1 MB of '(' inside one stage", (
        "pipeline p { stream s; stage a on s kernel " + "(" * n(1_000_000) + "}")
    names = n(20_000)
    yield f"{names} stages naming unknown stages", "pipeline p {\n stream s;\n" + "".join(
        f" stage a{i} on s kernel 1us depends_on b{i}x;\n" for i in range(names)) + "}\n"
    yield "30,000 errors on one line", "pipeline p { " + "stage ; " * n(30_000) + "}"
    yield "300 streams declared (limit 256)", "pipeline p {\n" + "".join(
        f" stream s{i};\n stage k{i} on s{i} kernel 1us;\n" for i in range(300)) + "}\n"
    yield "huge grid (2^31-1 blocks)", (
        "pipeline p { stream s; stage k on s kernel 10us [blocks=2147483647, "
        "threads=1024]; stage h on s kernel 10us [blocks=2147483647]; }")
    pipes = n(2_000)
    yield f"{pipes} pipelines", "".join(
        f"pipeline p{i} {{ stream s; stage k on s kernel 1us; }}\n" for i in range(pipes))
    yield "1 MB name-like token", "pipeline " + "x" * n(1_000_000) + " { }"


def run(pipec, path):
    start = time.monotonic()
    # `run` simulates too, where the check passes.
    proc = subprocess.Popen([pipec, "run", "--error-limit=0", path],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.monotonic() - start
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--scale=")]
    scale = float(next((a.split("=", 1)[1] for a in sys.argv[1:]
                        if a.startswith("--scale=")), "1"))
    pipec = args[0] if args else "build/pipec"
    print("| input | wall s | peak MB | exit |")
    print("| --- | ---: | ---: | ---: |")
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in cases(scale):
            path = os.path.join(tmp, "case.pipe")
            with open(path, "w") as f:
                f.write(text)
            wall, mb, rc = run(pipec, path)
            print(f"| {name} | {wall:.2f} | {mb:.0f} | {rc} |", flush=True)


if __name__ == "__main__":
    main()
