"""Runs an emitted program's own build line (its header's "// Build:"), in
the program's folder, where nvcc exists: the line builds it, warnings
as errors.

  build_line.py FILE.cu
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import together

path = sys.argv[1]
if not shutil.which(together.NVCC):
    print("no nvcc: not built")
    sys.exit(0)
line = next(l for l in open(path) if l.startswith("// Build: "))
command = line[len("// Build: "):].split("   (")[0].strip()
command = command.replace("nvcc ", together.NVCC + " -Werror all-warnings -Xcompiler=-Wall,-Wextra,-Werror ", 1)
r = subprocess.run(command, shell=True, cwd=os.path.dirname(path), capture_output=True, text=True,
                   timeout=600)
sys.stderr.write(r.stderr[-3000:])
sys.exit(r.returncode)
