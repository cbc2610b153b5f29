//===- Graph.cpp - The graph lowering: segments and ready nodes -------------===//

#include "model/sim/Simulator.h"

using namespace pipec;

namespace pipec::sim {
namespace {

// --- Graph lowering --------------------------------------------------------
// Each segment is one graph, launched on launch stream g % K (K =
// kGraphLaunchStreams): it starts once its launch call is done and
// segment g - K has finished. A node is ready once its segment started,
// its predecessors in the segment ended (graph_gap_us later) and those in
// other segments ended (wait_latency_us later: an event-record node there,
// an event-wait node here). A record (a host sync's) completes when its
// producer ends.
void Simulator::startGraph() {
  const CSR &in = s.graphPredecessors();
  const CSR &waits = s.graphWaits();
  // Successors from predecessors, counted in place: begin[u + 1] counts
  // u's successors, then serves as u's cursor filled from the back.
  remaining.assign(n, 0);
  successors.begin.assign(n + 1, 0);
  for (uint32_t v = 0; v < n; ++v) {
    remaining[v] = static_cast<uint32_t>(in.row(v).size());
    for (uint32_t u : in.row(v))
      ++successors.begin[u + 1];
  }
  for (uint32_t v = 0; v < n; ++v)
    successors.begin[v + 1] += successors.begin[v];
  successors.targets.assign(in.edges(), 0);
  for (uint32_t v = n; v-- > 0;)
    for (uint32_t u : in.row(v))
      successors.targets[--successors.begin[u + 1]] = v;
  // begin[u + 1] now holds where u's row starts: shift it into place.
  for (uint32_t u = 0; u < n; ++u)
    successors.begin[u] = successors.begin[u + 1];
  successors.begin[n] = in.edges();
  // The waits between segments, as successor lists (few: one per
  // ordering a host synchronisation does not already hold).
  waitSuccessors = CSR();
  waitReadyAt.clear();
  if (waits.edges()) {
    waitSuccessors.begin.assign(n + 1, 0);
    for (uint32_t v = 0; v < n; ++v)
      for (uint32_t u : waits.row(v))
        ++waitSuccessors.begin[u + 1];
    for (uint32_t v = 0; v < n; ++v)
      waitSuccessors.begin[v + 1] += waitSuccessors.begin[v];
    waitSuccessors.targets.assign(waits.edges(), 0);
    std::vector<size_t> cursor(waitSuccessors.begin.begin(), waitSuccessors.begin.end() - 1);
    for (uint32_t v = 0; v < n; ++v)
      for (uint32_t u : waits.row(v))
        waitSuccessors.targets[cursor[u]++] = v;
    waitReadyAt.assign(n, -1);
    for (uint32_t v = 0; v < n; ++v)
      remaining[v] += static_cast<uint32_t>(waits.row(v).size());
  }
  const uint32_t segments = std::max(1u, s.segments);
  segmentNodes.assign(segments, 0);
  segmentDynamic.assign(segments, 0);
  segmentLeft.assign(segments, 0);
  segmentRoots.assign(segments, {});
  segmentState.assign(segments, 0);
  segmentDoneAt.assign(segments, -1);
  recordsWaiting.clear();
  for (uint32_t v = 0; v < n; ++v) {
    if (s.onHost(v))
      continue;
    const uint32_t g = s.segmentOf[v];
    ++segmentNodes[g];
    ++segmentLeft[g];
    segmentDynamic[g] += s.instances.stage(v).dynamic;
    if (in.row(v).empty()) {
      segmentRoots[g].push_back(v);
      ++remaining[v]; // the segment's start
    }
  }
}

void Simulator::segmentLaunched(uint32_t g, double now) {
  segmentState[g] |= kLaunched;
  startSegment(g, now);
}

void Simulator::startSegment(uint32_t g, double now) {
  if (g >= segmentState.size() || !(segmentState[g] & kLaunched) ||
      (segmentState[g] & kStarted) ||
      (g >= kGraphLaunchStreams && segmentDoneAt[g - kGraphLaunchStreams] < 0))
    return;
  segmentState[g] |= kStarted;
  ++nextSegment;
  for (uint32_t v : segmentRoots[g])
    release(v, now, now);
  if (segmentLeft[g] == 0)
    segmentFinished(g, now);
}

void Simulator::segmentFinished(uint32_t g, double now) {
  segmentDoneAt[g] = now;
  startSegment(g + kGraphLaunchStreams, now);
}

void Simulator::graphRecord(uint32_t record, double) {
  const uint32_t producer = hostOps()[record].instance;
  if (out.end[producer] >= 0)
    recordCompleted(record, out.end[producer]);
  else
    recordsWaiting.push_back({producer, record});
}

void Simulator::release(uint32_t w, double at, double now) {
  if (!waitReadyAt.empty() && at > waitReadyAt[w])
    waitReadyAt[w] = at;
  if (--remaining[w] != 0)
    return;
  if (!waitReadyAt.empty())
    at = std::max(at, waitReadyAt[w]);
  if (at > now)
    pendingReady.push({onGrid(at), w});
  else
    readyNodes.push_back(w);
}

bool Simulator::pumpGraph(double now) {
  bool progress = false;
  while (!readyNodes.empty() && dispatch(readyNodes.front(), now)) {
    readyNodes.pop_front();
    progress = true;
  }
  return progress;
}

void Simulator::nodeDone(uint32_t v, double now) {
  const uint32_t g = s.segmentOf[v];
  for (size_t i = 0; i < recordsWaiting.size();) {
    if (recordsWaiting[i].first != v) {
      ++i;
      continue;
    }
    const uint32_t record = recordsWaiting[i].second;
    recordsWaiting[i] = recordsWaiting.back();
    recordsWaiting.pop_back();
    recordCompleted(record, now);
  }
  if (--segmentLeft[g] == 0)
    segmentFinished(g, now);
  if (waitSuccessors.edges())
    for (uint32_t w : waitSuccessors.row(v))
      release(w, now + p.waitLatencyUs, now);
  for (uint32_t w : successors.row(v)) {
    if (touched == kNone || w > touched)
      touched = w;
    if (remaining[w] == 1) {
      // Its turn comes within a few events: have what it reads then on
      // the way (with many streams the nodes in flight spread over
      // iterations, and a line per array missed).
      __builtin_prefetch(&out.end[w]);
      __builtin_prefetch(&residentSlot[w]);
      __builtin_prefetch(&successors.begin[w]);
      __builtin_prefetch(&s.instanceStream[w]);
    }
    release(w, now + p.graphGapUs, now);
  }
}

// --- Snapshot and shift ----------------------------------------------------

bool Simulator::snapshotGraph(Snapshot &g) const {
  // The nodes between the lowest not ended and the highest a finished
  // node has counted down.
  if (touched + 1 > lowest && touched + 1 - lowest > Snapshot::kMax)
    return false;
  g.put(g.inst(static_cast<uint32_t>(lowest)));
  g.put(touched == kNone ? Snapshot::kNoneMark : g.inst(touched));
  if (touched != kNone)
    for (uint64_t v = lowest; v <= touched; ++v) {
      g.put(remaining[v]);
      g.put(out.end[v] >= 0);
    }
  if (readyNodes.size() > Snapshot::kMax)
    return false;
  g.put(double(readyNodes.size()));
  for (uint32_t v : readyNodes)
    g.put(g.inst(v));
  std::vector<std::pair<double, uint32_t>> ready = pendingReady.items();
  std::sort(ready.begin(), ready.end());
  g.put(double(ready.size()));
  for (auto [t, v] : ready) {
    g.put(t - g.T);
    g.put(g.inst(v));
  }
  g.put(segmentState[0]);
  g.put(nextSegment);
  g.put(segmentDoneAt[0] < 0 ? Snapshot::kNoneMark : segmentDoneAt[0] - g.T);
  return true;
}

void Simulator::shiftGraph(const Shift &d) {
  if (touched != kNone) {
    for (uint64_t v = touched + 1; v-- > lowest;)
      remaining[v + d.dI] = remaining[v];
    touched = static_cast<uint32_t>(touched + d.dI);
  }
  lowest += d.dI;
  segmentLeft[0] -= static_cast<uint32_t>(d.dI);
  for (uint32_t &v : readyNodes)
    d.instance(v);
  for (auto &[t, v] : pendingReady.items()) {
    t = d.later(t);
    d.instance(v);
  }
  pendingReady.reorder();
}

} // namespace
} // namespace pipec::sim
