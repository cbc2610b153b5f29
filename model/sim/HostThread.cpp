//===- HostThread.cpp - Each device's host thread and its calls -------------===//

#include "model/sim/Simulator.h"

using namespace pipec;

namespace pipec::sim {
namespace {

void Simulator::startHost() {
  const std::vector<Op> &list = hostOps();
  nextLaunch.clear();
  if (lowering == Lowering::Streams &&
      std::any_of(s.pipeline.stages.begin(), s.pipeline.stages.end(),
                  [](const program::Stage &st) { return st.graph >= 0; })) {
    nextLaunch.assign(list.size(), kNone);
    uint32_t next = kNone;
    for (size_t i = list.size(); i-- > 0;) {
      nextLaunch[i] = next;
      if (list[i].kind == Op::Launch)
        next = list[i].instance;
    }
  }
  // Each wait and sync binds to the latest record of its event before it.
  uint32_t events = lowering == Lowering::Streams ? s.eventObjects : s.graphEventObjects;
  std::vector<uint32_t> latestRecord(events, kNone);
  boundRecord.assign(list.size(), kNone);
  waitHeads.clear();
  recordDoneAt.reset(list.size());
  for (uint32_t i = 0; i < list.size(); ++i) {
    const Op &op = list[i];
    if (op.kind == Op::Record)
      latestRecord[op.event] = i;
    if ((op.kind == Op::Wait || op.kind == Op::Sync) && op.event < events)
      boundRecord[i] = latestRecord[op.event];
  }
  if (options.recordHost)
    out.host.reserve(list.size());
  threads.assign(lowering == Lowering::Streams ? gpus.size() : 1, HostThread());
  out.threadTime.assign(threads.size() > 1 ? threads.size() : 0, runtime::HostTime());
  if (threads.size() > 1) {
    opThread = opThreads(s, list);
    threadOps.assign(threads.size(), {});
    for (uint32_t i = 0; i < list.size(); ++i)
      threadOps[opThread[i]].push_back(i);
    issuedUpTo.assign(threads.size(), 0);
  }
  for (uint32_t t = 0; t < threads.size(); ++t) {
    HostThread &h = threads[t];
    h.device = t;
    h.next = threads.size() == 1 ? 0 : threadOps[t].empty() ? list.size() : threadOps[t][0];
    beginHostOp(h);
  }
}

void Simulator::beginHostOp(HostThread &h) {
  beginHostOpOffGrid(h);
  h.done = onGrid(h.done);
}

void Simulator::beginHostOpOffGrid(HostThread &h) {
  constexpr double kNever = std::numeric_limits<double>::infinity();
  const std::vector<Op> &list = hostOps();
  if (h.next >= list.size()) {
    h.done = kNever;
    out.submitUs = std::max(out.submitUs, h.at);
    return;
  }
  const Op &op = list[h.next];
  switch (op.kind) {
  case Op::Launch: {
    const program::Stage &stage = s.instances.stage(op.instance);
    // A recorded graph's first node is its launch call; the others came
    // with it.
    const bool withGraph = inOpenGraph(h, op.instance);
    const double cost = withGraph ? 0 : stage.graph >= 0 ? p.graphLaunchUs : p.launchUs;
    h.graph = stage.graph;
    h.graphIteration = s.instances.iterationOf(op.instance);
    const double dispatch = options.dispatch && !withGraph ? stage.issueUs : 0;
    double done = h.at + dispatch + cost;
    if (options.issueAt)
      done = std::max(done, (*options.issueAt)[op.instance]);
    const double call = done - cost;
    if (dispatch > 0)
      hostSpan(h, call - dispatch, call, "issue", op.instance);
    hostSpan(h, call, done,
             withGraph          ? "graph node"
             : stage.graph >= 0 ? "graph launch"
                                : "launch",
             op.instance);
    charge(h, &runtime::HostTime::issue, dispatch);
    charge(h, &runtime::HostTime::api, cost);
    h.done = done;
    return;
  }
  case Op::Record:
  case Op::Wait: {
    if (op.kind == Op::Wait && threads.size() > 1 && boundRecord[h.next] != kNone &&
        !issued(boundRecord[h.next])) {
      block(h, Block::Issued, h.at);
      return;
    }
    // The graph lowering's record is a node of its producer's segment,
    // and between a recorded graph's nodes a record or wait is an edge of
    // the graph: no call.
    if (lowering == Lowering::Graph) {
      h.done = h.at;
      return;
    }
    const double cost = edgeOfOpenGraph(h, h.next, op.instance) ? 0
                        : op.kind == Op::Record                 ? p.recordUs
                                                                : p.waitUs;
    hostSpan(h, h.at, h.at + cost, op.kind == Op::Record ? "record" : "wait", op.instance);
    charge(h, &runtime::HostTime::api, cost);
    h.done = h.at + cost;
    return;
  }
  case Op::Cpu: {
    h.graph = -1; // the host's own work: a recorded graph's call is over
    const double work = s.instances.stage(op.instance).durationUs;
    const double start =
        options.issueAt ? std::max(h.at, (*options.issueAt)[op.instance]) : h.at;
    setStart(op.instance, start);
    charge(h, &runtime::HostTime::cpu, work);
    h.done = start + work;
    return;
  }
  case Op::Sync: {
    h.graph = -1;
    const uint32_t record = boundRecord[h.next];
    if (record != kNone && recordDoneAt.get(record) < 0) {
      block(h, Block::Record, h.at);
      return;
    }
    const double done = record == kNone ? h.at : recordDoneAt.get(record);
    const double wake = std::max(h.at, done + p.syncLatencyUs);
    syncSpan(h, h.at, wake, op.instance);
    h.done = wake;
    return;
  }
  case Op::Join: {
    const double done = out.end[op.instance];
    if (done < 0) {
      block(h, Block::Join, h.at);
      return;
    }
    const double wake = std::max(h.at, done + p.syncLatencyUs);
    syncSpan(h, h.at, wake, op.instance, "join");
    h.done = wake;
    return;
  }
  case Op::GraphLaunch: {
    const uint32_t g = op.event;
    const double update = double(segmentDynamic[g]) * p.nodeUpdateUs;
    const double launch = p.graphLaunchUs + double(segmentNodes[g]) * p.graphNodeUs;
    if (update > 0)
      hostSpan(h, h.at, h.at + update, "update nodes", kNone);
    hostSpan(h, h.at + update, h.at + update + launch, "graph launch", kNone);
    charge(h, &runtime::HostTime::api, update + launch);
    h.done = h.at + update + launch;
    return;
  }
  }
}

void Simulator::syncSpan(const HostThread &h, double from, double to, uint32_t producer,
                         const char *what) {
  hostSpan(h, from, to, what, producer);
  charge(h, &runtime::HostTime::blocked, to - from);
}

void Simulator::finishHostOp(HostThread &h, double now) {
  const std::vector<Op> &list = hostOps();
  const Op &op = list[h.next];
  ++out.simulatedEvents;
  switch (op.kind) {
  case Op::Launch: {
    Gpu &gpu = threads.size() > 1 ? gpus[opThread[h.next]] : gpus[0];
    if (gpu.pendingLaunches >= queueDepth()) {
      // The driver's queue is full: the call returns once a launch starts.
      block(h, Block::Queue, now);
      return;
    }
    ++gpu.pendingLaunches;
    [[fallthrough]];
  }
  case Op::Record:
  case Op::Wait:
    if (lowering == Lowering::Streams) {
      const uint32_t q = queueOf(op.stream);
      queues[q].push_back(static_cast<uint32_t>(h.next));
      markQueue(q);
    } else {
      graphRecord(static_cast<uint32_t>(h.next), now);
    }
    break;
  case Op::Cpu:
    setEnd(op.instance, now);
    break;
  case Op::Sync:
  case Op::Join:
    break;
  case Op::GraphLaunch:
    segmentLaunched(op.event, now);
    break;
  }
  h.at = now;
  if (threads.size() == 1) {
    ++h.next;
  } else {
    const uint32_t t = opThread[h.next];
    issuedUpTo[t] = h.next + 1;
    h.next = ++h.pos < threadOps[t].size() ? threadOps[t][h.pos] : list.size();
    // Another thread may wait for this call, or for this cpu stage.
    if (op.kind == Op::Record || op.kind == Op::Cpu)
      wakeThreads(now);
  }
  beginHostOp(h);
}

void Simulator::wakeThreads(double now) {
  for (HostThread &other : threads)
    if (other.block == Block::Issued || other.block == Block::Join) {
      const Op &op = hostOps()[other.next];
      const bool ready = other.block == Block::Issued ? issued(boundRecord[other.next])
                                                      : out.end[op.instance] >= 0;
      if (!ready)
        continue;
      other.block = Block::None;
      other.at = std::max(other.blockedSince, now);
      if (op.kind == Op::Join) {
        // Blocked from blockedSince: the join's span starts there.
        const double wake = onGrid(now + p.syncLatencyUs);
        syncSpan(other, other.blockedSince, wake, op.instance, "join");
        other.done = wake;
      } else {
        // The wait's call, once the record it binds to is issued.
        hostSpan(other, other.blockedSince, now, "blocked: another thread's record",
                 op.instance);
        charge(other, &runtime::HostTime::blocked, now - other.blockedSince);
        beginHostOp(other);
      }
    }
}

void Simulator::finishHostOps(double now) {
  for (bool again = true; again;) {
    again = false;
    for (HostThread &h : threads)
      while (h.done <= now) {
        finishHostOp(h, now);
        again = threads.size() > 1;
      }
  }
}

bool Simulator::deliverOneBlocked(double now) {
  for (HostThread &h : threads)
    if (h.block == Block::Queue && gpus[h.device].pendingLaunches < queueDepth()) {
      deliverBlocked(h, now);
      return true;
    }
  return false;
}

void Simulator::deliverBlocked(HostThread &h, double now) {
  h.block = Block::None;
  hostSpan(h, h.blockedSince, now, "blocked: launch queue full", kNone);
  charge(h, &runtime::HostTime::blocked, now - h.blockedSince);
  h.done = now;
}

void Simulator::recordCompleted(uint32_t record, double now) {
  recordDoneAt.set(record, now);
  for (HostThread &h : threads)
    if (h.block == Block::Record && boundRecord[h.next] == record) {
      h.block = Block::None;
      const double wake = onGrid(std::max(h.at, now + p.syncLatencyUs));
      syncSpan(h, h.blockedSince, wake, hostOps()[h.next].instance);
      h.done = wake;
    }
}

// --- Snapshot and shift ----------------------------------------------------
// (One thread: extrapolation runs on one device.)

void Simulator::snapshotHost(Snapshot &g) const {
  const HostThread &h = threads[0];
  const bool finished = h.next >= hostOps().size();
  g.put(g.opAt(h.next));
  g.put(g.time(h.done));
  g.put(finished ? 0 : h.at - g.T);
  g.put(double(h.block));
  g.put(h.block != Block::None ? h.blockedSince - g.T : 0);
  g.put(gpus[0].pendingLaunches);
}

void Simulator::shiftHost(const Shift &d) {
  HostThread &h = threads[0];
  if (h.next >= hostOps().size())
    return;
  h.next += d.dO;
  h.at = d.later(h.at);
  if (!std::isinf(h.done))
    h.done = d.later(h.done);
  if (h.block != Block::None)
    h.blockedSince = d.later(h.blockedSince);
}

} // namespace
} // namespace pipec::sim
