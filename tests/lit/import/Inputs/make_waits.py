"""Small Kineto traces that each show one way the host waits or the GPU
idles (docs/import.md, "The host, as recorded"), written to a folder:

  calls.json  a cudaMalloc that takes 300 us of the host's own time, and a
              cudaFree that waits for the kernels before it (it synchronises
              the device) and then frees;
  queue.json  600 launches of 20 us kernels, one every 5 us, into a driver
              queue that holds 300: from the 300th on, each launch call
              returns only once an op has started;
  graph.json  a cudaGraphLaunch of three kernels, the GPU idle 400 us
              between the first two for no reason the trace holds;
  graph_dep.json  a graph's first kernel waits (a recorded stream wait) for
              another stream's kernel, then 200 us more for no reason the
              trace holds, while a third stream's kernel runs until 20 us
              before it: the wait is measured from what it follows;
  backlog_wait.json, backlog_nosync.json  step 2 begins with two of step
              1's kernels still to run, the second behind the first by a
              stream wait issued in step 1 (as a sync event; and only as the
              call, no sync events);
  sampled.json  a kernel whose launch call the trace lacks (a sampled
              trace) began 5 us after another stream's kernel ended, 500 us
              after its stream was free: it waited for that kernel;
  contended.json  two kernels that shared the SMs: 'b' (108 blocks of 1,024
              threads, half of what an A100 holds) ran 100 us, 'a' (216
              such blocks, one wave alone) began beside it and took 200 us:
              half its blocks waited for b's;
  gaps.json   200 kernels queued on one stream, each beginning 3 us after
              the one before it ended: the device's own gap;
  poll.json   the host polls cudaEventQuery every 50 us until a 500 us
              kernel is done, then launches the next;
  laststep.json  step 2 holds only a kernel that step 1 launched (its call
              not in the trace, numbered before step 2's first call).

  make_waits.py DIR"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_traces import Builder  # noqa: E402


def calls():
    t = Builder()
    t.kernel("first", 7, 10, 20, 500)
    t.runtime("cudaMalloc", 30, 300)               # the host's own 300 us
    t.kernel("second", 7, 340, 520, 20)
    t.runtime("cudaFree", 350, 200)                # waits for 'second' (ends 540), frees
    t.kernel("third", 7, 560, 570, 10)
    return t


def queue(depth=300, n=600, kernel=20.0):
    t = Builder()
    ready, host, calls_done = 0.0, 10.0, []
    for _ in range(n):
        # Launches not yet started when the call is made: a full queue makes
        # it wait until the next op starts.
        pending = [s for r, s in calls_done if r <= host and s > host]
        ret = host + 4
        if len(pending) >= depth:
            ret = min(pending) + 1
        start = max(ret + 5, ready)
        ready = start + kernel + 0.9  # the device between two kernels
        t.kernel("k", 7, host, start, kernel, call_dur=ret - host)
        calls_done.append((ret, start))
        host = ret + 1
    return t


def graph():
    t = Builder()
    t.kernel("before", 7, 10, 20, 100)
    c = t.runtime("cudaGraphLaunch", 30, 10)
    t.launched(c, "g1", 7, 120, 50)
    t.launched(c, "g2", 7, 570, 50)                # 400 us idle before it
    t.launched(c, "g3", 7, 620, 50)
    t.kernel("after", 7, 700, 710, 10)
    return t


def graph_dep():
    t = Builder()
    t.kernel("other", 9, 10, 20, 500)
    r = t.record(12)
    t.wait(7, 9, r, 14)
    c = t.runtime("cudaGraphLaunch", 30, 10)
    t.kernel("late", 11, 45, 50, 650)
    t.launched(c, "g1", 7, 720, 50)                # 200 us after 'other' ended
    t.launched(c, "g2", 7, 770, 50)
    return t


def backlog_wait(sync_events=True):
    t = Builder()
    t.step(1, 0, 100)
    t.kernel("a", 7, 10, 20, 400)
    r = t.record(15)
    if sync_events:
        t.wait(9, 7, r, 16)
    else:
        t.runtime("cudaStreamWaitEvent", 16, 1.0)
    t.kernel("b", 9, 20, 420, 100)                 # behind 'a', into step 2
    t.step(2, 100, 900)
    t.kernel("c", 11, 110, 115, 100)
    t.kernel("d", 9, 120, 520, 40)
    return t


def sampled():
    t = Builder()
    t.kernel("x", 7, 10, 20, 500)
    t.corr += 1                                    # the call not recorded
    t.launched(t.corr, "y", 9, 525, 50)
    t.kernel("z", 7, 600, 610, 20)
    return t


def sampled_late():
    """The sampled op also follows another stream's op that ended 8 us
    before it began (the no-sync-events superset orders it behind that
    one): it waited for the one that ended as it began."""
    t = Builder()
    t.kernel("b", 8, 10, 20, 473)                  # ends at 493
    t.runtime("cudaStreamWaitEvent", 30, 1.0)      # no sync events
    t.kernel("x", 7, 40, 50, 450)                  # ends at 500
    t.corr += 1                                    # the call not recorded
    t.launched(t.corr, "y", 9, 501.5, 50)
    t.kernel("z", 7, 600, 610, 20)
    return t


def contended():
    t = Builder()
    t.kernel("b", 9, 10, 20, 100, grid=(108, 1, 1), block=(1024, 1, 1))
    t.kernel("a", 7, 12, 21, 200, grid=(216, 1, 1), block=(1024, 1, 1))
    return t


def gaps():
    t = Builder()
    start = 100.0
    for i in range(200):
        t.kernel("k", 7, 10 + 2 * i, start, 10)
        start += 10 + 3
    return t


def poll():
    t = Builder()
    t.kernel("k", 7, 10, 20, 500)
    t.record(15)
    for ts in range(100, 600, 50):                 # the last, at 550, finds it done
        t.runtime("cudaEventQuery", ts, 1.0)
    t.kernel("next", 7, 560, 570, 20)
    return t


def laststep():
    t = Builder()
    t.step(1, 0, 100)
    t.kernel("a", 7, 10, 20, 50)
    t.corr += 1                                    # b's call, not recorded
    t.launched(t.corr, "b", 9, 150, 40)
    t.step(2, 100, 200)
    t.runtime("cudaEventQuery", 120, 1.0)
    return t


out = sys.argv[1]
os.makedirs(out, exist_ok=True)
calls().write(os.path.join(out, "calls.json"))
queue().write(os.path.join(out, "queue.json"))
graph().write(os.path.join(out, "graph.json"))
graph_dep().write(os.path.join(out, "graph_dep.json"))
backlog_wait().write(os.path.join(out, "backlog_wait.json"))
backlog_wait(False).write(os.path.join(out, "backlog_nosync.json"))
sampled().write(os.path.join(out, "sampled.json"))
sampled_late().write(os.path.join(out, "sampled_late.json"))
contended().write(os.path.join(out, "contended.json"))
gaps().write(os.path.join(out, "gaps.json"))
poll().write(os.path.join(out, "poll.json"))
laststep().write(os.path.join(out, "laststep.json"))
