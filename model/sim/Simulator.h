//===- Simulator.h - The device model's state and its event loop ---------===//
//
// The device and host model (model/DeviceModel.h says what it models) as
// one event loop over components, each in a file of its own that holds
// what the component does, how it writes its state down for the periodic
// skip-ahead (a snapshot, relative to a block of iterations) and how it
// moves that state ahead by whole blocks:
//   Simulator.cpp      the loop: events, the pump, a stage's work reaching
//                      its resource, and the end of each piece of work;
//   HostThread.cpp     each device's host thread and its calls;
//   Streams.cpp        hardware queues and the streams mapped onto them;
//   Graph.cpp          the graph lowering: segments and ready nodes;
//   SMs.cpp            resident kernels and their blocks on the SMs, and
//                      the collectives' rendezvous;
//   CopyEngines.cpp    the copy engines and the host-function executor;
//   Extrapolation.cpp  checkpoints, the comparison and the jump ahead.
// Private to model/: the rest of pipec calls sim::simulate.
//
// The files are one translation unit (runtime/CMakeLists.txt compiles them
// as one unity group) and the class has internal linkage: the compiler then
// sees every call of the event loop, most of them made once per event, and
// inlines them as it did when the model was one file (apart, with external
// linkage, it ran 5-15% fewer events per second). Compiled apart, they do
// not link.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_MODEL_SIM_SIMULATOR_H
#define PIPEC_MODEL_SIM_SIMULATOR_H

#include "compiler/support/Overloaded.h"
#include "model/DeviceModel.h"
#include "model/Periodic.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <memory>
#include <queue>

namespace pipec::sim {
namespace { // one translation unit: see above

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

struct Event {
  double time;
  uint64_t seq;
  enum Kind : uint8_t { BlockDone, ItemDone, HostReady, Wake, CopyStep } kind;
  uint32_t a, b;           ///< meaning depends on kind (BlockDone: instance, batch)
  uint32_t generation = 0; ///< BlockDone: stale unless the batch's own

  bool operator>(const Event &o) const { return time != o.time ? time > o.time : seq > o.seq; }
};

/// What a stage's kernel (or fill) asks of the device, the same for every
/// instance: worked out once per stage, not per launch.
struct Shape {
  uint32_t blocks = 1;
  DeviceProfile::BlockUse use{};
  double blockUs = 0;      ///< the kernel's time over its waves
  uint32_t perEmptySM = 0; ///< its blocks an idle SM holds at once
  /// What it asks of the device's shared resources at full occupancy, as
  /// fractions of the device's: memory bandwidth and SM issue throughput
  /// (Resident::speed says how they are split).
  double memory = 0, compute = 0;
  uint32_t fullBlocks = 1; ///< its blocks on the device at full occupancy
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
  /// Its place in the order kernels reached the device (Gpu::arrivals):
  /// the dispatcher serves equal priorities in that order, which through
  /// one hardware queue is the launch order.
  uint64_t arrival = 0;
  uint32_t blocks() const { return pending + running; }
  /// ModelOptions::smsPerKernel: the SMs this kernel has to itself (empty
  /// otherwise: it takes the device's, Gpu::freeSM).
  std::vector<DeviceProfile::BlockUse> ownSM = {};
  /// Its batches on the SMs, not yet done.
  llvm::SmallVector<uint32_t, 2> inFlight = {};
  uint32_t onSMs = 0; ///< its blocks holding SM resources now
  /// Work done per unit of time: 1 alone; below 1 while kernels that run
  /// with it ask more of a shared resource than the device has.
  double speed = 1;
};

/// Times on a grid of picoseconds (1e-6 us), each the double nearest its
/// decimal. A time reached by two paths (a kernel's end plus a stream's
/// gap, a copy's end plus a wait's latency) is then one value, not two
/// that differ in the last bit: a tie between them is a tie in every
/// iteration, broken the same way, and a settled replay repeats (the
/// skip-ahead relies on it). Rounded up, but for a thousandth of a step
/// of rounding: no work ends sooner than its time, and a time already on
/// the grid stays as it is (180.3 stays 180.3).
inline double onGrid(double t) { return std::ceil(t * 1e6 - 1e-3) / 1e6; }

/// A component's state written down relative to a block of iterations, for
/// the periodic skip-ahead to compare with the block before's: times less
/// the clock (T), instances less the block's first (I), host ops less its
/// first call (O).
struct Snapshot {
  static constexpr double kInf = 1e300, kNoneMark = -1e300, kPast = -2e300;
  /// The most entries a snapshot may have: a larger state is not compared.
  static constexpr size_t kMax = size_t(1) << 20;

  std::vector<double> &g;
  double T, I, O;

  void put(double x) { g.push_back(x); }
  double time(double t) const { return std::isinf(t) ? kInf : t - T; }
  double inst(uint32_t v) const { return v == kNone ? kNoneMark : double(v) - I; }
  double opAt(uint64_t o) const { return o == kNone ? kNoneMark : double(o) - O; }
};

/// Whole blocks of iterations skipped: every instance dI later, every host
/// op dO later, every time dT later (back on the grid).
struct Shift {
  uint64_t dI, dO;
  double dT;

  void instance(uint32_t &v) const {
    if (v != kNone)
      v = static_cast<uint32_t>(v + dI);
  }
  double later(double t) const { return onGrid(t + dT); }
};

class Simulator {
  struct Gpu;

public:
  Simulator(const Schedule &s, Lowering lowering, const DeviceProfile &profile,
            const ModelOptions &options);

  ReplayTrace run();

private:
  /// Equal priorities: the first to reach the device first, in both
  /// lowerings (through one hardware queue, the launch order). Every
  /// wave of a grid is a wave (T / waves each): the model's cost stays
  /// bounded by the device's size, not the grid's (2^31 - 1 blocks), as
  /// consecutive waves on an SM are one batch where nothing more urgent
  /// waits. A fill runs as one small grid: it takes an SM slot for its time.
  Shape shapeOf(const program::Stage &stage) const;
  /// The share of the device's memory bandwidth moving `bytes` in `us` takes.
  double memoryShare(double bytes, double us) const;

  // --- Events ----------------------------------------------------------------

  void post(double time, Event::Kind kind, uint32_t a = 0, uint32_t b = 0,
            uint32_t generation = 0) {
    events.push({onGrid(time), seq++, kind, a, b, generation});
  }

  void handle(const Event &e, double now);

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

  void startHost();

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
  void beginHostOp(HostThread &h);

  void beginHostOpOffGrid(HostThread &h);

  /// A sync (or a join: `what`) blocked the thread from `from` to `to`.
  void syncSpan(const HostThread &h, double from, double to, uint32_t producer,
                const char *what = "sync");

  /// Op h.next's own work is done at `now`: it takes effect, and the next
  /// one starts.
  void finishHostOp(HostThread &h, double now);

  /// Several threads: those blocked on another's issue or cpu stage look again.
  void wakeThreads(double now);

  /// Every thread's ops whose work is done by `now`, thread by thread (a
  /// thread woken by another's looks again).
  void finishHostOps(double now);

  /// Delivers a launch that waited for room in its device's driver queue,
  /// if one has room now.
  bool deliverOneBlocked(double now);

  /// The launch that waited for room in the driver's queue is taken now.
  void deliverBlocked(HostThread &h, double now);

  /// Record op `record` completed at `now`: a host blocked on it wakes.
  void recordCompleted(uint32_t record, double now);

  void startStreams();

  /// Moves every hardware queue's head along as far as it can go now.
  /// Looks again at queue q at `time` (once per distinct time).
  void wakeQueue(uint32_t q, double time);

  /// A queue is looked at only when something that held its head back may
  /// have changed: an op arrived, its stream finished, a wake-up time came,
  /// the record its wait binds to ran, a resident-kernel slot freed up.
  void markQueue(uint32_t q) { queueDirty[q] = 1; }
  void markAllQueues() { std::fill(queueDirty.begin(), queueDirty.end(), 1); }
  /// Queue q's head waits for record op `record`, not yet reached.
  void waitFor(uint32_t q, uint32_t record);
  void recordReached(uint32_t record);

  bool pumpQueues(double now);

  void startGraph();

  /// Segment g's launch call is done at `now`.
  void segmentLaunched(uint32_t g, double now);

  /// Starts segment g if it was launched and its launch stream's previous
  /// segment has finished.
  void startSegment(uint32_t g, double now);

  void segmentFinished(uint32_t g, double now);

  /// A record op (a host sync's event-record node after its producer): it
  /// completes when the producer ends.
  void graphRecord(uint32_t record, double);

  /// One of node w's conditions holds from `at` on (at >= now): once the
  /// last does, it is ready.
  void release(uint32_t w, double at, double now);

  bool pumpGraph(double now);

  void nodeDone(uint32_t v, double now);

  /// Starts instance v's work; false when a kernel cannot become resident.
  bool dispatch(uint32_t v, double now);

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
  bool advanceShared(unsigned device, unsigned e, double now);

  bool pumpEngines(double now);
  bool pumpEngines(unsigned device, double now);

  bool pumpBlocks(double now);
  bool pumpBlocks(Gpu &gpu, double now);

  /// Whether an SM has nothing on it.
  bool idle(const DeviceProfile::BlockUse &free) const {
    return free.threads == capacity.threads && free.slots == capacity.slots &&
           free.smem == capacity.smem && free.regs == capacity.regs;
  }
  /// SMs with nothing on them.
  uint32_t idleSMs(const std::vector<DeviceProfile::BlockUse> &freeSM) const;
  static uint32_t findSM(const std::vector<DeviceProfile::BlockUse> &freeSM,
                         const DeviceProfile::BlockUse &use, uint32_t &cursor);
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

  /// A part of a collective spanning several devices has a block on an SM
  /// for each of its channels (nccl_channels): it holds them until every
  /// part has arrived, then all run the collective's time together and end
  /// together (NCCL's kernels wait for their peers).
  void arrive(uint32_t v, double now);

  /// A list of (SM, blocks) for one BlockDone event, from a pool.
  uint32_t newBatch();

  /// Batch b of resident r starts its `waves` waves at `now`: its end is posted.
  void startBatch(Resident &r, uint32_t b, uint32_t waves, double now);
  /// Posts batch b's end at r's speed, from its progress at `at`.
  void postBatchEnd(const Resident &r, uint32_t b);
  /// A kernel of `priority` reached `gpu` (`arrival`): the less urgent ones'
  /// batches of several waves end with the wave in flight, their other
  /// blocks pending again (the dispatcher hands SMs out at each block's end).
  void truncateFor(Gpu &gpu, int priority, uint64_t arrival, double now);
  /// The speeds of `gpu`'s resident kernels from what they ask of its shared
  /// resources now; batches whose kernel's speed changed get a new end.
  void shareResources(Gpu &gpu, double now);

  void blockDone(uint32_t v, uint32_t batch, double now);

  void itemDone(uint32_t v, double now);

  void finish(uint32_t v, double now);

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

  void findPeriod();

  uint64_t blockStart(uint32_t b) const { return uint64_t(b) * period.instances; }

  void maybeCheckpoint();

  void stopExtrapolating();

  /// The most signature entries compared in all before the model gives up
  /// on a schedule that never settles.
  static constexpr uint64_t kCompareBudget = uint64_t(1) << 26;

  void checkpoint(uint32_t b);

  /// Whether the block just ended set what the one before it set, one
  /// block (`every` microseconds) later.
  bool repeatsLastBlock(double every) const;

  static bool sameState(const std::vector<double> &a, const std::vector<double> &b, double at);

  /// The state relative to block b's start; false when it is too large.
  bool signature(std::vector<double> &g, uint32_t b);

  /// Runs `blocks` blocks ahead, each `every` later than the one before,
  /// from the last block's record; false (nothing changed) when a shifted
  /// instance would fall past the end.
  bool shiftAhead(uint32_t blocks, double every);

  // Each component's part of a snapshot and of a jump ahead (in its own
  // file); false where its state is too large to write down.
  void snapshotHost(Snapshot &g) const;
  void shiftHost(const Shift &d);
  bool snapshotStreams(Snapshot &g) const;
  void shiftStreams(const Shift &d);
  bool snapshotGraph(Snapshot &g) const;
  void shiftGraph(const Shift &d);
  bool snapshotEvents(Snapshot &g) const;
  void shiftEvents(const Shift &d);
  void snapshotSMs(Snapshot &g) const;
  void shiftSMs(const Shift &d);
  void snapshotEngines(Snapshot &g) const;
  void shiftEngines(const Shift &d);

  void pump(double now);

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
  /// Blocks of one kernel placed at one time, each SM of a run holding
  /// `blocks` at once for `waves` consecutive waves: a kernel with the
  /// device to itself runs its waves in one event (closed form), cut back
  /// to the wave in flight when a more urgent kernel arrives (truncate).
  struct Batch {
    std::vector<SMRun> runs;
    uint32_t instance = 0;
    uint32_t waves = 1;
    uint32_t generation = 0; ///< its BlockDone's (a reposted end makes the last stale)
    double work = 0;         ///< its time at speed 1: waves x the kernel's blockUs
    double progress = 0;     ///< of `work`, done by `at`
    double at = 0;
    uint32_t perWave() const {
      uint32_t k = 0;
      for (const SMRun &run : runs)
        k += run.count * run.blocks;
      return k;
    }
  };
  std::vector<Batch> batches;
  std::vector<uint32_t> freeBatches;
  /// Each resident instance's place in its device's `resident`.
  std::unique_ptr<uint32_t[]> residentSlot;
  /// The resident kernels with blocks not yet placed, in urgency order.
  struct Urgency {
    int priority;
    uint64_t arrival;  ///< when it reached the device, in order (Gpu::arrivals)
    uint32_t instance; ///< which
    bool operator<(const Urgency &o) const {
      return priority != o.priority ? priority < o.priority : arrival < o.arrival;
    }
  };
  std::vector<Shape> shapes; ///< per stage
  /// Whether some stage asks for the shared resources (memory bandwidth,
  /// issue throughput): speeds are worked out only then.
  bool contends = false;
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
    /// Batches of several waves in flight: a more urgent arrival cuts them.
    uint32_t multiWave = 0;
    uint64_t arrivals = 0;        ///< kernels that reached it so far
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
    llvm::SmallVector<uint32_t, 8> arrived; ///< the parts whose channels hold their SMs
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
} // namespace pipec::sim

#endif // PIPEC_MODEL_SIM_SIMULATOR_H
