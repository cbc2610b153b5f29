"""The bubble formulas, exactly, in `compile --emit=json`'s analysis.devices.

  check_bubbles.py PIPEC GENERATE WORKDIR

For P in {2, 4, 8} devices and M in {4, 8, 32} micro-batches, with equal
pass costs: 1F1B's bubble on every device is (P-1)/(M+P-1); interleaved
1F1B's with V = 2 and 4 chunks per device (P-1)/(V*M+P-1) (it takes
micro-batches in groups of P: M a multiple of P); ZB-H1's (P-1)/(3M+P-1)
where M >= P. (With M < P no ZB-H1 order reaches it: the last
micro-batch's backward reaches the first device 2P-1 passes after its
forward began, and its weight gradient follows, past the 3M+P-1 the
formula needs when M < P; the check there is that the bubble is above it.)
Each device's busy time is the passes it runs. The same schedule with its
activations and gradients sent as peer copies of 0 bytes (--comm 0B) has
the same busy times and bubbles. Prints one line per case.
"""
import json
import os
import subprocess
import sys

pipec, generate, work = sys.argv[1:4]
# The generator's own function, not its command line: a Python start apiece
# was most of this test's time.
sys.path.insert(0, os.path.dirname(os.path.abspath(generate)))
import generate as gen


def write(path, kind, p, m, v, comm=None):
    with open(path, "w") as out:
        gen.write(kind, p, m, 100, 100, 100, out, v, comm)  # the defaults


failed = 0
for kind, v in (("1f1b", 1), ("zbh1", 1), ("interleaved", 2), ("interleaved", 4)):
    for p in (2, 4, 8):
        for m in (4, 8, 32):
            label = f"{kind} v={v}" if kind == "interleaved" else kind
            if kind == "interleaved" and m % p:
                print(f"{label} p={p} m={m}: M not a multiple of P, no such schedule")
                continue
            path = os.path.join(work, f"{kind}-{v}-{p}-{m}.pipe")
            write(path, kind, p, m, v)
            out = subprocess.run([pipec, "compile", path, "--emit=json"], check=True,
                                 capture_output=True, text=True).stdout
            a = json.loads(out)["pipelines"][0]["analysis"]
            formula = {"1f1b": (p - 1) / (m + p - 1), "zbh1": (p - 1) / (3 * m + p - 1),
                       "interleaved": (p - 1) / (v * m + p - 1)}[kind]
            exact = kind != "zbh1" or m >= p
            for d in a["devices"]:
                ok = d["busy_us"] == m * 300.0  # F + B + W, or F + the whole B
                ok = ok and (abs(d["bubble_fraction"] - formula) < 1e-12 if exact
                             else d["bubble_fraction"] > formula)
                if not ok:
                    failed += 1
                    print(f"FAIL {label} p={p} m={m} {d} formula={formula}")
            # Communication that costs nothing (peer copies of 0 bytes, each
            # awaited by its consumer) changes no bubble.
            free = path[:-5] + "-comm0.pipe"
            write(free, kind, p, m, v, "0B")
            b = json.loads(subprocess.run([pipec, "compile", free, "--emit=json"], check=True,
                                          capture_output=True, text=True).stdout)
            b = b["pipelines"][0]["analysis"]
            for d, e in zip(a["devices"], b["devices"]):
                if (d["busy_us"], d["bubble_fraction"]) != (e["busy_us"], e["bubble_fraction"]):
                    failed += 1
                    print(f"FAIL {label} p={p} m={m} with free communication: {e} != {d}")
            print(f"{label} p={p} m={m}: {len(a['devices'])} devices, bubble "
                  f"{a['devices'][0]['bubble_fraction']:.6f}, formula {formula:.6f}")
sys.exit(1 if failed else 0)
