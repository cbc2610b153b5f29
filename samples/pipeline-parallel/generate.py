#!/usr/bin/env python3
"""Pipeline-parallel training steps as .pipe files (language version 4).

  generate.py SCHEDULE P M [--f US] [--b US] [--w US] [-o FILE]

SCHEDULE is `1f1b` (one forward, one backward: each device keeps at most
P - d micro-batches in flight) or `zbh1` (zero-bubble ZB-H1: the backward
split into B, the gradient for the previous device, and W, the weights'
gradient, which fills what would be bubbles). P devices, one stream each;
M micro-batches; F, B and W are each pass's time on one device (default
100us each; with 1f1b, B is the whole backward, --b plus --w).

Each device's order is the schedule's: a device runs a backward when one is
ready, else a forward if it has room for another micro-batch in flight,
else (zbh1) a weight gradient. The stages are written in the order they
start (every stage after what it depends on and after its device's previous
one), so the file's stream order is the schedule's. With equal costs the
bubble of each device is (P-1)/(M+P-1) for 1F1B and (P-1)/(3M+P-1) for
ZB-H1 when M >= P: `pipec compile --emit=json` reports it as
analysis.devices[].bubble_fraction.
"""
import argparse
import sys


def schedule(kind, p, m, f, b, w):
    split = kind == "zbh1"
    if not split:
        b, w = b + w, 0.0
    done = {}                      # (pass, device, micro-batch) -> end
    free = [0.0] * p
    next_f, next_b = [0] * p, [0] * p
    pending_w = [[] for _ in range(p)]
    starts = []                    # (start, device, pass, micro-batch)
    total = p * m * (3 if split else 2)
    while len(starts) < total:
        best = None
        for d in range(p):
            choices = []
            i = next_b[d]
            if i < m and next_f[d] > i:
                deps = [("F", d, i)] if d == p - 1 else [("B", d + 1, i)]
                if all(x in done for x in deps):
                    choices.append((0, "B", i, max([free[d]] + [done[x] for x in deps])))
            i = next_f[d]
            if i < m and next_f[d] - next_b[d] < p - d:
                deps = [] if d == 0 else [("F", d - 1, i)]
                if all(x in done for x in deps):
                    choices.append((1, "F", i, max([free[d]] + [done[x] for x in deps])))
            if split and pending_w[d]:
                choices.append((2, "W", pending_w[d][0], free[d]))
            if choices:
                c = min(choices, key=lambda c: (c[3], c[0]))
                if best is None or (c[3], d) < (best[1][3], best[0]):
                    best = (d, c)
        d, (_, kind_, i, start) = best
        end = start + {"F": f, "B": b, "W": w}[kind_]
        done[(kind_, d, i)] = end
        free[d] = end
        starts.append((start, d, kind_, i))
        if kind_ == "F":
            next_f[d] += 1
        elif kind_ == "B":
            next_b[d] += 1
            if split:
                pending_w[d].append(i)
        else:
            pending_w[d].pop(0)
    return sorted(starts), b, w


def write(kind, p, m, f, b, w, out):
    starts, b, w = schedule(kind, p, m, f, b, w)
    name = {"1f1b": "one_f_one_b", "zbh1": "zb_h1"}[kind]
    out.write(f"// {kind}: {p} devices, {m} micro-batches; written by "
              f"samples/pipeline-parallel/generate.py {kind} {p} {m}\n")
    out.write("version 4;\n\n")
    out.write(f"pipeline {name} {{\n")
    for d in range(p):
        out.write(f"  device gpu{d};\n")
    for d in range(p):
        out.write(f"  stream s{d} on gpu{d};\n")
    time = {"F": f, "B": b, "W": w}
    for _, d, k, i in starts:
        deps = []
        if k == "F" and d > 0:
            deps.append(f"F{i}_{d - 1}")
        if k == "B":
            deps.append(f"F{i}_{d}" if d == p - 1 else f"B{i}_{d + 1}")
        if k == "W":
            deps.append(f"B{i}_{d}")
        dep = f" depends_on({', '.join(deps)})" if deps else ""
        out.write(f"  stage {k}{i}_{d} on s{d} kernel {time[k]:g}us{dep};\n")
    out.write("}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("schedule", choices=["1f1b", "zbh1"])
    ap.add_argument("p", type=int)
    ap.add_argument("m", type=int)
    ap.add_argument("--f", type=float, default=100)
    ap.add_argument("--b", type=float, default=100)
    ap.add_argument("--w", type=float, default=100)
    ap.add_argument("-o", dest="output")
    a = ap.parse_args()
    if a.p < 1 or a.m < 1:
        sys.exit("generate.py: P and M must be at least 1")
    out = open(a.output, "w") if a.output else sys.stdout
    write(a.schedule, a.p, a.m, a.f, a.b, a.w, out)


if __name__ == "__main__":
    main()
