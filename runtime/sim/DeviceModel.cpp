//===- DeviceModel.cpp ----------------------------------------------------===//

#include "runtime/sim/DeviceModel.h"

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

  bool operator>(const Event &o) const {
    return time != o.time ? time > o.time : seq > o.seq;
  }
};

/// What a stage's kernel (or fill) asks of the device, the same for every
/// instance: worked out once per stage, not per launch.
struct Shape {
  uint32_t blocks = 1;
  DeviceProfile::BlockUse use{};
  double blockUs = 0; ///< the kernel's time over its waves
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
};

class Model {
public:
  Model(const Schedule &s, Lowering lowering, const DeviceProfile &profile,
        const ModelOptions &options)
      : s(s), lowering(lowering), p(profile), options(options),
        n(s.instances.size()), capacity(profile.smCapacity()),
        freeSM(profile.sms, capacity) {
    out.start.assign(n, -1);
    out.end.assign(n, -1);
    residentSlot.assign(n, 0);
    for (const program::Stage &stage : s.pipeline.stages)
      shapes.push_back(shapeOf(stage));
  }

  ReplayTrace run() {
    if (lowering == Lowering::Streams)
      startStreams();
    else
      startGraph();
    startHost();
    // The host thread's calls reach the device in order, each when the call
    // (and whatever the host did before it) is done: the host is followed
    // op by op, not through the event heap. At equal times they come first,
    // as events posted earliest would. Graph nodes that become ready wait
    // in pendingReady, which says when to look next itself: an event in the
    // heap for each would only double the work.
    constexpr double kNever = std::numeric_limits<double>::infinity();
    while (!events.empty() || hostDone != kNever || !pendingReady.empty()) {
      double now = events.empty() ? kNever : events.top().time;
      now = std::min(now, hostDone);
      if (!pendingReady.empty())
        now = std::min(now, pendingReady.top().first);
      while (hostDone <= now)
        finishHostOp(now);
      while (!events.empty() && events.top().time == now) {
        Event e = events.top();
        events.pop();
        ++out.simulatedEvents;
        handle(e, now);
      }
      pump(now);
      // A launch that waited for room in the driver's queue goes now.
      while (hostBlock == Block::Queue && pendingLaunches < queueDepth()) {
        deliverBlocked(now);
        while (hostDone <= now)
          finishHostOp(now);
        pump(now);
      }
    }
    for (double e : out.end)
      out.doneUs = std::max(out.doneUs, e);
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
    if (stage.kind == StageKind::Memset) {
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
  void post(double time, Event::Kind kind, uint32_t a = 0, uint32_t b = 0) {
    events.push({time, seq++, kind, a, b});
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
      hostQueue.push_back(e.a);
      break;
    case Event::Wake:
      // Makes the pump look again (at a hardware queue: that one).
      if (lowering == Lowering::Streams)
        markQueue(e.a);
      break;
    case Event::CopyStep:
      if (e.b == shared[e.a].generation)
        advanceShared(e.a, now);
      break;
    }
  }

  uint32_t queueOf(uint32_t stream) const {
    return stream % std::max(1u, p.hardwareQueues);
  }
  int priorityOf(uint32_t instance) const {
    return options.priorities ? s.stream(s.streamOf(instance)).cudaPriority : 0;
  }

  // --- The host thread ----------------------------------------------------------
  // It runs the schedule's calls in order (s.ops, or s.graphOps for the
  // graph lowering): `issue=` dispatch and the API cost of each call, `cpu`
  // stages, and synchronisations, where it blocks until the event's record
  // completes, then wakes after sync_latency_us. A launch whose call is done
  // while the driver already holds launch_queue_depth launches not yet
  // started waits for one of them to start.
  enum class Block : uint8_t { None, Record, Queue };

  const std::vector<Op> &hostOps() const {
    return lowering == Lowering::Streams ? s.ops : s.graphOps;
  }
  unsigned queueDepth() const { return std::max(1u, p.launchQueueDepth); }

  void startHost() {
    const std::vector<Op> &list = hostOps();
    // Each wait and sync binds to the latest record of its event before it.
    uint32_t events = lowering == Lowering::Streams ? s.eventObjects : s.graphEventObjects;
    std::vector<uint32_t> latestRecord(events, kNone);
    boundRecord.assign(list.size(), kNone);
    waitHead.assign(list.size(), kNone);
    recordDoneAt.assign(list.size(), -1);
    for (uint32_t i = 0; i < list.size(); ++i) {
      const Op &op = list[i];
      if (op.kind == Op::Record)
        latestRecord[op.event] = i;
      if ((op.kind == Op::Wait || op.kind == Op::Sync) && op.event < events)
        boundRecord[i] = latestRecord[op.event];
    }
    if (options.recordHost)
      out.host.reserve(list.size());
    hostAt = 0;
    hostNext = 0;
    beginHostOp();
  }

  void hostSpan(double from, double to, const char *what, uint32_t instance) {
    if (options.recordHost)
      out.host.push_back({from, to, what, instance});
  }

  /// Starts op hostNext at hostAt: when its own work ends (hostDone), or
  /// blocked.
  void beginHostOp() {
    constexpr double kNever = std::numeric_limits<double>::infinity();
    const std::vector<Op> &list = hostOps();
    if (hostNext >= list.size()) {
      hostDone = kNever;
      out.submitUs = hostAt;
      return;
    }
    const Op &op = list[hostNext];
    switch (op.kind) {
    case Op::Launch: {
      const double dispatch = options.dispatch ? s.instances.stage(op.instance).issueUs : 0;
      double done = hostAt + dispatch + p.launchUs;
      if (options.issueAt)
        done = std::max(done, (*options.issueAt)[op.instance]);
      const double call = done - p.launchUs;
      if (dispatch > 0)
        hostSpan(call - dispatch, call, "issue", op.instance);
      hostSpan(call, done, "launch", op.instance);
      out.hostTime.issue += dispatch;
      out.hostTime.api += p.launchUs;
      hostDone = done;
      return;
    }
    case Op::Record:
    case Op::Wait: {
      const double cost = op.kind == Op::Record ? p.recordUs : p.waitUs;
      hostSpan(hostAt, hostAt + cost, op.kind == Op::Record ? "record" : "wait", op.instance);
      out.hostTime.api += cost;
      hostDone = hostAt + cost;
      return;
    }
    case Op::Cpu: {
      const double work = s.instances.stage(op.instance).durationUs;
      const double start =
          options.issueAt ? std::max(hostAt, (*options.issueAt)[op.instance]) : hostAt;
      out.start[op.instance] = start;
      out.hostTime.cpu += work;
      hostDone = start + work;
      return;
    }
    case Op::Sync: {
      const uint32_t record = boundRecord[hostNext];
      if (record != kNone && recordDoneAt[record] < 0) {
        hostBlock = Block::Record;
        blockedSince = hostAt;
        hostDone = kNever;
        return;
      }
      const double done = record == kNone ? hostAt : recordDoneAt[record];
      const double wake = std::max(hostAt, done + p.syncLatencyUs);
      syncSpan(hostAt, wake, op.instance);
      hostDone = wake;
      return;
    }
    case Op::GraphLaunch: {
      const uint32_t g = op.event;
      const double update = double(segmentDynamic[g]) * p.nodeUpdateUs;
      const double launch = p.graphLaunchUs + double(segmentNodes[g]) * p.graphNodeUs;
      if (update > 0)
        hostSpan(hostAt, hostAt + update, "update nodes", kNone);
      hostSpan(hostAt + update, hostAt + update + launch, "graph launch", kNone);
      out.hostTime.api += update + launch;
      hostDone = hostAt + update + launch;
      return;
    }
    }
  }

  void syncSpan(double from, double to, uint32_t producer) {
    hostSpan(from, to, "sync", producer);
    out.hostTime.blocked += to - from;
  }

  /// Op hostNext's own work is done at `now`: it takes effect, and the next
  /// one starts.
  void finishHostOp(double now) {
    constexpr double kNever = std::numeric_limits<double>::infinity();
    const std::vector<Op> &list = hostOps();
    const Op &op = list[hostNext];
    ++out.simulatedEvents;
    switch (op.kind) {
    case Op::Launch:
      if (pendingLaunches >= queueDepth()) {
        // The driver's queue is full: the call returns once a launch starts.
        hostBlock = Block::Queue;
        blockedSince = now;
        hostDone = kNever;
        return;
      }
      ++pendingLaunches;
      [[fallthrough]];
    case Op::Record:
    case Op::Wait:
      if (lowering == Lowering::Streams) {
        const uint32_t q = queueOf(op.stream);
        queues[q].push_back(static_cast<uint32_t>(hostNext));
        markQueue(q);
      } else {
        graphRecord(static_cast<uint32_t>(hostNext), now);
      }
      break;
    case Op::Cpu:
      out.end[op.instance] = now;
      break;
    case Op::Sync:
      break;
    case Op::GraphLaunch:
      segmentLaunched(op.event, now);
      break;
    }
    hostAt = now;
    ++hostNext;
    beginHostOp();
  }

  /// The launch that waited for room in the driver's queue is taken now.
  void deliverBlocked(double now) {
    hostBlock = Block::None;
    hostSpan(blockedSince, now, "blocked: launch queue full", kNone);
    out.hostTime.blocked += now - blockedSince;
    hostDone = now;
  }

  /// Record op `record` completed at `now`: a host blocked on it wakes.
  void recordCompleted(uint32_t record, double now) {
    recordDoneAt[record] = now;
    if (hostBlock == Block::Record && boundRecord[hostNext] == record) {
      hostBlock = Block::None;
      const double wake = std::max(hostAt, now + p.syncLatencyUs);
      syncSpan(blockedSince, wake, hostOps()[hostNext].instance);
      hostDone = wake;
    }
  }

  // --- Stream lowering -------------------------------------------------------
  void startStreams() {
    const size_t streams = s.streamPlan.streams.size();
    queues.assign(std::max(1u, p.hardwareQueues), {});
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
    if (queueWake[q] == time)
      return;
    queueWake[q] = time;
    post(time, Event::Wake, q);
  }

  /// A queue is looked at only when something that held its head back may
  /// have changed: an op arrived, its stream finished, a wake-up time came,
  /// the record its wait binds to ran, a resident-kernel slot freed up.
  void markQueue(uint32_t q) { queueDirty[q] = 1; }
  void markAllQueues() {
    std::fill(queueDirty.begin(), queueDirty.end(), 1);
  }
  /// Queue q's head waits for record op `record`, not yet reached.
  void waitFor(uint32_t q, uint32_t record) {
    if (stuckOn[q] == record)
      return;
    stuckOn[q] = record;
    waitNext[q] = waitHead[record];
    waitHead[record] = q;
  }
  void recordReached(uint32_t record) {
    for (uint32_t q = waitHead[record]; q != kNone;) {
      uint32_t next = waitNext[q];
      stuckOn[q] = kNone;
      waitNext[q] = kNone;
      markQueue(q);
      q = next;
    }
    waitHead[record] = kNone;
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
            double done = recordDoneAt[record];
            if (done < 0) {
              waitFor(qi, record);
              break; // the record is not reached yet
            }
            double ready = done + p.waitLatencyUs;
            if (now < ready) {
              wakeQueue(qi, ready);
              break;
            }
          }
        } else if (!dispatch(op.instance, now)) {
          break; // no room for another resident kernel
        } else {
          streamBusy[stream] = 1;
          --pendingLaunches;
        }
        q.pop_front();
        progress = true;
      }
    }
    return progress;
  }

  // --- Graph lowering --------------------------------------------------------
  // Each segment is one graph, launched in order on one stream: its nodes
  // become ready once its launch call is done and the segment before it
  // has finished. A record after a launch completes with that segment.
  void startGraph() {
    const CSR &in = s.graphPredecessors();
    remaining.assign(n, 0);
    std::vector<uint64_t> count(n + 1, 0);
    for (uint32_t v = 0; v < n; ++v) {
      remaining[v] = static_cast<uint32_t>(in.row(v).size());
      for (uint32_t u : in.row(v))
        ++count[u + 1];
    }
    for (uint32_t v = 0; v < n; ++v)
      count[v + 1] += count[v];
    successors.begin = count;
    successors.targets.assign(in.edges(), 0);
    for (uint32_t v = 0; v < n; ++v)
      for (uint32_t u : in.row(v))
        successors.targets[count[u]++] = v;
    const uint32_t segments = std::max(1u, s.segments);
    segmentNodes.assign(segments, 0);
    segmentDynamic.assign(segments, 0);
    segmentLeft.assign(segments, 0);
    segmentRoots.assign(segments, {});
    segmentState.assign(segments, 0);
    segmentDoneAt.assign(segments, -1);
    segmentRecords.assign(segments, {});
    for (uint32_t v = 0; v < n; ++v) {
      if (s.onHost(v))
        continue;
      const uint32_t g = s.segmentOf[v];
      ++segmentNodes[g];
      ++segmentLeft[g];
      segmentDynamic[g] += s.instances.stage(v).dynamic;
      if (remaining[v] == 0)
        segmentRoots[g].push_back(v);
    }
  }

  /// Segment g's launch call is done at `now`.
  void segmentLaunched(uint32_t g, double now) {
    segmentState[g] |= kLaunched;
    lastLaunched = g;
    startSegments(now);
  }

  /// Starts every launched segment whose predecessor has finished.
  void startSegments(double now) {
    while (nextSegment < segmentState.size() && (segmentState[nextSegment] & kLaunched) &&
           (nextSegment == 0 || segmentDoneAt[nextSegment - 1] >= 0)) {
      const uint32_t g = nextSegment++;
      segmentState[g] |= kStarted;
      for (uint32_t v : segmentRoots[g])
        readyNodes.push_back(v);
      if (segmentLeft[g] == 0)
        segmentFinished(g, now);
    }
  }

  void segmentFinished(uint32_t g, double now) {
    segmentDoneAt[g] = now;
    for (uint32_t record : segmentRecords[g])
      recordCompleted(record, now);
    segmentRecords[g].clear();
    startSegments(now);
  }

  /// A record op after the latest launch: it completes with that segment.
  void graphRecord(uint32_t record, double now) {
    if (lastLaunched == kNone || segmentDoneAt[lastLaunched] >= 0)
      recordCompleted(record, now);
    else
      segmentRecords[lastLaunched].push_back(record);
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
    if (--segmentLeft[g] == 0)
      segmentFinished(g, now);
    for (uint32_t w : successors.row(v))
      if (--remaining[w] == 0) {
        pendingReady.push({now + p.graphGapUs, w});
        // Its turn comes within a few events: have what it reads then on
        // the way (with many streams the nodes in flight spread over
        // iterations, and a line per array missed).
        __builtin_prefetch(&out.start[w]);
        __builtin_prefetch(&out.end[w]);
        __builtin_prefetch(&residentSlot[w]);
        __builtin_prefetch(&successors.begin[w]);
        __builtin_prefetch(&s.instanceStream[w]);
      }
  }

  // --- Work: kernels, copies, host functions ---------------------------------
  /// Starts instance v's work; false when a kernel cannot become resident.
  bool dispatch(uint32_t v, double now) {
    const program::Stage &stage = s.instances.stage(v);
    switch (stage.kind) {
    case StageKind::Kernel:
    case StageKind::Memset: {
      if (resident.size() >= p.maxResidentKernels) {
        blockedOnResidency = true;
        return false;
      }
      const Shape &shape = shapes[s.instances.stageOf(v)];
      residentSlot[v] = static_cast<uint32_t>(resident.size());
      resident.push_back({v, priorityOf(v), shape.blocks, 0, shape.use, shape.blockUs,
                          shape.perEmptySM});
      // Kept in urgency order as they come: most urgent (lower CUDA
      // priority value) first, then oldest.
      const Urgency key{resident.back().priority, v};
      waiting.insert(std::upper_bound(waiting.begin(), waiting.end(), key), key);
      blocksChanged = true;
      return true;
    }
    case StageKind::Copy: {
      unsigned engine = static_cast<unsigned>(stage.direction);
      copyQueues[engine].push_back(v);
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
  bool advanceShared(unsigned e, double now) {
    SharedDirection &d = shared[e];
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
      // (Within rounding of the step that was to end it.)
      if (c.moveFrom <= now && c.remaining <= 1e-9 + 1e-12 * now) {
        uint32_t v = c.instance;
        d.active.erase(d.active.begin() + i);
        finish(v, now);
        progress = true;
      } else {
        ++i;
      }
    }
    const unsigned engines = p.copyEngines(static_cast<CopyDirection>(e));
    while (d.active.size() < engines && !copyQueues[e].empty()) {
      uint32_t v = copyQueues[e].front();
      copyQueues[e].pop_front();
      out.start[v] = now;
      d.active.push_back({v, now + p.copyLatencyUs, s.instances.stage(v).durationUs});
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
      post(next, Event::CopyStep, e, d.generation);
    return progress;
  }

  bool pumpEngines(double now) {
    bool progress = false;
    for (unsigned e = 0; e < 3; ++e)
      if (p.copyEngines(static_cast<CopyDirection>(e)) > 1) {
        if (!copyQueues[e].empty() &&
            shared[e].active.size() < p.copyEngines(static_cast<CopyDirection>(e)))
          progress |= advanceShared(e, now);
      } else if (!engineBusy[e] && !copyQueues[e].empty()) {
        uint32_t v = copyQueues[e].front();
        copyQueues[e].pop_front();
        engineBusy[e] = 1;
        out.start[v] = now;
        double done = now + p.copyLatencyUs + s.instances.stage(v).durationUs;
        post(done, Event::ItemDone, v, e);
        progress = true;
      }
    if (!hostBusy && !hostQueue.empty()) {
      uint32_t v = hostQueue.front();
      hostQueue.pop_front();
      hostBusy = 1;
      out.start[v] = now;
      post(now + s.instances.stage(v).durationUs, Event::ItemDone, v, 3);
      progress = true;
    }
    return progress;
  }

  bool pumpBlocks(double now) {
    // Placed all it could last time, and neither a kernel nor a free SM came
    // since: nothing to do.
    if (!blocksChanged || waiting.empty())
      return false;
    blocksChanged = false;
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
    for (const Urgency &u : waiting) {
      Resident *r = &resident[residentSlot[u.instance]];
      if (hopeless(r->use))
        continue;
      // SMs only fill up during one pump: the search for this kernel's next
      // block starts where the last one fitted.
      uint32_t cursor = 0;
      uint32_t batch = kNone;
      while (r->pending) {
        uint32_t sm = findSM(r->use, cursor);
        if (sm == kNone) {
          if (full.size() < 4)
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
        const uint32_t k =
            std::min(r->pending, idle ? r->perEmptySM : fitting(f, r->use));
        take(freeSM[sm], r->use, k);
        r->pending -= k;
        drained |= r->pending == 0;
        r->running += k;
        if (out.start[r->instance] < 0)
          out.start[r->instance] = now;
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
      if (batch != kNone)
        post(now + r->blockUs, Event::BlockDone, r->instance, batch);
    }
    if (drained)
      waiting.erase(std::remove_if(waiting.begin(), waiting.end(),
                                   [&](const Urgency &u) {
                                     return resident[residentSlot[u.instance]].pending == 0;
                                   }),
                    waiting.end());
    return progress;
  }

  uint32_t findSM(const DeviceProfile::BlockUse &use, uint32_t &cursor) const {
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
    const uint32_t slot = residentSlot[v];
    Resident &r = resident[slot];
    for (const SMRun &run : batches[batch]) {
      for (uint32_t sm = run.first; sm < run.first + run.count; ++sm)
        give(freeSM[sm], r.use, run.blocks);
      r.running -= run.count * run.blocks;
    }
    batches[batch].clear();
    freeBatches.push_back(batch);
    blocksChanged = true;
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
      unsigned e = static_cast<unsigned>(stage.direction);
      engineBusy[e] = 0;
    } else if (stage.kind == StageKind::Host) {
      hostBusy = 0;
    }
    finish(v, now);
  }

  void finish(uint32_t v, double now) {
    out.end[v] = now;
    if (lowering == Lowering::Streams) {
      uint32_t stream = s.streamOf(v);
      streamBusy[stream] = 0;
      streamFreeAt[stream] = now + p.streamGapUs;
      markQueue(queueOf(stream));
    } else {
      nodeDone(v, now);
    }
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
        blocksChanged = true;
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
  ReplayTrace out;

  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  uint64_t seq = 0;

  // The host thread.
  size_t hostNext = 0;   ///< the op it is at
  double hostAt = 0;     ///< when that op started
  double hostDone = 0;   ///< when its own work ends (infinity: blocked or done)
  Block hostBlock = Block::None;
  double blockedSince = 0;
  uint32_t pendingLaunches = 0; ///< delivered to the device, not yet started
  std::vector<uint32_t> boundRecord; ///< per op: the record a wait or sync binds to
  std::vector<double> recordDoneAt;  ///< per op: when a record completed (-1: not yet)

  // Streams.
  std::vector<std::deque<uint32_t>> queues; ///< op indices per hardware queue
  std::vector<double> queueWake;
  std::vector<uint8_t> queueDirty;
  /// Waits held back by records not yet reached: per record op, the first
  /// queue waiting (waitHead), then the next (waitNext, per queue); stuckOn
  /// keeps a queue from being listed twice.
  std::vector<uint32_t> waitHead, waitNext, stuckOn;
  std::vector<uint8_t> streamBusy;
  std::vector<double> streamFreeAt;

  // Graph.
  CSR successors;
  std::vector<uint32_t> remaining;
  std::deque<uint32_t> readyNodes;
  /// Nodes whose last dependency ended, by the time they become ready.
  std::priority_queue<std::pair<double, uint32_t>,
                      std::vector<std::pair<double, uint32_t>>, std::greater<>>
      pendingReady;
  static constexpr uint8_t kLaunched = 1, kStarted = 2;
  std::vector<uint32_t> segmentNodes, segmentDynamic, segmentLeft;
  std::vector<std::vector<uint32_t>> segmentRoots, segmentRecords;
  std::vector<uint8_t> segmentState;
  std::vector<double> segmentDoneAt;
  uint32_t nextSegment = 0, lastLaunched = kNone;

  // Device.
  const DeviceProfile::BlockUse capacity;      ///< one SM's, all free
  std::vector<DeviceProfile::BlockUse> freeSM; ///< what each SM has free
  /// BlockDone events' lists of SM runs, and the free ones among them.
  /// SMs first .. first + count - 1, each with `blocks` of one kernel's.
  struct SMRun {
    uint32_t first, count, blocks;
  };
  std::vector<std::vector<SMRun>> batches;
  std::vector<uint32_t> freeBatches;
  std::vector<Resident> resident;
  /// Each resident instance's place in `resident`.
  std::vector<uint32_t> residentSlot;
  /// The resident kernels with blocks not yet placed, in urgency order.
  struct Urgency {
    int priority;
    uint32_t instance; ///< also the launch order
    bool operator<(const Urgency &o) const {
      return priority != o.priority ? priority < o.priority : instance < o.instance;
    }
  };
  std::vector<Urgency> waiting;
  std::vector<Shape> shapes; ///< per stage
  /// Whether pumpBlocks could place a block it could not before.
  bool blocksChanged = false;
  /// Whether a launch waits for a resident-kernel slot.
  bool blockedOnResidency = false;
  std::deque<uint32_t> copyQueues[3];
  uint8_t engineBusy[3] = {0, 0, 0};
  SharedDirection shared[3];
  std::deque<uint32_t> hostQueue;
  uint8_t hostBusy = 0;
};

} // namespace

ReplayTrace pipec::sim::simulate(const Schedule &schedule, Lowering lowering,
                                 const DeviceProfile &profile,
                                 const ModelOptions &options) {
  return Model(schedule, lowering, profile, options).run();
}
