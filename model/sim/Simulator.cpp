//===- Simulator.cpp - The event loop: events, the pump, work reaching its resource ---===//

#include "model/sim/Simulator.h"

using namespace pipec;

namespace pipec::sim {
namespace {

Simulator::Simulator(const Schedule &s, Lowering lowering, const DeviceProfile &profile,
                     const ModelOptions &options)
    : s(s), lowering(lowering), p(profile), options(options), n(s.instances.size()),
      hw(std::max(1u, options.queuePerStream
                          ? std::max<unsigned>(profile.hardwareQueues,
                                               unsigned(s.streamPlan.streams.size()))
                          : profile.hardwareQueues)),
      capacity(profile.smCapacity()), gpus(s.pipeline.deviceCount()) {
  for (Gpu &gpu : gpus)
    gpu.freeSM.assign(profile.sms, capacity);
  if (gpus.size() > 1) {
    deviceOfStream.reserve(s.streamPlan.streams.size());
    for (uint32_t i = 0; i < s.streamPlan.streams.size(); ++i)
      deviceOfStream.push_back(s.stream(i).device);
    for (const program::Stage &stage : s.pipeline.stages)
      rendezvous |= program::collectiveParts(stage) > 1;
  }
  if (options.starts)
    out.start.assign(n, -1);
  out.end.assign(n, -1);
  // Written when an instance becomes resident, read only then: left
  // untouched (and its pages unallocated) elsewhere.
  residentSlot.reset(new uint32_t[n]);
  for (const program::Stage &stage : s.pipeline.stages) {
    shapes.push_back(shapeOf(stage));
    contends |= shapes.back().memory > 0 || shapes.back().compute > 0;
  }
}

ReplayTrace Simulator::run() {
  if (lowering == Lowering::Streams)
    startStreams();
  else
    startGraph();
  startHost();
  // Kernels' own SMs are state the periodic skip-ahead does not compare.
  if (options.extrapolate && !options.smsPerKernel)
    findPeriod();
  // The host thread's calls reach the device in order, each when the call
  // (and whatever the host did before it) is done: the host is followed
  // op by op, not through the event heap. At equal times they come first,
  // as events posted earliest would. Graph nodes that become ready wait
  // in pendingReady, which says when to look next itself: an event in the
  // heap for each would only double the work.
  constexpr double kNever = std::numeric_limits<double>::infinity();
  while (!events.empty() || nextHostDone() != kNever || !pendingReady.empty()) {
    if (period)
      maybeCheckpoint();
    double now = events.empty() ? kNever : events.top().time;
    now = std::min(now, nextHostDone());
    if (!pendingReady.empty())
      now = std::min(now, pendingReady.top().first);
    clock = now;
    finishHostOps(now);
    while (!events.empty() && events.top().time == now) {
      Event e = events.top();
      events.pop();
      // A batch's end posted again (its kernel's speed changed, or it was
      // cut short) leaves the old one behind: not an event of the run.
      if (e.kind == Event::BlockDone && e.generation != batches[e.b].generation)
        continue;
      ++out.simulatedEvents;
      handle(e, now);
    }
    pump(now);
    // A launch that waited for room in the driver's queue goes now.
    while (deliverOneBlocked(now)) {
      finishHostOps(now);
      pump(now);
    }
  }
  for (uint32_t v = 0; v < out.end.size(); ++v) {
    out.doneUs = std::max(out.doneUs, out.end[v]);
    if (out.end[v] < 0 && out.unfinished++ == 0)
      out.firstUnfinished = v;
  }
  return std::move(out);
}

Shape Simulator::shapeOf(const program::Stage &stage) const {
  Shape shape;
  // A memset, and a collective on one device (a single-rank communicator,
  // which copies its buffer): as a fill, a small grid for its time.
  auto fill = [&] {
    shape.use = p.blockUse(32, 0, 0);
    shape.blockUs = stage.durationUs;
  };
  // What it asks of the shared resources, as the file says.
  std::visit(Overloaded{
                 [&](const program::KernelWork &k) {
                   const uint64_t waves = p.waves(k);
                   shape.blocks = k.blocks;
                   shape.use = p.blockUse(k.threads, k.smemBytes, k.regs);
                   shape.blockUs = stage.durationUs / double(waves);
                   shape.memory = k.bound == program::KernelBound::Memory ? 1
                                  : k.bytes ? memoryShare(double(k.bytes), stage.durationUs)
                                            : 0;
                   shape.compute = k.bound == program::KernelBound::Compute ? 1 : 0;
                 },
                 [&](const program::MemsetWork &) { fill(); },
                 // Over several devices, a block per channel, each holding an
                 // SM (NCCL's kernel runs a block per channel, with the SM's
                 // shared memory to itself); on one device a fill. Its time is
                 // the links' (NCCL's formula): no share of the device's memory
                 // asked.
                 [&](const program::CollectiveWork &c) {
                   fill();
                   if (c.parts > 1) {
                     shape.blocks = std::clamp(p.ncclChannels, 1u, p.sms);
                     shape.use = capacity;
                   }
                 },
                 // A copy engine's, a host function's, the host thread's: no
                 // SM (the shape is never asked for).
                 [](const program::CopyWork &) {},
                 [](const program::HostWork &) {},
                 [](const program::CpuWork &) {},
             },
             stage.work);
  // Where the file says nothing, the options' assumption: nothing, or the
  // whole device (a memset, all memory traffic, its bandwidth alone).
  if (options.contendUnsaid && program::boundUnsaid(stage)) {
    shape.memory = 1;
    shape.compute = stage.kind() == StageKind::Kernel ? 1 : 0;
  }
  shape.perEmptySM = fitting(p.smCapacity(), shape.use);
  shape.fullBlocks = static_cast<uint32_t>(std::max<uint64_t>(
      1, std::min<uint64_t>(shape.blocks, uint64_t(shape.perEmptySM) * p.sms)));
  return shape;
}

double Simulator::memoryShare(double bytes, double us) const {
  // bytes / (us * 1e-6 s) over GBps * 1e9 bytes/s.
  const double asked = us > 0 ? bytes / (us * p.memoryGBps * 1e3) : 1;
  return std::min(1.0, asked);
}

void Simulator::handle(const Event &e, double now) {
  switch (e.kind) {
  case Event::BlockDone:
    blockDone(e.a, e.b, now);
    break;
  case Event::ItemDone:
    itemDone(e.a, now);
    break;
  case Event::HostReady:
    gpuOf(e.a).hostQueue.push_back(e.a);
    break;
  case Event::Wake:
    // Makes the pump look again (at a hardware queue: that one).
    if (lowering == Lowering::Streams)
      markQueue(e.a);
    break;
  case Event::CopyStep:
    if (e.b == gpus[e.a / 3].shared[e.a % 3].generation)
      advanceShared(e.a / 3, e.a % 3, now);
    break;
  }
}

// --- Work: kernels, copies, host functions ---------------------------------
bool Simulator::dispatch(uint32_t v, double now) {
  const program::Stage &stage = s.instances.stage(v);
  switch (stage.kind()) {
  case StageKind::Kernel:
  case StageKind::Memset:
  case StageKind::Collective: {
    Gpu &gpu = gpuOf(v);
    if (!options.smsPerKernel && gpu.resident.size() >= p.maxResidentKernels) {
      blockedOnResidency = true;
      return false;
    }
    const Shape &shape = shapes[s.instances.stageOf(v)];
    residentSlot[v] = static_cast<uint32_t>(gpu.resident.size());
    gpu.resident.push_back({v, priorityOf(v), shape.blocks, 0, shape.use, shape.blockUs,
                            shape.perEmptySM, false});
    if (options.smsPerKernel)
      gpu.resident.back().ownSM.assign(p.sms, capacity);
    // Kept in urgency order as they come: most urgent (lower CUDA
    // priority value) first, then the first to arrive.
    gpu.resident.back().arrival = gpu.arrivals++;
    const Urgency key{gpu.resident.back().priority, gpu.resident.back().arrival, v};
    gpu.waiting.insert(std::upper_bound(gpu.waiting.begin(), gpu.waiting.end(), key), key);
    gpu.blocksChanged = true;
    if (gpu.multiWave)
      truncateFor(gpu, key.priority, key.arrival, now);
    return true;
  }
  case StageKind::Copy: {
    // A peer copy runs on its source's (its stream's device's) engine.
    // The engine takes the copies waiting for it in the order the host
    // issued them (instances are numbered in issue order), not in the
    // order they became ready: a copy ready later does not overtake one
    // issued before it that waits too.
    unsigned engine = engineIndex(stage.copy().direction);
    std::deque<uint32_t> &queue = gpuOf(v).copyQueues[engine];
    queue.insert(std::upper_bound(queue.begin(), queue.end(), v), v);
    return true;
  }
  case StageKind::Host:
    post(now + p.hostFuncLatencyUs, Event::HostReady, v);
    return true;
  case StageKind::Cpu:
    return true; // the host thread runs it, not the device
  }
  return true;
}

void Simulator::finish(uint32_t v, double now) {
  setEnd(v, now);
  if (lowering == Lowering::Streams) {
    uint32_t stream = s.streamOf(v);
    streamBusy[stream] = 0;
    streamFreeAt[stream] = onGrid(now + p.streamGapUs);
    markQueue(queueOf(stream));
  } else {
    nodeDone(v, now);
  }
}

void Simulator::pump(double now) {
  // Nodes whose dependencies resolved by now join the ready list in order.
  // (Each is a simulated event, as a submit is.)
  while (!pendingReady.empty() && pendingReady.top().first <= now) {
    readyNodes.push_back(pendingReady.top().second);
    pendingReady.pop();
    ++out.simulatedEvents;
  }
  for (bool progress = true; progress;) {
    progress = false;
    if (options.lookEverywhere) {
      if (lowering == Lowering::Streams)
        markAllQueues();
      for (Gpu &gpu : gpus)
        gpu.blocksChanged = true;
    }
    if (lowering == Lowering::Streams)
      progress |= pumpQueues(now);
    else
      progress |= pumpGraph(now);
    progress |= pumpBlocks(now);
    progress |= pumpEngines(now);
  }
}

// --- Snapshot and shift ----------------------------------------------------

/// The events, in the order they will be taken.
bool Simulator::snapshotEvents(Snapshot &g) const {
  std::vector<Event> pending = events.items();
  if (pending.size() > Snapshot::kMax)
    return false;
  std::sort(pending.begin(), pending.end(),
            [](const Event &a, const Event &b) { return b > a; });
  g.put(double(pending.size()));
  for (const Event &e : pending) {
    g.put(e.time - g.T);
    g.put(e.kind);
    switch (e.kind) {
    case Event::BlockDone: {
      g.put(g.inst(e.a));
      const Batch &b = batches[e.b];
      const bool live = e.generation == b.generation;
      g.put(live);
      if (!live)
        break;
      g.put(double(b.runs.size()));
      for (const SMRun &run : b.runs) {
        g.put(run.first);
        g.put(run.count);
        g.put(run.blocks);
      }
      g.put(b.waves);
      g.put(b.work);
      g.put(b.progress);
      g.put(g.time(b.at));
      break;
    }
    case Event::ItemDone:
      g.put(g.inst(e.a));
      g.put(e.b);
      break;
    case Event::HostReady:
      g.put(g.inst(e.a));
      break;
    case Event::Wake:
      g.put(e.a);
      break;
    case Event::CopyStep:
      g.put(e.a);
      g.put(e.b == gpus[e.a / 3].shared[e.a % 3].generation);
      break;
    }
  }
  return true;
}

void Simulator::shiftEvents(const Shift &d) {
  for (Event &e : events.items()) {
    e.time = d.later(e.time);
    if (e.kind == Event::BlockDone || e.kind == Event::ItemDone || e.kind == Event::HostReady)
      d.instance(e.a);
  }
  events.reorder();
}

} // namespace
} // namespace pipec::sim

pipec::sim::ReplayTrace pipec::sim::simulate(const Schedule &schedule, Lowering lowering,
                                             const DeviceProfile &profile,
                                             const ModelOptions &options) {
  return Simulator(schedule, lowering, profile, options).run();
}
