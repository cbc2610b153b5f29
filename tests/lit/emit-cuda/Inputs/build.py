"""Builds emitted programs with nvcc, where nvcc exists: one program alone,
as its header says; several as one binary (together.py: one nvcc run)."""
import os
import shutil
import sys

sys.path.insert(0, os.path.dirname(__file__))
import together

sources = sys.argv[1:]
if not shutil.which(together.NVCC):
    print("no nvcc: not built")
    sys.exit(0)
if len(sources) == 1:
    result = together.build(None, None, sources, alone=True)[0]
else:
    result = together.build(sources[0][:-3] + "-together.cu", sources[0][:-3] + "-together",
                            sources)[0]
sys.stderr.write(result.stderr[-4000:])
sys.exit(result.returncode)
