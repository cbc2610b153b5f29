#!/usr/bin/env python3
"""Pipeline-parallel training steps as .pipe files (language version 4).

  generate.py SCHEDULE P M [--f US] [--b US] [--w US] [--v V] [--comm SIZE]
              [-o FILE]

SCHEDULE is `1f1b` (one forward, one backward: each device keeps at most
P - d micro-batches in flight), `zbh1` (zero-bubble ZB-H1: the backward
split into B, the gradient for the previous device, and W, the weights'
gradient, which fills what would be bubbles) or `interleaved` (Megatron's
interleaved 1F1B: each device holds --v model chunks, each pass 1/V of the
time; M a multiple of P) or `dualpipe` (DualPipe-style: micro-batches fed
from both ends, each device holding a stage of each direction, the backward
split as in ZB-H1; M even). P devices, one stream each;
M micro-batches; F, B and W are each pass's time on one device (default
100us each; with 1f1b, B is the whole backward, --b plus --w).

Each device's order is the schedule's: a device runs a backward when one is
ready, else a forward if it has room for another micro-batch in flight,
else (zbh1) a weight gradient. The stages are written in the order they
start (every stage after what it depends on and after its device's previous
one), so the file's stream order is the schedule's. With equal costs the
bubble of each device is (P-1)/(M+P-1) for 1F1B, (P-1)/(V*M+P-1)
interleaved, and (P-1)/(3M+P-1) for ZB-H1 when M >= P: `pipec compile
--emit=json` reports it as analysis.devices[].bubble_fraction.

With --comm SIZE, each activation (forward) and gradient (backward) that
crosses devices is a `copy p2p` of SIZE on the sender's comm stream, which
its consumer waits for: the analysis then says how much of that
communication the devices' work hides (analysis.devices[].comm_us and
comm_hidden_fraction), and how much the bubble grows.
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


def interleaved(p, m, v, f, b):
    """Megatron's interleaved 1F1B: device d holds model chunks c*p + d for
    c < v; forwards go through the P*V virtual stages, backwards back. Each
    device runs, in groups of P micro-batches, its chunks in order forward
    and in reverse backward: (P-d-1)*2 + (V-1)*P forwards to warm up, then
    one forward, one backward, then the backwards left."""
    stages = p * v

    def order(chunks):
        return [(c, i) for g in range(0, m, p) for c in chunks
                for i in range(g, min(g + p, m))]

    plans = []
    for d in range(p):
        fwd, bwd = order(list(range(v))), order(list(reversed(range(v))))
        warm = min(m * v, (p - d - 1) * 2 + (v - 1) * p)
        plan = [("F",) + x for x in fwd[:warm]]
        fi, bi = warm, 0
        while fi < m * v:
            plan += [("F",) + fwd[fi], ("B",) + bwd[bi]]
            fi, bi = fi + 1, bi + 1
        plan += [("B",) + x for x in bwd[bi:]]
        plans.append(plan)

    def deps(k, c, i, d):
        s = c * p + d
        if k == "F":
            return [] if s == 0 else [("F", (s - 1) // p, i, (s - 1) % p)]
        if s == stages - 1:
            return [("F", c, i, d)]
        return [("B", (s + 1) // p, i, (s + 1) % p)]

    done, free, at, starts = {}, [0.0] * p, [0] * p, []
    while len(starts) < 2 * stages * m:
        for d in range(p):
            if at[d] < len(plans[d]):
                k, c, i = plans[d][at[d]]
                ds = deps(k, c, i, d)
                if all(x in done for x in ds):
                    start = max([free[d]] + [done[x] for x in ds])
                    done[(k, c, i, d)] = free[d] = start + (f if k == "F" else b) / v
                    at[d] += 1
                    starts.append((start, d, k, c, i, ds))
    return sorted(starts)


def dualpipe(p, m, f, b, w):
    """DualPipe-style (after DeepSeek-V3's DualPipe, without its overlap of
    one micro-batch's forward with another's backward inside a chunk): the
    micro-batches enter from both ends, the first half at device 0, the
    second at device P-1; device d holds stage d of the first direction and
    stage P-1-d of the second. The backward is split into B and W as in
    ZB-H1, and each device runs, as soon as it can, a backward, else a
    forward within its in-flight limit for that direction (P - stage), else
    a weight gradient."""
    half = m // 2
    dirs = [range(0, half), range(half, m)]
    stage = lambda r, d: d if r == 0 else p - 1 - d
    device = lambda r, st: st if r == 0 else p - 1 - st
    done, free, starts = {}, [0.0] * p, []
    next_f = [[0, 0] for _ in range(p)]
    next_b = [[0, 0] for _ in range(p)]
    pending_w = [[] for _ in range(p)]
    total = 3 * m * p
    while len(starts) < total:
        best = None
        for d in range(p):
            choices = []
            for r in (0, 1):
                st, mbs = stage(r, d), dirs[r]
                k = next_b[d][r]
                if k < len(mbs) and next_f[d][r] > k:
                    i = mbs[k]
                    deps = [("F", d, i)] if st == p - 1 else [("B", device(r, st + 1), i)]
                    if all(x in done for x in deps):
                        choices.append((0, "B", r, i, deps,
                                        max([free[d]] + [done[x] for x in deps])))
                k = next_f[d][r]
                if k < len(mbs) and next_f[d][r] - next_b[d][r] < p - st:
                    i = mbs[k]
                    deps = [] if st == 0 else [("F", device(r, st - 1), i)]
                    if all(x in done for x in deps):
                        choices.append((1, "F", r, i, deps,
                                        max([free[d]] + [done[x] for x in deps])))
            if pending_w[d]:
                r, i = pending_w[d][0]
                choices.append((2, "W", r, i, [("B", d, i)], free[d]))
            if choices:
                c = min(choices, key=lambda c: (c[5], c[0], c[2]))
                if best is None or (c[5], d) < (best[1][5], best[0]):
                    best = (d, c)
        d, (_, k, r, i, deps, start) = best
        done[(k, d, i)] = free[d] = start + {"F": f, "B": b, "W": w}[k]
        starts.append((start, d, k, i, deps))
        if k == "F":
            next_f[d][r] += 1
        elif k == "B":
            next_b[d][r] += 1
            pending_w[d].append((r, i))
        else:
            pending_w[d].pop(0)
    return sorted(starts)


def header(out, kind, p, m, name, args, comm):
    out.write(f"// {kind}: {p} devices, {m} micro-batches; written by "
              f"samples/pipeline-parallel/generate.py {args}\n")
    out.write("version 4;\n\n")
    out.write(f"pipeline {name} {{\n")
    for d in range(p):
        out.write(f"  device gpu{d};\n")
    for d in range(p):
        out.write(f"  stream s{d} on gpu{d};\n")
    if comm:
        for d in range(p):
            out.write(f"  stream c{d} on gpu{d};\n")


class Sends:
    """With --comm: what crosses devices goes by a peer copy on the sender's
    comm stream, written right after its producer; the consumer depends on
    the copy."""

    def __init__(self, out, comm):
        self.out, self.comm = out, comm

    def after(self, producer, device, to):
        """Writes the copy of `producer` (on `device`) to device `to`."""
        if self.comm and to != device:
            self.out.write(f"  stage to{to}_{producer} on c{device} copy p2p {self.comm} "
                           f"to gpu{to} depends_on({producer});\n")

    def dep(self, producer, device, to):
        return f"to{to}_{producer}" if self.comm and to != device else producer


def write(kind, p, m, f, b, w, out, v=2, comm=None):
    sends = Sends(out, comm)
    suffix = f" --comm {comm}" if comm else ""
    if kind == "interleaved":
        header(out, kind, p, m, "interleaved_1f1b", f"{kind} {p} {m} --v {v}{suffix}", comm)
        name = lambda k, c, i, d: f"{k}{i}c{c}_{d}"
        plan = interleaved(p, m, v, f, b + w)
        consumer = {x: d for _, d, _, _, _, ds in plan for x in ds if x[3] != d}
        for _, d, k, c, i, ds in plan:
            time = (f if k == "F" else b + w) / v
            dep = ", ".join(sends.dep(name(*x), x[3], d) for x in ds)
            dep = f" depends_on({dep})" if dep else ""
            out.write(f"  stage {name(k, c, i, d)} on s{d} kernel {time:g}us{dep};\n")
            if (k, c, i, d) in consumer:
                sends.after(name(k, c, i, d), d, consumer[(k, c, i, d)])
        out.write("}\n")
        return
    if kind == "dualpipe":
        header(out, kind, p, m, "dual_pipe", f"{kind} {p} {m}{suffix}", comm)
        plan = dualpipe(p, m, f, b, w)
        # Each pass has one consumer on another device, at most.
        consumer = {x: d for _, d, _, _, deps in plan for x in deps if x[1] != d}
        for _, d, k, i, deps in plan:
            dep = ", ".join(sends.dep(f"{x[0]}{x[2]}_{x[1]}", x[1], d) for x in deps)
            dep = f" depends_on({dep})" if dep else ""
            time = {"F": f, "B": b, "W": w}[k]
            out.write(f"  stage {k}{i}_{d} on s{d} kernel {time:g}us{dep};\n")
            if (k, d, i) in consumer:
                sends.after(f"{k}{i}_{d}", d, consumer[(k, d, i)])
        out.write("}\n")
        return
    starts, b, w = schedule(kind, p, m, f, b, w)
    header(out, kind, p, m, {"1f1b": "one_f_one_b", "zbh1": "zb_h1"}[kind],
           f"{kind} {p} {m}{suffix}", comm)
    time = {"F": f, "B": b, "W": w}
    for _, d, k, i in starts:
        deps = []
        if k == "F" and d > 0:
            deps.append(sends.dep(f"F{i}_{d - 1}", d - 1, d))
        if k == "B":
            deps.append(f"F{i}_{d}" if d == p - 1 else sends.dep(f"B{i}_{d + 1}", d + 1, d))
        if k == "W":
            deps.append(f"B{i}_{d}")
        dep = f" depends_on({', '.join(deps)})" if deps else ""
        out.write(f"  stage {k}{i}_{d} on s{d} kernel {time[k]:g}us{dep};\n")
        # The activation goes forward, the gradient back.
        if k == "F" and d < p - 1:
            sends.after(f"F{i}_{d}", d, d + 1)
        if k == "B" and d > 0:
            sends.after(f"B{i}_{d}", d, d - 1)
    out.write("}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("schedule", choices=["1f1b", "zbh1", "interleaved", "dualpipe"])
    ap.add_argument("p", type=int)
    ap.add_argument("m", type=int)
    ap.add_argument("--f", type=float, default=100)
    ap.add_argument("--b", type=float, default=100)
    ap.add_argument("--w", type=float, default=100)
    ap.add_argument("--v", type=int, default=2, help="interleaved: model chunks per device")
    ap.add_argument("--comm", metavar="SIZE",
                    help="send each activation and gradient between devices as a "
                         "peer copy of SIZE (e.g. 16MB) on a comm stream per device")
    ap.add_argument("-o", dest="output")
    a = ap.parse_args()
    if a.p < 1 or a.m < 1 or a.v < 1:
        sys.exit("generate.py: P, M and V must be at least 1")
    if a.schedule == "interleaved" and a.m % a.p:
        sys.exit("generate.py: the interleaved schedule takes micro-batches in groups of P: "
                 "M must be a multiple of P")
    if a.schedule == "dualpipe" and (a.m % 2 or a.m < 2):
        sys.exit("generate.py: the dualpipe schedule feeds half the micro-batches from each "
                 "end: M must be even")
    out = open(a.output, "w") if a.output else sys.stdout
    write(a.schedule, a.p, a.m, a.f, a.b, a.w, out, a.v, a.comm)


if __name__ == "__main__":
    main()
