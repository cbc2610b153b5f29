#!/usr/bin/env python3
"""Import of a large Nsight Systems export against reading it with sqlite3.

Usage: bench/nsys-scale.py [PIPEC] [--kernels=N] [--keep=PATH]
(default 1,000,000 kernels; --keep copies the export to PATH)

Writes an export of N kernels on 4 streams, each launched by its own
cudaLaunchKernel row (the real schema's tables and columns, from
tests/lit/import/Inputs/nsys-schema.sql), then measures, in the same run,
the CPU seconds and peak memory of `sqlite3 FILE "SELECT * FROM
CUPTI_ACTIVITY_KIND_KERNEL"` (the floor: reading the kernel table) and of
`pipec import FILE -o /dev/null`. Issue 47's target: the import at most 3x
the floor. Results are kept in docs/performance.md.
"""
import os
import sqlite3
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
args = [a for a in sys.argv[1:] if not a.startswith("--")]
options = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
pipec = args[0] if args else os.path.join(here, "..", "build", "pipec")
n = int(options.get("kernels", "1000000"))
schema = os.path.join(here, "..", "tests", "lit", "import", "Inputs", "nsys-schema.sql")


def timed(cmd):
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed: {err[:500]}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


with tempfile.TemporaryDirectory() as tmp:
    path = os.path.join(tmp, "big.sqlite")
    db = sqlite3.connect(path)
    with open(schema) as f:
        db.executescript(f.read())
    db.execute("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_SCHEMA_VERSION', '3.13.2')")
    db.executemany("INSERT INTO StringIds VALUES (?, ?)",
                   [(1, "cudaLaunchKernel_v7000")] +
                   [(10 + k, f"void ns::kernel_{k}<float>(float*, int)") for k in range(50)])
    db.execute("INSERT INTO TARGET_INFO_GPU VALUES (1, 0, 'NVIDIA H100 80GB HBM3', 132, 49152, "
               "232448, 233472, 65536, 32, 64, 1024, 9, 0)")
    t = 1000
    calls, kernels = [], []
    for i in range(n):
        calls.append((t, t + 3000, 1, 77, 100 + i, 1, 0, None))
        kernels.append((t + 5000, t + 9000 + (i % 5) * 1000, 0, 1, 7 + i % 4, 100 + i, 5,
                        10 + i % 50, 10 + i % 50, 32, 64, 1, 1, 256, 1, 1, 0, 0, None))
        t += 4000
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   calls)
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES "
                   "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", kernels)
    db.commit()
    db.close()
    size = os.path.getsize(path) / 2**20
    if "keep" in options:
        import shutil
        shutil.copy(path, options["keep"])
    floor = min(timed(["sqlite3", path, "SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL"])
                for _ in range(2))
    ours = min(timed([pipec, "import", path, "-o", os.devnull]) for _ in range(2))
    print("| export | sqlite3 SELECT * (kernels) CPU s | pipec import CPU s | ratio | "
          "pipec peak MiB |")
    print("|---|---|---|---|---|")
    print(f"| {n:,} kernels, {size:.0f} MiB | {floor[0]:.2f} | {ours[0]:.2f} | "
          f"{ours[0] / floor[0]:.2f}x | {ours[1]:.0f} |")
