"""Every Nsight Systems export in FOLDER/nsys (or FOLDER) imports to one stage
per GPU op, its recorded span exact to the nanosecond, its file checking
clean: the counts and the span read from the export with Python's sqlite3,
not pipec."""
import glob
import json
import os
import sqlite3
import subprocess
import sys

folder = sys.argv[1]
exports = sorted(glob.glob(os.path.join(folder, "*.sqlite")) +
                 glob.glob(os.path.join(folder, "nsys", "*.sqlite")))
assert exports, f"no export in {folder}"
for path in exports:
    db = sqlite3.connect(f"file:{path}?mode=ro&immutable=1", uri=True)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    ops, first, last = 0, None, None
    for t in ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
              "CUPTI_ACTIVITY_KIND_MEMSET"):
        if t in tables:
            n, lo, hi = db.execute(f"SELECT count(*), min(start), max(end) FROM {t}").fetchone()
            ops += n
            if n:
                first = lo if first is None else min(first, lo)
                last = hi if last is None else max(last, hi)
    db.close()
    report = json.loads(subprocess.run(["pipec", "import", path, "--report", "--json"],
                                       check=True, capture_output=True, text=True).stdout)
    rec = report["recorded"]
    assert rec["ops"] == ops, (path, rec["ops"], ops)
    assert abs(rec["span_us"] - (last - first) / 1e3) < 1e-3, (path, rec["span_us"], last - first)
    pred = report["predicted"]["streams_makespan_us"]
    assert abs(pred / rec["span_us"] - 1) <= 0.05, (path, pred, rec["span_us"])
    pipe = subprocess.run(["pipec", "import", path], check=True, capture_output=True,
                          text=True).stdout
    stages = sum(1 for line in pipe.splitlines() if line.strip().startswith("stage ") and " on " in line)
    assert stages == ops, (path, stages, ops)
    check = subprocess.run(["pipec", "check", "-"], input=pipe, capture_output=True, text=True)
    assert check.returncode == 0 and "warning" not in check.stderr, (path, check.stderr[:2000])
    print(f"{os.path.basename(path)}: {ops} GPU ops, span {rec['span_us']:.3f} us, "
          f"model {100 * (pred / rec['span_us'] - 1):+.1f}%")
print(len(exports), "exports import exactly")
