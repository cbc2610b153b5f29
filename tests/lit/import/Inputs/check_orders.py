"""Every ordering a recording shows holds in the model's run of its import,
checked from the trace alone, not from the dependencies the import wrote:
the run (`pipec run --backend=sim` of the imported file, on its profile)
never starts an op before one it waited for in the recording:

  - the op before it on its stream (streams run in order);
  - with sync events, the op a Stream Wait Event waited for: the last op
    issued to the recorded stream before the event's record, for the
    first op issued to the waiting stream after the wait;
  - an op that sat queued until another stream's op ended: 100 us or more
    after its own stream's previous op had ended (and its launch call had
    returned, where the trace has it), it began within 5 us of the end of
    an op issued before it where its call is not in the trace (a sampled
    trace), or 5 to 100 us after it with nothing running on the GPU in
    between (sooner, it may have waited for room on the SMs).

Stages are matched to the recorded ops on their stream, in order, by the
name in their comment. A trace, or every trace in a folder (*.json,
*.json.gz), at its default step (or --step=N).

--drop=STAGE takes the imported stage's dependencies out before the run
(the test that this check fails when an ordering is lost).

  check_orders.py TRACE|DIR [--step=N] [--tmp=PREFIX] [--drop=STAGE]"""
import glob
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

args = [a for a in sys.argv[1:] if not a.startswith("--")]
opts = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
if not args:
    sys.exit(__doc__)
path = args[0]
traces = (sorted(glob.glob(os.path.join(path, "*.json")) + glob.glob(os.path.join(path, "*.json.gz")))
          if os.path.isdir(path) else [path])
tmp = opts.get("tmp") or os.path.join(tempfile.mkdtemp(), "orders")
STAGE = re.compile(r"^\s*stage (\S+)\s+on (s-?\d+)\s.*?; // (.*)$")
TIME = re.compile(r"\s(?:kernel|memset|copy \w+) ([0-9.]+)us")
RECORDED = re.compile(r"; recorded ([0-9.]+)us beside")
GPU = ("kernel", "gpu_memcpy", "gpu_memset")
SLACK = 0.01  # us: the run's own rounding


def pipec(*argv):
    return subprocess.run(["pipec", *argv], check=True, capture_output=True, text=True)


def load(trace):
    opener = gzip.open if trace.endswith(".gz") else open
    with opener(trace, "rt") as f:
        return json.load(f)["traceEvents"]


def clean(name):
    return "".join(" " if ord(c) < 0x20 or ord(c) == 0x7F else c for c in name)


def same(name, comment):
    """Whether a stage's comment names the recorded op (a long name cut
    short with '...')."""
    if not name:
        return False
    cut = comment.find("...")
    return comment.startswith(name) or (cut > 0 and name.startswith(comment[:cut]))


def check(trace):
    step = ["--step=" + opts["step"]] if "step" in opts else []
    pipe, profile, run = tmp + ".pipe", tmp + ".profile.json", tmp + ".run.json"
    pipec("import", trace, *step, "-o", pipe, "--profile-out=" + profile)
    if "drop" in opts:
        text = open(pipe).read()
        text = re.sub(r"(stage " + re.escape(opts["drop"]) + r" .*?)depends_on\([^)]*\)", r"\1",
                      text)
        open(pipe, "w").write(text)
    pipec("run", pipe, "--backend=sim", "--profile=" + profile, "--trace=" + run)

    # The imported device stages per stream, in order, with their names;
    # the step the file holds.
    stages = {}
    header = open(pipe).readline()
    number = re.search(r"ProfilerStep#(-?\d+)", header)
    for line in open(pipe):
        m = STAGE.match(line)
        if m and not m.group(3).startswith("the next op on this stream waited"):
            took = RECORDED.search(m.group(3)) or TIME.search(line)
            stages.setdefault(int(m.group(2)[1:]), []).append(
                (m.group(1), m.group(3), float(took.group(1)) if took else None))
    # The run: each stage's start and end.
    events = json.load(open(run))
    events = events["traceEvents"] if isinstance(events, dict) else events
    start, end = {}, {}
    for e in events:
        stage = e.get("args", {}).get("stage")
        if e.get("ph") == "X" and stage is not None and e.get("cat") != "api":
            start[stage], end[stage] = e["ts"], e["ts"] + e["dur"]

    # The recording: each stream's ops in the order they ran, matched to the
    # stages on it (a contiguous run of them: the step's, backlog first).
    events = load(trace)
    ops = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in GPU:
            ops.setdefault(e.get("args", {}).get("stream"), []).append(e)
    calls = {e["args"]["correlation"] for e in events
             if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")
             and "correlation" in e.get("args", {})}
    # Of the runs that match (a stream repeats its ops step after step),
    # the one that begins nearest the step's start.
    anchor = -float("inf")
    if number:
        for e in events:
            if e.get("ph") == "X" and e.get("name") == "ProfilerStep#" + number.group(1):
                anchor = e["ts"]
    stage_of = {}  # id(recorded op) -> stage name
    for stream, mine in stages.items():
        recorded = sorted(ops.get(stream, []), key=lambda e: e["ts"])
        names = [clean(e["name"]) for e in recorded]
        runs = [k for k in range(len(recorded) - len(mine) + 1)
                if all(same(names[k + i], mine[i][1]) for i in range(len(mine)))]
        if not runs:
            sys.exit(f"{trace}: the stages on s{stream} match no run of its recorded ops")

        def miss(k):
            """How far the run's recorded times are from the stages' (the
            first left out: a backlog op is written as its part in the step)."""
            return sum(abs(recorded[k + i]["dur"] - took) for i, (_, _, took) in
                       enumerate(mine) if i and took is not None)
        k = min(runs, key=lambda k: (round(miss(k), 1), abs(recorded[k]["ts"] - anchor)))
        for i, (name, _, _) in enumerate(mine):
            stage_of[id(recorded[k + i])] = name

    pairs = {"same stream": [], "recorded wait": [], "sat queued": []}
    by_corr = {}
    for stream, recorded in ops.items():
        recorded.sort(key=lambda e: e["ts"])
        for a, b in zip(recorded, recorded[1:]):
            pairs["same stream"].append((a, b))
        for e in recorded:
            by_corr.setdefault(stream, []).append(e)
    for stream in by_corr:
        by_corr[stream].sort(key=lambda e: e["args"].get("correlation", -1))
    for e in events:
        a = e.get("args", {})
        if e.get("cat") != "cuda_sync" or a.get("cuda_sync_kind") != "Stream Wait Event":
            continue
        record, on, waiter = (a.get("wait_on_cuda_event_record_corr_id"), a.get("wait_on_stream"),
                              a.get("stream"))
        if record is None or on is None or record < 0:
            continue
        before = [o for o in by_corr.get(on, []) if o["args"].get("correlation", -1) < record]
        after = [o for o in by_corr.get(waiter, [])
                 if o["args"].get("correlation", -1) > a.get("correlation", 1 << 62)]
        if before and after:
            pairs["recorded wait"].append((before[-1], after[0]))
    every = sorted((e for recorded in ops.values() for e in recorded),
                   key=lambda e: e["ts"] + e["dur"])
    ends = [e["ts"] + e["dur"] for e in every]
    # Until when some op ran, before each op's start: the latest end among
    # the ops that began before it.
    by_start = sorted(every, key=lambda e: e["ts"])
    starts, latest, running = [], [], float("-inf")
    for e in by_start:
        starts.append(e["ts"])
        running = max(running, e["ts"] + e["dur"])
        latest.append(running)
    returned = {e["args"]["correlation"]: e["ts"] + e["dur"] for e in events
                if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")
                and "correlation" in e.get("args", {})}
    import bisect
    for stream, recorded in ops.items():
        for i, b in enumerate(recorded):
            if id(b) not in stage_of:
                continue
            free = recorded[i - 1]["ts"] + recorded[i - 1]["dur"] if i else None
            if free is not None and b["ts"] - free < 100:
                continue
            call = returned.get(b["args"].get("correlation"))
            if call is not None and b["ts"] - call < 100:
                continue
            k = bisect.bisect_right(ends, b["ts"]) - 1
            if k < 0 or every[k]["args"].get("stream") == stream:
                continue
            if every[k]["args"].get("correlation", -1) > b["args"].get("correlation", 1 << 62):
                continue  # issued after it: not what it waited for
            gap = b["ts"] - ends[k]
            j = bisect.bisect_left(starts, b["ts"] - 0.5) - 1
            idle_between = j < 0 or latest[j] <= ends[k] + 0.5
            if (call is None and gap <= 5) or (5 < gap < 100 and idle_between):
                pairs["sat queued"].append((every[k], b))

    broken, held = [], {}
    for kind, list_ in pairs.items():
        held[kind] = 0
        for a, b in list_:
            sa, sb = stage_of.get(id(a)), stage_of.get(id(b))
            if sa is None or sb is None or sa not in end or sb not in start:
                continue  # outside the step
            if start[sb] < end[sa] - SLACK:
                broken.append(f"{kind}: {sb} starts at {start[sb]:.2f} us, before {sa} ends "
                              f"({end[sa]:.2f} us)")
            else:
                held[kind] += 1
    if broken:
        sys.exit(f"{trace}: {len(broken)} recorded ordering(s) broken in the run:\n  " +
                 "\n  ".join(broken[:20]))
    return held


total = {}
for trace in traces:
    for kind, n in check(trace).items():
        total[kind] = total.get(kind, 0) + n
print(f"{len(traces)} trace(s): every recorded ordering holds in the run (" +
      ", ".join(f"{n} {kind}" for kind, n in total.items()) + ")")
