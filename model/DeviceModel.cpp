//===- DeviceModel.cpp ----------------------------------------------------===//

#include "model/DeviceModel.h"
#include "model/Periodic.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <queue>

using namespace pipec;
using namespace pipec::sim;

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
/// Grids of more waves are simulated as this many waves of longer blocks.
constexpr uint64_t kMaxWaves = 16;

struct Event {
  double time;
  uint64_t seq;
  enum Kind : uint8_t { BlockDone, ItemDone, HostReady, Wake, CopyStep } kind;
  uint32_t a, b; ///< meaning depends on kind (BlockDone: instance, batch)

  bool operator>(const Event &o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

/// What a stage's kernel (or fill) asks of the device, the same for every
/// instance: worked out once per stage, not per launch.
struct Shape {
  uint32_t blocks = 1;
  DeviceProfile::BlockUse use{};
  double blockUs = 0;      ///< the kernel's time over its waves
  uint32_t perEmptySM = 0; ///< its blocks an idle SM holds at once
};

/// A kernel that has become resident and has blocks to run.
struct Resident {
  uint32_t instance;
  int priority;
  uint32_t pending, running;
  DeviceProfile::BlockUse use; ///< what one block holds of its SM
  double blockUs;              ///< the kernel's time over its waves
  uint32_t perEmptySM;         ///< its blocks an idle SM holds at once
  bool started;                ///< a block of it has run
  /// ModelOptions::smsPerKernel: the SMs this kernel has to itself (empty
  /// otherwise: it takes the device's, Gpu::freeSM).
  std::vector<DeviceProfile::BlockUse> ownSM = {};
};

class Model {
  struct Gpu;

public:
  Model(const Schedule &s, Lowering lowering, const DeviceProfile &profile,
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
        rendezvous |= stage.parts > 1;
    }
    if (options.starts)
      out.start.assign(n, -1);
    out.end.assign(n, -1);
    // Written when an instance becomes resident, read only then: left
    // untouched (and its pages unallocated) elsewhere.
    residentSlot.reset(new uint32_t[n]);
    for (const program::Stage &stage : s.pipeline.stages)
      shapes.push_back(shapeOf(stage));
  }

  ReplayTrace run() {
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

private:
  /// Equal priorities: the oldest launch first, in both lowerings. A grid of
  /// more than kMaxWaves waves is simulated as kMaxWaves waves of longer
  /// blocks: alone it still takes T, and the model's cost stays bounded by
  /// the device's size, not the grid's (2^31 - 1 blocks). A fill runs as one
  /// small grid: it takes an SM slot for its time.
  Shape shapeOf(const program::Stage &stage) const {
    Shape shape;
    if (stage.kind == StageKind::Memset || stage.kind == StageKind::Collective) {
      // A collective on one device (a single-rank communicator) copies its
      // buffer: as a fill, a small grid for its time.
      shape.use = p.blockUse(32, 0, 0);
      shape.blockUs = stage.durationUs;
    } else if (stage.kind == StageKind::Kernel) {
      uint64_t waves = p.waves(stage), blocks = stage.blocks;
      if (waves > kMaxWaves) {
        uint64_t perWave =
            uint64_t(p.blocksPerSM(stage.threads, stage.smemBytes, stage.regs)) * p.sms;
        blocks = perWave * kMaxWaves;
        waves = kMaxWaves;
      }
      shape.blocks = static_cast<uint32_t>(blocks);
      shape.use = p.blockUse(stage.threads, stage.smemBytes, stage.regs);
      shape.blockUs = stage.durationUs / double(waves);
    }
    shape.perEmptySM = fitting(p.smCapacity(), shape.use);
    return shape;
  }

  // --- Events ----------------------------------------------------------------
  /// Times on a grid of picoseconds (1e-6 us), each the double nearest its
  /// decimal. A time reached by two paths (a kernel's end plus a stream's
  /// gap, a copy's end plus a wait's latency) is then one value, not two
  /// that differ in the last bit: a tie between them is a tie in every
  /// iteration, broken the same way, and a settled replay repeats (the
  /// skip-ahead relies on it). Rounded up, but for a thousandth of a step
  /// of rounding: no work ends sooner than its time, and a time already on
  /// the grid stays as it is (180.3 stays 180.3).
  static double onGrid(double t) { return std::ceil(t * 1e6 - 1e-3) / 1e6; }

  void post(double time, Event::Kind kind, uint32_t a = 0, uint32_t b = 0) {
    events.push({onGrid(time), seq++, kind, a, b});
  }

  void handle(const Event &e, double now) {
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

  /// Each device maps its streams round-robin onto its own hardware queues.
  uint32_t queueOf(uint32_t stream) const {
    return gpus.size() == 1 ? stream % hw : deviceOfStream[stream] * hw + stream % hw;
  }
  /// The device instance v runs on: its stream's.
  Gpu &gpuOf(uint32_t v) {
    return gpus.size() == 1 ? gpus[0] : gpus[deviceOfStream[s.streamOf(v)]];
  }
  int priorityOf(uint32_t instance) const {
    return options.priorities ? s.stream(s.streamOf(instance)).cudaPriority : 0;
  }

  // --- The host threads --------------------------------------------------------
  // Each device's host thread runs its calls of the schedule (s.ops, or
  // s.graphOps for the graph lowering) in order: `issue=` dispatch and the
  // API cost of each call, `cpu` stages, and synchronisations, where it
  // blocks until the event's record completes, then wakes after
  // sync_latency_us. A launch whose call is done while the driver already
  // holds launch_queue_depth launches of its device not yet started waits
  // for one of them to start. With several devices a thread waits too for
  // what another thread must have done first (the threads share no order):
  // a wait or sync until the record it binds to was issued, a join until
  // the other thread's cpu stage ran (then wakes after sync_latency_us).
  enum class Block : uint8_t { None, Record, Queue, Issued, Join };

  struct HostThread {
    size_t next = 0; ///< the op it is at (an index into the list)
    size_t pos = 0;  ///< several devices: where it is in its ops
    double at = 0;   ///< when that op started
    double done = 0; ///< when its own work ends (infinity: blocked or done)
    Block block = Block::None;
    double blockedSince = 0;
    uint32_t device = 0; ///< whose thread it is
    /// The recorded graph (graph=N) and iteration its last launch was a
    /// node of: its next nodes, and the records and waits between them,
    /// went to the device with that one call (-1: none open).
    int64_t graph = -1;
    uint32_t graphIteration = 0;
  };

  /// Whether instance v is a node of the recorded graph thread h's last
  /// launch opened (launched by that call: no host time of its own).
  bool inOpenGraph(const HostThread &h, uint32_t v) const {
    const int64_t g = s.instances.stage(v).graph;
    return g >= 0 && g == h.graph && s.instances.iterationOf(v) == h.graphIteration;
  }
  /// Per host op: the instance the next launch after it launches (kNone:
  /// none). Only for programs with recorded graphs.
  std::vector<uint32_t> nextLaunch;
  /// Whether host op i, a record or wait, is an edge inside the recorded
  /// graph thread h has open: its producer and the next launch are nodes.
  bool edgeOfOpenGraph(const HostThread &h, size_t i, uint32_t producer) const {
    return !nextLaunch.empty() && nextLaunch[i] != kNone && inOpenGraph(h, producer) &&
           inOpenGraph(h, nextLaunch[i]);
  }

  const std::vector<Op> &hostOps() const {
    return lowering == Lowering::Streams ? s.ops : s.graphOps;
  }
  unsigned queueDepth() const { return std::max(1u, p.launchQueueDepth); }

  void startHost() {
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

  /// When every thread is done (or blocked for good), the last of them.
  double nextHostDone() const {
    double done = threads[0].done;
    for (size_t t = 1; t < threads.size(); ++t)
      done = std::min(done, threads[t].done);
    return done;
  }

  void hostSpan(const HostThread &h, double from, double to, const char *what,
                uint32_t instance) {
    if (options.recordHost)
      out.host.push_back({from, to, what, instance, h.device});
  }

  /// Host time of thread h's: in the replay's sum, and with several
  /// threads in the thread's own.
  void charge(const HostThread &h, double runtime::HostTime::*what, double us) {
    out.hostTime.*what += us;
    if (threads.size() > 1)
      out.threadTime[h.device].*what += us;
  }

  void block(HostThread &h, Block why, double since) {
    constexpr double kNever = std::numeric_limits<double>::infinity();
    h.block = why;
    h.blockedSince = since;
    h.done = kNever;
  }

  /// Several threads: whether op i of another thread was issued (its call done).
  bool issued(uint32_t i) const { return issuedUpTo[opThread[i]] > i; }

  /// Starts op h.next at h.at: when its own work ends (h.done, on the
  /// grid), or blocked.
  void beginHostOp(HostThread &h) {
    beginHostOpOffGrid(h);
    h.done = onGrid(h.done);
  }

  void beginHostOpOffGrid(HostThread &h) {
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

  /// A sync (or a join: `what`) blocked the thread from `from` to `to`.
  void syncSpan(const HostThread &h, double from, double to, uint32_t producer,
                const char *what = "sync") {
    hostSpan(h, from, to, what, producer);
    charge(h, &runtime::HostTime::blocked, to - from);
  }

  /// Op h.next's own work is done at `now`: it takes effect, and the next
  /// one starts.
  void finishHostOp(HostThread &h, double now) {
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

  /// Several threads: those blocked on another's issue or cpu stage look again.
  void wakeThreads(double now) {
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

  /// Every thread's ops whose work is done by `now`, thread by thread (a
  /// thread woken by another's looks again).
  void finishHostOps(double now) {
    for (bool again = true; again;) {
      again = false;
      for (HostThread &h : threads)
        while (h.done <= now) {
          finishHostOp(h, now);
          again = threads.size() > 1;
        }
    }
  }

  /// Delivers a launch that waited for room in its device's driver queue,
  /// if one has room now.
  bool deliverOneBlocked(double now) {
    for (HostThread &h : threads)
      if (h.block == Block::Queue && gpus[h.device].pendingLaunches < queueDepth()) {
        deliverBlocked(h, now);
        return true;
      }
    return false;
  }

  /// The launch that waited for room in the driver's queue is taken now.
  void deliverBlocked(HostThread &h, double now) {
    h.block = Block::None;
    hostSpan(h, h.blockedSince, now, "blocked: launch queue full", kNone);
    charge(h, &runtime::HostTime::blocked, now - h.blockedSince);
    h.done = now;
  }

  /// Record op `record` completed at `now`: a host blocked on it wakes.
  void recordCompleted(uint32_t record, double now) {
    recordDoneAt.set(record, now);
    for (HostThread &h : threads)
      if (h.block == Block::Record && boundRecord[h.next] == record) {
        h.block = Block::None;
        const double wake = onGrid(std::max(h.at, now + p.syncLatencyUs));
        syncSpan(h, h.blockedSince, wake, hostOps()[h.next].instance);
        h.done = wake;
      }
  }

  // --- Stream lowering -------------------------------------------------------
  void startStreams() {
    const size_t streams = s.streamPlan.streams.size();
    queues.assign(size_t(hw) * gpus.size(), {});
    queueWake.assign(queues.size(), -1);
    queueDirty.assign(queues.size(), 0);
    stuckOn.assign(queues.size(), kNone);
    waitNext.assign(queues.size(), kNone);
    streamBusy.assign(streams, 0);
    streamFreeAt.assign(streams, 0);
  }

  /// Moves every hardware queue's head along as far as it can go now.
  /// Looks again at queue q at `time` (once per distinct time).
  void wakeQueue(uint32_t q, double time) {
    time = onGrid(time);
    if (queueWake[q] == time)
      return;
    queueWake[q] = time;
    post(time, Event::Wake, q);
  }

  /// A queue is looked at only when something that held its head back may
  /// have changed: an op arrived, its stream finished, a wake-up time came,
  /// the record its wait binds to ran, a resident-kernel slot freed up.
  void markQueue(uint32_t q) { queueDirty[q] = 1; }
  void markAllQueues() { std::fill(queueDirty.begin(), queueDirty.end(), 1); }
  /// Queue q's head waits for record op `record`, not yet reached.
  void waitFor(uint32_t q, uint32_t record) {
    if (stuckOn[q] == record)
      return;
    stuckOn[q] = record;
    auto [it, added] = waitHeads.try_emplace(record, q);
    waitNext[q] = added ? kNone : it->second;
    it->second = q;
  }
  void recordReached(uint32_t record) {
    auto it = waitHeads.find(record);
    if (it == waitHeads.end())
      return;
    uint32_t q = it->second;
    waitHeads.erase(it);
    while (q != kNone) {
      uint32_t next = waitNext[q];
      stuckOn[q] = kNone;
      waitNext[q] = kNone;
      markQueue(q);
      q = next;
    }
  }

  bool pumpQueues(double now) {
    bool progress = false;
    for (uint32_t qi = 0; qi < queues.size(); ++qi) {
      if (!queueDirty[qi])
        continue;
      queueDirty[qi] = 0; // until something changes again
      std::deque<uint32_t> &q = queues[qi];
      while (!q.empty()) {
        const Op &op = hostOps()[q.front()];
        const uint32_t stream = op.stream;
        if (streamBusy[stream])
          break; // the stream's previous item is still running
        if (now < streamFreeAt[stream]) {
          wakeQueue(qi, streamFreeAt[stream]);
          break;
        }
        if (op.kind == Op::Record) {
          recordCompleted(q.front(), now);
          recordReached(q.front());
        } else if (op.kind == Op::Wait) {
          uint32_t record = boundRecord[q.front()];
          if (record != kNone) {
            double done = recordDoneAt.get(record);
            if (done < 0) {
              waitFor(qi, record);
              break; // the record is not reached yet
            }
            const double ready = onGrid(done + p.waitLatencyUs);
            if (now < ready) {
              wakeQueue(qi, ready);
              break;
            }
          }
        } else if (!dispatch(op.instance, now)) {
          break; // no room for another resident kernel
        } else {
          streamBusy[stream] = 1;
          --gpuOf(op.instance).pendingLaunches;
        }
        q.pop_front();
        progress = true;
      }
    }
    return progress;
  }

  // --- Graph lowering --------------------------------------------------------
  // Each segment is one graph, launched on launch stream g % K (K =
  // kGraphLaunchStreams): it starts once its launch call is done and
  // segment g - K has finished. A node is ready once its segment started,
  // its predecessors in the segment ended (graph_gap_us later) and those in
  // other segments ended (wait_latency_us later: an event-record node there,
  // an event-wait node here). A record (a host sync's) completes when its
  // producer ends.
  void startGraph() {
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

  /// Segment g's launch call is done at `now`.
  void segmentLaunched(uint32_t g, double now) {
    segmentState[g] |= kLaunched;
    startSegment(g, now);
  }

  /// Starts segment g if it was launched and its launch stream's previous
  /// segment has finished.
  void startSegment(uint32_t g, double now) {
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

  void segmentFinished(uint32_t g, double now) {
    segmentDoneAt[g] = now;
    startSegment(g + kGraphLaunchStreams, now);
  }

  /// A record op (a host sync's event-record node after its producer): it
  /// completes when the producer ends.
  void graphRecord(uint32_t record, double) {
    const uint32_t producer = hostOps()[record].instance;
    if (out.end[producer] >= 0)
      recordCompleted(record, out.end[producer]);
    else
      recordsWaiting.push_back({producer, record});
  }

  /// One of node w's conditions holds from `at` on (at >= now): once the
  /// last does, it is ready.
  void release(uint32_t w, double at, double now) {
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

  bool pumpGraph(double now) {
    bool progress = false;
    while (!readyNodes.empty() && dispatch(readyNodes.front(), now)) {
      readyNodes.pop_front();
      progress = true;
    }
    return progress;
  }

  void nodeDone(uint32_t v, double now) {
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

  // --- Work: kernels, copies, host functions ---------------------------------
  /// Starts instance v's work; false when a kernel cannot become resident.
  bool dispatch(uint32_t v, double now) {
    const program::Stage &stage = s.instances.stage(v);
    switch (stage.kind) {
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
      // priority value) first, then oldest.
      const Urgency key{gpu.resident.back().priority, v};
      gpu.waiting.insert(std::upper_bound(gpu.waiting.begin(), gpu.waiting.end(), key), key);
      gpu.blocksChanged = true;
      return true;
    }
    case StageKind::Copy: {
      // A peer copy runs on its source's (its stream's device's) engine.
      unsigned engine = engineIndex(stage.direction);
      gpuOf(v).copyQueues[engine].push_back(v);
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

  // --- Directions of several copy engines ------------------------------------
  // Up to `engines` copies of the direction run at once; each first waits the
  // engine's latency, then moves its bytes at the direction's bandwidth
  // shared equally among the copies moving bytes (PCIe is one link). A
  // copy's `remaining` is its time at the whole bandwidth. The set changes
  // only at events, so between two events each moving copy's progress is
  // the elapsed time over how many move.
  struct SharedCopy {
    uint32_t instance;
    double moveFrom;  ///< when its latency is over
    double remaining; ///< microseconds of transfer left at full bandwidth
  };
  struct SharedDirection {
    std::vector<SharedCopy> active;
    double last = 0;
    uint32_t generation = 0; ///< a CopyStep of another generation is stale
  };

  static size_t moving(const SharedDirection &d, double at) {
    size_t n = 0;
    for (const SharedCopy &c : d.active)
      n += c.moveFrom <= at;
    return n;
  }

  /// Brings direction e up to `now`: progress, finished copies, copies
  /// whose latency ended, new copies from its queue; then the next step.
  bool advanceShared(unsigned device, unsigned e, double now) {
    Gpu &gpu = gpus[device];
    SharedDirection &d = gpu.shared[e];
    bool progress = false;
    if (size_t n = moving(d, d.last)) {
      const double done = (now - d.last) / double(n);
      for (SharedCopy &c : d.active)
        if (c.moveFrom <= d.last)
          c.remaining -= done;
    }
    d.last = now;
    for (size_t i = 0; i < d.active.size();) {
      SharedCopy &c = d.active[i];
      // (Within the grid and the rounding of the step that was to end it.)
      if (c.moveFrom <= now && c.remaining <= 1e-8 + 1e-12 * now) {
        uint32_t v = c.instance;
        d.active.erase(d.active.begin() + i);
        finish(v, now);
        progress = true;
      } else {
        ++i;
      }
    }
    const unsigned engines = p.copyEngines(static_cast<CopyDirection>(e));
    while (d.active.size() < engines && !gpu.copyQueues[e].empty()) {
      uint32_t v = gpu.copyQueues[e].front();
      gpu.copyQueues[e].pop_front();
      setStart(v, now);
      d.active.push_back({v, onGrid(now + p.copyLatencyUs), s.instances.stage(v).durationUs});
      progress = true;
    }
    // The next change: a latency ending, or the first moving copy done.
    double next = std::numeric_limits<double>::infinity();
    const size_t n = moving(d, now);
    for (const SharedCopy &c : d.active)
      next = std::min(next, c.moveFrom > now ? c.moveFrom
                                             : now + std::max(0.0, c.remaining) * double(n));
    ++d.generation;
    if (next != std::numeric_limits<double>::infinity())
      post(next, Event::CopyStep, device * 3 + e, d.generation);
    return progress;
  }

  bool pumpEngines(double now) {
    bool progress = false;
    for (unsigned device = 0; device < gpus.size(); ++device)
      progress |= pumpEngines(device, now);
    return progress;
  }
  bool pumpEngines(unsigned device, double now) {
    Gpu &gpu = gpus[device];
    bool progress = false;
    for (unsigned e = 0; e < 3; ++e)
      if (p.copyEngines(static_cast<CopyDirection>(e)) > 1) {
        if (!gpu.copyQueues[e].empty() &&
            gpu.shared[e].active.size() < p.copyEngines(static_cast<CopyDirection>(e)))
          progress |= advanceShared(device, e, now);
      } else if (!gpu.engineBusy[e] && !gpu.copyQueues[e].empty()) {
        uint32_t v = gpu.copyQueues[e].front();
        gpu.copyQueues[e].pop_front();
        gpu.engineBusy[e] = 1;
        setStart(v, now);
        double done = now + p.copyLatencyUs + s.instances.stage(v).durationUs;
        post(done, Event::ItemDone, v, e);
        progress = true;
      }
    if (!gpu.hostBusy && !gpu.hostQueue.empty()) {
      uint32_t v = gpu.hostQueue.front();
      gpu.hostQueue.pop_front();
      gpu.hostBusy = 1;
      setStart(v, now);
      post(now + s.instances.stage(v).durationUs, Event::ItemDone, v, 3);
      progress = true;
    }
    return progress;
  }

  bool pumpBlocks(double now) {
    bool progress = false;
    for (Gpu &gpu : gpus)
      progress |= pumpBlocks(gpu, now);
    return progress;
  }
  bool pumpBlocks(Gpu &gpu, double now) {
    // Placed all it could last time, and neither a kernel nor a free SM came
    // since: nothing to do.
    if (!gpu.blocksChanged || gpu.waiting.empty())
      return false;
    gpu.blocksChanged = false;
    bool progress = false;
    bool drained = false;
    // Block shapes that found no SM in this pump: SMs only fill up during
    // it, so a shape that needs at least as much of everything finds none
    // either (kernels of one shape, the common case, stop scanning at once).
    llvm::SmallVector<DeviceProfile::BlockUse, 4> full;
    auto hopeless = [&](const DeviceProfile::BlockUse &use) {
      for (const DeviceProfile::BlockUse &f : full)
        if (use.slots >= f.slots && use.threads >= f.threads && use.smem >= f.smem &&
            use.regs >= f.regs)
          return true;
      return false;
    };
    // Only the kernels with blocks to place, most urgent first: the running
    // ones may be many (up to max_resident_kernels) and cost nothing here.
    for (const Urgency &u : gpu.waiting) {
      Resident *r = &gpu.resident[residentSlot[u.instance]];
      // A kernel with SMs of its own (smsPerKernel) fills only those: what
      // another found full says nothing of them.
      const bool own = !r->ownSM.empty();
      std::vector<DeviceProfile::BlockUse> &freeSM = own ? r->ownSM : gpu.freeSM;
      if (!own && hopeless(r->use))
        continue;
      // SMs only fill up during one pump: the search for this kernel's next
      // block starts where the last one fitted.
      uint32_t cursor = 0;
      uint32_t batch = kNone;
      while (r->pending) {
        uint32_t sm = findSM(freeSM, r->use, cursor);
        if (sm == kNone) {
          if (!own && full.size() < 4)
            full.push_back(r->use);
          break; // try smaller blocks of other kernels (backfill)
        }
        // As many of its blocks as fit there, placed and finishing together;
        // and every SM this kernel fills now, in one event: they all finish
        // at one time, handled before the next pump as separate events
        // would be (a GPU-wide grid is an event, not one per SM or block).
        // (An idle SM, the common case, holds what the shape said: no
        // division.)
        const DeviceProfile::BlockUse &f = freeSM[sm];
        const bool idle = f.threads == capacity.threads && f.slots == capacity.slots &&
                          f.smem == capacity.smem && f.regs == capacity.regs;
        const uint32_t k = std::min(r->pending, idle ? r->perEmptySM : fitting(f, r->use));
        take(freeSM[sm], r->use, k);
        r->pending -= k;
        drained |= r->pending == 0;
        r->running += k;
        if (!r->started) {
          r->started = true;
          setStart(r->instance, now);
        }
        if (batch == kNone)
          batch = newBatch();
        // Consecutive SMs that took as many blocks are one run.
        std::vector<SMRun> &runs = batches[batch];
        if (!runs.empty() && runs.back().first + runs.back().count == sm &&
            runs.back().blocks == k)
          ++runs.back().count;
        else
          runs.push_back({sm, 1, k});
        progress = true;
      }
      if (batch != kNone) {
        if (rendezvous && s.instances.stage(r->instance).parts > 1)
          arrive(r->instance, batch, now);
        else
          post(now + r->blockUs, Event::BlockDone, r->instance, batch);
      }
    }
    if (drained)
      gpu.waiting.erase(
          std::remove_if(gpu.waiting.begin(), gpu.waiting.end(),
                         [&](const Urgency &u) {
                           return gpu.resident[residentSlot[u.instance]].pending == 0;
                         }),
          gpu.waiting.end());
    return progress;
  }

  static uint32_t findSM(const std::vector<DeviceProfile::BlockUse> &freeSM,
                         const DeviceProfile::BlockUse &use, uint32_t &cursor) {
    for (uint32_t sm = cursor; sm < freeSM.size(); ++sm) {
      const DeviceProfile::BlockUse &f = freeSM[sm];
      if (f.slots >= use.slots && f.threads >= use.threads && f.smem >= use.smem &&
          f.regs >= use.regs) {
        cursor = sm;
        return sm;
      }
    }
    return kNone;
  }
  /// How many blocks of `use` fit in `free` (at least 1 where findSM chose it).
  static uint32_t fitting(const DeviceProfile::BlockUse &free,
                          const DeviceProfile::BlockUse &use) {
    uint64_t fit = use.slots ? free.slots / use.slots : UINT32_MAX;
    if (use.threads)
      fit = std::min(fit, free.threads / use.threads);
    if (use.smem)
      fit = std::min(fit, free.smem / use.smem);
    if (use.regs)
      fit = std::min(fit, free.regs / use.regs);
    return static_cast<uint32_t>(std::min<uint64_t>(fit, UINT32_MAX));
  }
  static void take(DeviceProfile::BlockUse &free, const DeviceProfile::BlockUse &use,
                   uint64_t k) {
    free.threads -= k * use.threads, free.slots -= k * use.slots, free.smem -= k * use.smem,
        free.regs -= k * use.regs;
  }
  static void give(DeviceProfile::BlockUse &free, const DeviceProfile::BlockUse &use,
                   uint64_t k) {
    free.threads += k * use.threads, free.slots += k * use.slots, free.smem += k * use.smem,
        free.regs += k * use.regs;
  }

  /// A part of a collective spanning several devices has its block on an
  /// SM (`batch`): it holds it until every part has arrived, then all run
  /// the collective's time together and end together (NCCL's kernels wait
  /// for their peers).
  void arrive(uint32_t v, uint32_t batch, double now) {
    const program::Stage &stage = s.instances.stage(v);
    const uint32_t iteration = s.instances.iterationOf(v);
    const uint32_t first = s.instances.idOf(stage.group, iteration);
    Meeting &m = meetings[first];
    m.arrived.push_back({v, batch});
    if (m.arrived.size() < stage.parts)
      return;
    const double end = now + shapes[s.instances.stageOf(v)].blockUs;
    for (auto [part, b] : m.arrived)
      post(end, Event::BlockDone, part, b);
    meetings.erase(first);
  }

  /// A list of (SM, blocks) for one BlockDone event, from a pool.
  uint32_t newBatch() {
    if (freeBatches.empty()) {
      batches.emplace_back();
      return static_cast<uint32_t>(batches.size() - 1);
    }
    uint32_t b = freeBatches.back();
    freeBatches.pop_back();
    return b;
  }

  void blockDone(uint32_t v, uint32_t batch, double now) {
    Gpu &gpu = gpuOf(v);
    std::vector<Resident> &resident = gpu.resident;
    const uint32_t slot = residentSlot[v];
    Resident &r = resident[slot];
    for (const SMRun &run : batches[batch]) {
      for (uint32_t sm = run.first; sm < run.first + run.count; ++sm)
        give(r.ownSM.empty() ? gpu.freeSM[sm] : r.ownSM[sm], r.use, run.blocks);
      r.running -= run.count * run.blocks;
    }
    batches[batch].clear();
    freeBatches.push_back(batch);
    gpu.blocksChanged = true;
    if (r.running == 0 && r.pending == 0) {
      // Its slot goes to the last resident kernel (their order in the list
      // matters nowhere: `waiting` keeps the urgency order).
      if (slot + 1 != resident.size()) {
        r = resident.back();
        residentSlot[r.instance] = slot;
      }
      resident.pop_back();
      if (blockedOnResidency) {
        // A queue that could not launch for want of a resident slot may now.
        blockedOnResidency = false;
        markAllQueues();
      }
      finish(v, now);
    }
  }

  void itemDone(uint32_t v, double now) {
    const program::Stage &stage = s.instances.stage(v);
    if (stage.kind == StageKind::Copy) {
      unsigned e = engineIndex(stage.direction);
      gpuOf(v).engineBusy[e] = 0;
    } else if (stage.kind == StageKind::Host) {
      gpuOf(v).hostBusy = 0;
    }
    finish(v, now);
  }

  void finish(uint32_t v, double now) {
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

  void setStart(uint32_t v, double t) {
    if (!options.starts)
      return;
    out.start[v] = t;
    if (logging)
      assigned.push_back({v, false, t});
  }
  void setEnd(uint32_t v, double t) {
    out.end[v] = t;
    if (logging)
      assigned.push_back({v, true, t});
  }

  // --- Extrapolation ---------------------------------------------------------
  // At the start of each block of iterations in the schedule's periodic
  // range (Periodic.h) the model writes its whole state down relative to
  // the block: times less the clock, instances less the block's first, ops
  // less the block's first call. When that equals the previous block's
  // (within rounding), the blocks up to near the end of the range would run
  // the same way, each one block's time later: their starts and ends are
  // the last block's shifted, the state jumps ahead, and the model runs the
  // rest. Streams: a block starts when the host reaches its first launch.
  // Graph (one segment, no host work): when every instance before the
  // block's first has ended.

  void findPeriod() {
    // (One device: the state written down is that device's.)
    if (options.issueAt || options.recordHost || options.lookEverywhere || gpus.size() > 1)
      return;
    if (lowering == Lowering::Streams) {
      period = findPeriodicity(s, hostOps(), boundRecord);
    } else {
      if (s.graphOps.size() != 1 || s.segments > 1)
        return;
      for (uint32_t v = 0; v < n; ++v)
        if (s.onHost(v))
          return;
      period = findGraphPeriodicity(s, successors, remaining);
    }
    if (period)
      nextCheck = period.first - 1;
  }

  uint64_t blockStart(uint32_t b) const { return uint64_t(b) * period.instances; }

  void maybeCheckpoint() {
    if (lowering == Lowering::Streams) {
      if (threads[0].next < period.opOfBlock(nextCheck))
        return;
    } else {
      while (lowest < n && out.end[lowest] >= 0)
        ++lowest;
      if (lowest < blockStart(nextCheck))
        return;
    }
    checkpoint(nextCheck++);
    if (nextCheck >= period.end || compared > kCompareBudget)
      stopExtrapolating();
  }

  void stopExtrapolating() {
    period = Periodicity();
    logging = false;
    assigned.clear();
    assigned.shrink_to_fit();
    lastAssigned.clear();
    lastAssigned.shrink_to_fit();
  }

  /// The most signature entries compared in all before the model gives up
  /// on a schedule that never settles.
  static constexpr uint64_t kCompareBudget = uint64_t(1) << 26;

  void checkpoint(uint32_t b) {
    const bool behind = lowering == Lowering::Streams
                            ? threads[0].next - period.opOfBlock(b) >= period.ops
                            : lowest - blockStart(b) >= period.instances;
    if (behind || !signature(sig, b)) {
      // Not at this block's start (several passed at once), or too much
      // to write down: no comparison across it, and nothing logged until
      // the next block that starts here.
      lastBlock = kNone;
      settled = 0;
      logging = false;
      assigned.clear();
      if (!behind)
        stopExtrapolating();
      return;
    }
    compared += sig.size();
    // Settled: the same state as a block ago, twice running, and the last
    // block set the starts and ends of the one before, shifted.
    const bool same = lastBlock + 1 == b && sameState(sig, lastSig, clock) &&
                      repeatsLastBlock(clock - lastT);
    settled = same ? settled + 1 : 0;
    if (settled >= 2) {
      const uint32_t jump = period.end - 2 > b ? period.end - 2 - b : 0;
      if (jump > 0 && shiftAhead(jump, clock - lastT)) {
        out.extrapolatedIterations = uint64_t(jump) * period.iterations;
        stopExtrapolating();
        return;
      }
    }
    std::swap(sig, lastSig);
    lastT = clock;
    lastBlock = b;
    std::swap(assigned, lastAssigned);
    assigned.clear();
    logging = true;
    hostTimeThen = out.hostTime;
    eventsThen = out.simulatedEvents;
  }

  /// Whether the block just ended set what the one before it set, one
  /// block (`every` microseconds) later.
  bool repeatsLastBlock(double every) const {
    if (assigned.size() != lastAssigned.size())
      return false;
    const double tolerance = (std::abs(clock) + 1) * 0x1p-42;
    for (size_t i = 0; i < assigned.size(); ++i) {
      const Assigned &a = assigned[i], &b = lastAssigned[i];
      if (a.instance != uint64_t(b.instance) + period.instances || a.end != b.end ||
          !(std::abs(a.t - (b.t + every)) <= tolerance))
        return false;
    }
    return true;
  }

  static bool sameState(const std::vector<double> &a, const std::vector<double> &b,
                        double at) {
    if (a.size() != b.size())
      return false;
    // Times repeat up to rounding: each is a sum of the same durations at
    // another magnitude.
    const double tolerance = (std::abs(at) + 1) * 0x1p-42;
    for (size_t i = 0; i < a.size(); ++i)
      if (a[i] != b[i] && !(std::abs(a[i] - b[i]) <= tolerance))
        return false;
    return true;
  }

  /// The state relative to block b's start; false when it is too large.
  bool signature(std::vector<double> &g, uint32_t b) {
    constexpr double kInf = 1e300, kNoneMark = -1e300, kPast = -2e300;
    constexpr size_t kMaxSignature = size_t(1) << 20;
    g.clear();
    const double T = clock;
    const double I = double(blockStart(b));
    const double O = lowering == Lowering::Streams ? double(period.opOfBlock(b)) : 0;
    auto time = [&](double t) { return std::isinf(t) ? kInf : t - T; };
    auto inst = [&](uint32_t v) { return v == kNone ? kNoneMark : double(v) - I; };
    auto opAt = [&](uint64_t o) { return o == kNone ? kNoneMark : double(o) - O; };

    // The host.
    const bool hostFinished = threads[0].next >= hostOps().size();
    g.push_back(opAt(threads[0].next));
    g.push_back(time(threads[0].done));
    g.push_back(hostFinished ? 0 : threads[0].at - T);
    g.push_back(double(threads[0].block));
    g.push_back(threads[0].block != Block::None ? threads[0].blockedSince - T : 0);
    g.push_back(gpus[0].pendingLaunches);

    if (lowering == Lowering::Streams) {
      uint64_t oldest = threads[0].next;
      for (uint32_t q = 0; q < queues.size(); ++q) {
        g.push_back(double(queues[q].size()));
        for (uint32_t o : queues[q]) {
          g.push_back(opAt(o));
          oldest = std::min<uint64_t>(oldest, o);
        }
        g.push_back(queueWake[q] < T ? kPast : queueWake[q] - T);
        g.push_back(queueDirty[q]);
        g.push_back(opAt(stuckOn[q]));
        g.push_back(waitNext[q] == kNone ? kNoneMark : double(waitNext[q]));
      }
      for (size_t st = 0; st < streamBusy.size(); ++st) {
        g.push_back(streamBusy[st]);
        g.push_back(streamFreeAt[st] <= T ? kPast : streamFreeAt[st] - T);
      }
      // The records a wait or sync still to come may bind to.
      const uint64_t from = oldest >= period.reach ? oldest - period.reach : 0;
      if (threads[0].next - from > kMaxSignature)
        return false;
      g.push_back(opAt(from));
      const std::vector<Op> &list = hostOps();
      for (uint64_t r = from; r < threads[0].next; ++r)
        if (list[r].kind == Op::Record) {
          const double done = recordDoneAt.get(r);
          g.push_back(done < 0 ? kNoneMark : done - T);
          auto head = waitHeads.find(static_cast<uint32_t>(r));
          g.push_back(head == waitHeads.end() ? kNoneMark : double(head->second));
        }
    } else {
      // The nodes between the lowest not ended and the highest a finished
      // node has counted down.
      if (touched + 1 > lowest && touched + 1 - lowest > kMaxSignature)
        return false;
      g.push_back(inst(static_cast<uint32_t>(lowest)));
      g.push_back(touched == kNone ? kNoneMark : inst(touched));
      if (touched != kNone)
        for (uint64_t v = lowest; v <= touched; ++v) {
          g.push_back(remaining[v]);
          g.push_back(out.end[v] >= 0);
        }
      if (readyNodes.size() > kMaxSignature)
        return false;
      g.push_back(double(readyNodes.size()));
      for (uint32_t v : readyNodes)
        g.push_back(inst(v));
      std::vector<std::pair<double, uint32_t>> ready = pendingReady.items();
      std::sort(ready.begin(), ready.end());
      g.push_back(double(ready.size()));
      for (auto [t, v] : ready) {
        g.push_back(t - T);
        g.push_back(inst(v));
      }
      g.push_back(segmentState[0]);
      g.push_back(nextSegment);
      g.push_back(segmentDoneAt[0] < 0 ? kNoneMark : segmentDoneAt[0] - T);
    }

    // Events, in the order they will be taken.
    std::vector<Event> pending = events.items();
    if (pending.size() > kMaxSignature)
      return false;
    std::sort(pending.begin(), pending.end(),
              [](const Event &a, const Event &b) { return b > a; });
    g.push_back(double(pending.size()));
    for (const Event &e : pending) {
      g.push_back(e.time - T);
      g.push_back(e.kind);
      switch (e.kind) {
      case Event::BlockDone:
        g.push_back(inst(e.a));
        g.push_back(double(batches[e.b].size()));
        for (const SMRun &run : batches[e.b]) {
          g.push_back(run.first);
          g.push_back(run.count);
          g.push_back(run.blocks);
        }
        break;
      case Event::ItemDone:
        g.push_back(inst(e.a));
        g.push_back(e.b);
        break;
      case Event::HostReady:
        g.push_back(inst(e.a));
        break;
      case Event::Wake:
        g.push_back(e.a);
        break;
      case Event::CopyStep:
        g.push_back(e.a);
        g.push_back(e.b == gpus[e.a / 3].shared[e.a % 3].generation);
        break;
      }
    }

    // The device (extrapolation runs on one: findPeriod).
    const Gpu &gpu = gpus[0];
    for (const DeviceProfile::BlockUse &f : gpu.freeSM) {
      g.push_back(double(f.threads));
      g.push_back(double(f.slots));
      g.push_back(double(f.smem));
      g.push_back(double(f.regs));
    }
    std::vector<const Resident *> held;
    for (const Resident &r : gpu.resident)
      held.push_back(&r);
    std::sort(held.begin(), held.end(),
              [](const Resident *a, const Resident *b) { return a->instance < b->instance; });
    g.push_back(double(held.size()));
    for (const Resident *r : held) {
      g.push_back(inst(r->instance));
      g.push_back(r->priority);
      g.push_back(r->pending);
      g.push_back(r->running);
      g.push_back(r->started);
    }
    g.push_back(double(gpu.waiting.size()));
    for (const Urgency &u : gpu.waiting) {
      g.push_back(u.priority);
      g.push_back(inst(u.instance));
    }
    g.push_back(gpu.blocksChanged);
    g.push_back(blockedOnResidency);
    for (unsigned e = 0; e < 3; ++e) {
      g.push_back(double(gpu.copyQueues[e].size()));
      for (uint32_t v : gpu.copyQueues[e])
        g.push_back(inst(v));
      g.push_back(gpu.engineBusy[e]);
      g.push_back(double(gpu.shared[e].active.size()));
      for (const SharedCopy &c : gpu.shared[e].active) {
        g.push_back(inst(c.instance));
        g.push_back(c.moveFrom - T);
        g.push_back(c.remaining);
      }
      if (!gpu.shared[e].active.empty())
        g.push_back(gpu.shared[e].last - T);
    }
    g.push_back(double(gpu.hostQueue.size()));
    for (uint32_t v : gpu.hostQueue)
      g.push_back(inst(v));
    g.push_back(gpu.hostBusy);
    return g.size() <= kMaxSignature;
  }

  /// Runs `blocks` blocks ahead, each `every` later than the one before,
  /// from the last block's record; false (nothing changed) when a shifted
  /// instance would fall past the end.
  bool shiftAhead(uint32_t blocks, double every) {
    const uint64_t dI = uint64_t(blocks) * period.instances;
    uint64_t highest = 0;
    for (const Assigned &a : assigned)
      highest = std::max<uint64_t>(highest, a.instance);
    Gpu &gpu = gpus[0];
    for (const Resident &r : gpu.resident)
      highest = std::max<uint64_t>(highest, r.instance);
    if (highest + dI >= n || (touched != kNone && touched + dI >= n))
      return false;
    const double dT = double(blocks) * every;

    // The skipped blocks' starts and ends.
    for (uint32_t j = 1; j <= blocks; ++j) {
      const uint64_t di = uint64_t(j) * period.instances;
      const double dt = double(j) * every;
      for (const Assigned &a : assigned)
        (a.end ? out.end : out.start)[a.instance + di] = onGrid(a.t + dt);
    }
    // What the host and the model spent on them.
    out.hostTime.cpu += blocks * (out.hostTime.cpu - hostTimeThen.cpu);
    out.hostTime.issue += blocks * (out.hostTime.issue - hostTimeThen.issue);
    out.hostTime.api += blocks * (out.hostTime.api - hostTimeThen.api);
    out.hostTime.blocked += blocks * (out.hostTime.blocked - hostTimeThen.blocked);
    out.simulatedEvents += blocks * (out.simulatedEvents - eventsThen);

    auto shiftInstance = [&](uint32_t &v) {
      if (v != kNone)
        v = static_cast<uint32_t>(v + dI);
    };
    // The host.
    if (threads[0].next < hostOps().size()) {
      const uint64_t dO = uint64_t(blocks) * period.ops;
      threads[0].next += dO;
      threads[0].at = onGrid(threads[0].at + dT);
      if (!std::isinf(threads[0].done))
        threads[0].done = onGrid(threads[0].done + dT);
      if (threads[0].block != Block::None)
        threads[0].blockedSince = onGrid(threads[0].blockedSince + dT);
    }
    if (lowering == Lowering::Streams) {
      const uint64_t dO = uint64_t(blocks) * period.ops;
      uint64_t oldest = threads[0].next - dO;
      for (uint32_t q = 0; q < queues.size(); ++q) {
        for (uint32_t &o : queues[q]) {
          oldest = std::min<uint64_t>(oldest, o);
          o = static_cast<uint32_t>(o + dO);
        }
        queueWake[q] = queueWake[q] < clock ? -1 : onGrid(queueWake[q] + dT);
        if (stuckOn[q] != kNone)
          stuckOn[q] = static_cast<uint32_t>(stuckOn[q] + dO);
      }
      for (double &t : streamFreeAt)
        t = onGrid(t + dT);
      const uint64_t from = oldest >= period.reach ? oldest - period.reach : 0;
      const std::vector<Op> &list = hostOps();
      for (uint64_t r = threads[0].next - dO; r-- > from;)
        if (list[r].kind == Op::Record) {
          const double done = recordDoneAt.get(r);
          if (done >= 0)
            recordDoneAt.set(r + dO, onGrid(done + dT));
        }
      // Records not yet reached that queues wait for are theirs shifted.
      llvm::DenseMap<uint32_t, uint32_t> heads;
      for (auto [record, q] : waitHeads)
        heads[static_cast<uint32_t>(record + dO)] = q;
      waitHeads = std::move(heads);
    } else {
      if (touched != kNone) {
        for (uint64_t v = touched + 1; v-- > lowest;)
          remaining[v + dI] = remaining[v];
        touched = static_cast<uint32_t>(touched + dI);
      }
      lowest += dI;
      segmentLeft[0] -= static_cast<uint32_t>(dI);
      for (uint32_t &v : readyNodes)
        shiftInstance(v);
      for (auto &[t, v] : pendingReady.items()) {
        t = onGrid(t + dT);
        shiftInstance(v);
      }
      pendingReady.reorder();
    }
    // The device.
    for (Event &e : events.items()) {
      e.time = onGrid(e.time + dT);
      if (e.kind == Event::BlockDone || e.kind == Event::ItemDone ||
          e.kind == Event::HostReady)
        shiftInstance(e.a);
    }
    events.reorder();
    for (uint32_t slot = 0; slot < gpu.resident.size(); ++slot) {
      shiftInstance(gpu.resident[slot].instance);
      residentSlot[gpu.resident[slot].instance] = slot;
    }
    for (Urgency &u : gpu.waiting)
      shiftInstance(u.instance);
    for (unsigned e = 0; e < 3; ++e) {
      for (uint32_t &v : gpu.copyQueues[e])
        shiftInstance(v);
      for (SharedCopy &c : gpu.shared[e].active) {
        shiftInstance(c.instance);
        c.moveFrom = onGrid(c.moveFrom + dT);
      }
      gpu.shared[e].last = onGrid(gpu.shared[e].last + dT);
    }
    for (uint32_t &v : gpu.hostQueue)
      shiftInstance(v);
    clock = onGrid(clock + dT);
    return true;
  }

  void pump(double now) {
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

  const Schedule &s;
  Lowering lowering;
  const DeviceProfile &p;
  ModelOptions options;
  const size_t n;
  const uint32_t hw; ///< hardware queues per device (the profile's, or a queue per stream)
  ReplayTrace out;

  /// A priority queue whose items the extrapolation can read and shift.
  template <typename T> struct Heap : std::priority_queue<T, std::vector<T>, std::greater<>> {
    std::vector<T> &items() { return this->c; }
    const std::vector<T> &items() const { return this->c; }
    void reorder() { std::make_heap(this->c.begin(), this->c.end(), this->comp); }
  };
  Heap<Event> events;
  uint64_t seq = 0;

  // The host threads: one, or with several devices (stream lowering) one
  // per device, each with its ops in order and how far it has issued.
  std::vector<HostThread> threads;
  std::vector<uint32_t> opThread;
  std::vector<std::vector<uint32_t>> threadOps;
  std::vector<size_t> issuedUpTo;    ///< per thread: its ops before this are issued
  std::vector<uint32_t> boundRecord; ///< per op: the record a wait or sync binds to
  /// Per op: when a record completed (-1: not yet). Its pages are touched
  /// only where records complete: a run that skips ahead leaves most
  /// unallocated.
  class RecordTimes {
  public:
    void reset(size_t ops) {
      at.reset(new double[ops]);
      done.assign(ops, false);
    }
    double get(size_t r) const { return done[r] ? at[r] : -1; }
    void set(size_t r, double t) {
      at[r] = t;
      done[r] = true;
    }

  private:
    std::unique_ptr<double[]> at;
    std::vector<bool> done;
  };
  RecordTimes recordDoneAt;

  // Streams.
  std::vector<std::deque<uint32_t>> queues; ///< op indices per hardware queue
  std::vector<double> queueWake;
  std::vector<uint8_t> queueDirty;
  /// Waits held back by records not yet reached: per record op, the first
  /// queue waiting (waitHeads), then the next (waitNext, per queue); stuckOn
  /// keeps a queue from being listed twice.
  llvm::DenseMap<uint32_t, uint32_t> waitHeads; ///< record op -> first queue
  std::vector<uint32_t> waitNext, stuckOn;
  std::vector<uint8_t> streamBusy;
  std::vector<double> streamFreeAt;

  // Graph.
  CSR successors;
  std::vector<uint32_t> remaining;
  std::deque<uint32_t> readyNodes;
  /// Nodes whose last dependency ended, by the time they become ready.
  Heap<std::pair<double, uint32_t>> pendingReady;
  static constexpr uint8_t kLaunched = 1, kStarted = 2;
  std::vector<uint32_t> segmentNodes, segmentDynamic, segmentLeft;
  std::vector<std::vector<uint32_t>> segmentRoots;
  std::vector<uint8_t> segmentState;
  std::vector<double> segmentDoneAt;
  uint32_t nextSegment = 0; ///< segments started
  /// The waits between segments (Schedule::graphWaits) as successor lists,
  /// and when each node's waits allow it to start (empty without waits).
  CSR waitSuccessors;
  std::vector<double> waitReadyAt;
  /// Host syncs' records whose producer has not ended: (producer, record op).
  std::vector<std::pair<uint32_t, uint32_t>> recordsWaiting;

  // Devices.
  const DeviceProfile::BlockUse capacity; ///< one SM's, all free
  /// BlockDone events' lists of SM runs, and the free ones among them.
  /// SMs first .. first + count - 1, each with `blocks` of one kernel's.
  struct SMRun {
    uint32_t first, count, blocks;
  };
  std::vector<std::vector<SMRun>> batches;
  std::vector<uint32_t> freeBatches;
  /// Each resident instance's place in its device's `resident`.
  std::unique_ptr<uint32_t[]> residentSlot;
  /// The resident kernels with blocks not yet placed, in urgency order.
  struct Urgency {
    int priority;
    uint32_t instance; ///< also the launch order
    bool operator<(const Urgency &o) const {
      return priority != o.priority ? priority < o.priority : instance < o.instance;
    }
  };
  std::vector<Shape> shapes; ///< per stage
  /// Whether a launch waits for a resident-kernel slot.
  bool blockedOnResidency = false;
  /// One device's SMs, resident kernels, copy engines and host-function
  /// executor (the profile's, each).
  struct Gpu {
    std::vector<DeviceProfile::BlockUse> freeSM; ///< what each SM has free
    std::vector<Resident> resident;
    /// The resident kernels with blocks not yet placed, in urgency order.
    std::vector<Urgency> waiting;
    /// Whether pumpBlocks could place a block it could not before.
    bool blocksChanged = false;
    uint32_t pendingLaunches = 0; ///< delivered to the device, not yet started
    std::deque<uint32_t> copyQueues[3];
    uint8_t engineBusy[3] = {0, 0, 0};
    SharedDirection shared[3];
    std::deque<uint32_t> hostQueue;
    uint8_t hostBusy = 0;
  };
  std::vector<Gpu> gpus;
  std::vector<uint32_t> deviceOfStream; ///< with several devices
  /// Whether a collective spans several devices: its parts meet
  /// (rendezvous) before any runs.
  bool rendezvous = false;
  /// Per collective instance (its first part's), the parts whose block has
  /// started: each waits there until the last arrives.
  struct Meeting {
    llvm::SmallVector<std::pair<uint32_t, uint32_t>, 8> arrived; ///< part, batch
  };
  llvm::DenseMap<uint32_t, Meeting> meetings;

  // Extrapolation.
  Periodicity period;         ///< empty: no (more) checkpoints
  uint32_t nextCheck = 0;     ///< the block whose start is looked for next
  uint32_t lastBlock = kNone; ///< the block lastSig was taken at
  double clock = 0;           ///< the time the model last handled
  double lastT = 0;           ///< the clock at lastBlock's start
  std::vector<double> sig, lastSig;
  uint64_t compared = 0;    ///< signature entries written so far
  uint64_t lowest = 0;      ///< graph: the lowest instance not ended
  uint32_t touched = kNone; ///< graph: the highest a finished node counted down
  struct Assigned {
    uint32_t instance;
    bool end;
    double t;
  };
  /// The starts and ends set since lastBlock's start, and in the block
  /// before.
  std::vector<Assigned> assigned, lastAssigned;
  unsigned settled = 0; ///< checkpoints in a row that found the state repeated
  bool logging = false;
  runtime::HostTime hostTimeThen;
  uint64_t eventsThen = 0;
};

} // namespace

ReplayTrace pipec::sim::simulate(const Schedule &schedule, Lowering lowering,
                                 const DeviceProfile &profile, const ModelOptions &options) {
  return Model(schedule, lowering, profile, options).run();
}
