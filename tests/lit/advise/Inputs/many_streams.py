"""Writes a pipeline of N kernels over S declared streams, each kernel
depending on two earlier ones (a fixed seed): the shape of an imported
step with many streams, where trying every stream for every held-back
stage would be a compile and a run each.

  many_streams.py N S OUT.pipe
"""
import random
import sys

n, streams, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
rng = random.Random(1)
lines = ["pipeline wide {"]
lines += [f"  stream s{s};" for s in range(streams)]
for i in range(n):
    deps = rng.sample(range(i), min(i, 2))
    clause = f" depends_on({', '.join(f'K{j}' for j in deps)})" if deps else ""
    lines.append(f"  stage K{i} on s{rng.randrange(streams)} kernel {rng.randint(5, 50)}us "
                 f"[blocks={rng.randint(1, 500)}]{clause};")
lines.append("}")
open(out, "w").write("\n".join(lines) + "\n")
