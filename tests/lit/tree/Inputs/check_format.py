"""Names each C++ file under ROOT's compiler/, model/, runtime/, tools/, tests/ and
bench/ that clang-format 14 would lay out otherwise; exit 1 if there is one.

    check_format.py ROOT
"""
import os
import subprocess
import sys

root = os.path.abspath(sys.argv[1])
files = []
for top in ("compiler", "model", "runtime", "tools", "tests", "bench"):
    for dirpath, dirs, names in os.walk(os.path.join(root, top)):
        dirs[:] = sorted(d for d in dirs if d not in ("Inputs", "Output"))
        files += [os.path.join(dirpath, n) for n in sorted(names)
                  if n.endswith((".cpp", ".h", ".cu"))]
# One clang-format for all: it names each file it would change, at each
# place ("FILE:LINE:COL: error: code should be clang-formatted").
r = subprocess.run(["clang-format-14", "--dry-run", "--Werror", *files],
                   capture_output=True, text=True, cwd=root)
flagged = {line.split(":", 1)[0] for line in r.stderr.splitlines()
           if "code should be clang-formatted" in line}
wrong = 0
for path in files:
    if path in flagged:
        rel = os.path.relpath(path, root)
        print(f"{rel}: not laid out as .clang-format says (clang-format-14 -i {rel})")
        wrong += 1
if r.returncode != 0 and not wrong:
    sys.exit("clang-format-14 failed: " + r.stderr[-2000:])
print(f"{len(files)} files, {wrong} laid out otherwise")
sys.exit(1 if wrong else 0)
