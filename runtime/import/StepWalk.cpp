//===- StepWalk.cpp - The host's timeline, walked call by call ------------===//
//
// The ops fill the launch slots in issue order (the same order but where
// two threads' calls overlap). Each call is a launch (dispatch: the host's
// time since its previous call), a call that took time of its own, a sync,
// or nothing the step needs; a long stretch without calls is host work.
//
//===----------------------------------------------------------------------===//

#include "runtime/import/StepBuild.h"

#include <algorithm>

using namespace pipec;
using namespace pipec::importer;
using namespace pipec::importer::step;

namespace {

/// A copy that touches pageable host memory and whose call was still
/// running when its DMA began: the host stages pageable memory chunk by
/// chunk through a pinned buffer and returns once the last chunk is
/// staged, a little before the DMA ends (cudaMemcpyAsync too: a pinned
/// copy is asynchronous). The call's time from the copy's start on is the
/// host waiting for the copy, not dispatch: counted as dispatch, the model
/// would run the copy after it, a second time.
bool blockingCopy(const GpuOp &op, llvm::StringRef name) {
  if (op.kind != OpKind::Memcpy || op.launchTs < 0)
    return false;
  // (A call that returned long before the DMA ended did not wait for it:
  // the last chunk is staged a chunk's time before the end, not more.)
  const double chunk = std::max(kUnexplainedIdleUs, 0.05 * op.dur);
  return name.contains("Pageable") && op.launchTs + op.launchDur >= op.ts &&
         op.launchTs + op.launchDur >= op.ts + op.dur - chunk;
}

/// What the host waited for inside a launch call: the launches the driver
/// held not yet started, at any time (those whose call had returned less
/// those that had begun, over every op of the device whose call is known).
class LaunchQueue {
public:
  explicit LaunchQueue(const Trace &trace) {
    for (const GpuOp &op : trace.ops) {
      if (op.launchTs >= 0) {
        returns_.push_back(op.launchTs + op.launchDur);
        starts_.push_back(op.ts);
      }
    }
    std::sort(returns_.begin(), returns_.end());
    std::sort(starts_.begin(), starts_.end());
  }
  int64_t pendingAt(double t) const {
    auto returned = std::upper_bound(returns_.begin(), returns_.end(), t) - returns_.begin();
    auto begun = std::upper_bound(starts_.begin(), starts_.end(), t) - starts_.begin();
    return std::max<int64_t>(0, returned - begun);
  }

private:
  std::vector<double> returns_, starts_;
};

class HostWalk {
public:
  explicit HostWalk(Builder &b) : b(b), out(b.out), queue(b.trace) {
    measureLaunchCall();
    // A step's host time is its own from the step's start: the host work
    // before its first call is a stage already (gatherHostCalls), and every
    // call from the first on is the step's (a sync or an allocation before
    // its first launch too); the whole trace's host starts at its first
    // launch.
    if (std::isfinite(b.from) && !b.items.empty()) {
      launched = true;
      previousEnd = lastCallEnd = std::max(b.from, b.items.front().ts);
    }
  }
  void run();

private:
  void launch(const HostItem &item, double end);
  void timedCall(const HostItem &item, double end);
  void sync(const HostItem &item, double end);
  void measureLaunchCall();
  /// The queue filled when a launch found as many launches waiting as ever
  /// (within a few: ops begin while the count is taken), hundreds of them,
  /// and its call took longer than launches do.
  bool queueFull(const HostItem &item) const {
    constexpr int64_t kLeastQueueDepth = 256;
    return mostPending >= kLeastQueueDepth && item.dur > 2 * b.launchCallUs + 5 &&
           queue.pendingAt(item.ts) + 8 >= mostPending;
  }
  /// A blocking copy that began just as some op ended, after its call was
  /// made, waited for the GPU; otherwise its call staged the data first.
  bool waitedForGpu(const HostItem &item, const GpuOp &op) const {
    auto it = std::upper_bound(b.ends.begin(), b.ends.end(), op.ts + kClockSlackUs);
    if (it == b.ends.begin())
      return false;
    const double ended = *(it - 1);
    return ended >= item.ts && op.ts - ended <= kGpuWaitSlackUs;
  }
  /// The host's time since its previous call, before a call at `at`: host
  /// work, a stage of its own when long enough (0 left); else what is left
  /// for the call's own stage to hold.
  double workBefore(double at) {
    const double before = std::max(0.0, at - previousEnd);
    if (before < kMinHostWorkUs)
      return before;
    b.addHostWork(previousEnd, before);
    return 0.0;
  }
  /// Whether every op issued so far had ended by `by` (from the origin):
  /// one comparison, not a walk of the streams (a step may free memory
  /// after every launch).
  bool allEndedBy(double by) const { return !(b.latestEnd > by + kClockSlackUs); }

  Builder &b;
  ImportedStep &out;
  LaunchQueue queue;
  int64_t mostPending = 0;
  size_t nextOp = 0;
  bool launched = false; // (the whole trace's host time starts at its first launch)
  double previousEnd = -INFINITY, lastCallEnd = -INFINITY;
  bool queueFilled = false;  // a launch blocked on the full queue
  int64_t graphLaunches = 0; // the step's graph launches so far
};

// A launch call's own cost: the step's median of the calls that found the
// queue short of full (a blocked call's is that, the rest waiting).
void HostWalk::measureLaunchCall() {
  std::vector<double> durations, unblocked;
  for (const HostItem &item : b.items)
    if (item.op >= 0)
      mostPending = std::max(mostPending, queue.pendingAt(item.ts));
  for (const HostItem &item : b.items)
    if (item.op >= 0) {
      durations.push_back(item.dur);
      if (queue.pendingAt(item.ts) + 8 < mostPending)
        unblocked.push_back(item.dur);
    }
  if (unblocked.size() >= 8)
    durations = std::move(unblocked);
  if (!durations.empty()) {
    auto mid = durations.begin() + durations.size() / 2;
    std::nth_element(durations.begin(), mid, durations.end());
    b.launchCallUs = *mid;
  }
}

void HostWalk::run() {
  for (const HostItem &item : b.items) {
    const double end = item.ts + item.dur;
    if (launched && item.ts - lastCallEnd >= kHostWorkUs) {
      // The host's time since what was last accounted, short calls in it.
      b.addHostWork(previousEnd, item.ts - previousEnd);
      previousEnd = item.ts;
    }
    const bool syncCall = item.kind == HostCall::StreamSync ||
                          item.kind == HostCall::EventSync ||
                          item.kind == HostCall::DeviceSync || item.kind == HostCall::Poll ||
                          (item.kind == HostCall::Free && allEndedBy(end - b.origin));
    if (item.op >= 0 && nextOp < b.ops.size())
      launch(item, end);
    else if (launched && item.op < 0 && !syncCall && item.dur >= kMinHostWorkUs &&
             item.kind != HostCall::StreamWait)
      timedCall(item, end);
    else if (launched && syncCall)
      sync(item, end);
    lastCallEnd = std::max(lastCallEnd, end);
  }
  // The host's time after its last call, to the step's end: host work too
  // (what the host did then is the step's, as users time it).
  if (std::isfinite(b.to) && std::isfinite(b.from) && launched &&
      b.to - previousEnd >= kMinHostWorkUs)
    b.addHostWork(previousEnd, b.to - previousEnd, ImportedStage::HostWorkAt::AfterLastCall);
  if (queueFilled)
    out.device.launchQueueDepth = uint32_t(std::min<int64_t>(mostPending, UINT32_MAX));
  // Ops whose call is a duplicate, or missing from the walk: at the end.
  while (nextOp < b.ops.size())
    b.addOp(*b.ops[nextOp++], false);
}

// A launch; a graph launch launches its ops at once: the call's op and
// those after it in issue order with its correlation.
void HostWalk::launch(const HostItem &item, double end) {
  const std::vector<const GpuOp *> &ops = b.ops;
  const bool graph = b.graphLaunched(*ops[nextOp]) || item.kind == HostCall::GraphLaunch;
  double firstHostUs = 0;
  for (uint32_t k = 0; nextOp < ops.size() &&
                       (k == 0 || (graph && ops[nextOp]->correlation >= 0 &&
                                   ops[nextOp]->correlation == ops[nextOp - 1]->correlation));
       ++k) {
    const GpuOp &op = *ops[nextOp++];
    uint32_t v = b.addOp(op, false);
    ImportedStage &st = out.stages[v];
    st.graphLaunched = graph;
    if (graph)
      st.graphLaunch = graphLaunches;
    if (k > 0) { // the same call: no dispatch of its own
      st.hostUs = firstHostUs;
      continue;
    }
    // A synchronous copy call (cudaMemcpy, not Async) holds the host until
    // its copy is done, but for one from pageable memory it returns once
    // the last chunk is staged, a little before the DMA ends: it blocked if
    // it returned after its copy began (a copy between device buffers does
    // not hold the host).
    st.blocking =
        !graph && (blockingCopy(op, b.trace.names[op.name]) ||
                   (item.kind == HostCall::BlockingCopy && op.kind != OpKind::Kernel &&
                    !(op.kind == OpKind::Memcpy && op.direction == CopyDirection::D2D) &&
                    op.launchTs + op.launchDur >= op.ts));
    // A blocking copy's dispatch lasts until the copy began: the call's
    // time before it (staging pageable memory) is the host's; unless the
    // copy waited for the GPU, and so did the host (a sync). A launch that
    // waited for room in the driver's queue: its wait is the model's
    // launch_queue_depth at work, not the host's.
    double returned = end;
    if (st.blocking) {
      st.waitedForGpu = waitedForGpu(item, op);
      returned = st.waitedForGpu ? item.ts + std::min(item.dur, b.launchCallUs)
                                 : std::max(item.ts, op.ts);
    } else if (!graph && queueFull(item)) {
      st.queueFull = true;
      queueFilled = true;
      returned = item.ts + b.launchCallUs;
    }
    st.dispatchUs = launched ? std::max(0.0, returned - previousEnd) : 0;
    if (st.blocking)
      st.hostUs = item.ts - b.origin;
    firstHostUs = st.hostUs;
    if (st.blocking) { // (adding a stage may move `st`)
      uint32_t sync = b.addCpu(ImportedStage::Kind::Sync, HostCall::BlockingCopy, item.ts, 0);
      out.stages[sync].deps.push_back(v);
      out.stages[sync].returnUs = end - b.origin;
      ++out.hostSyncs;
    }
  }
  graphLaunches += graph;
  launched = true;
  previousEnd = std::max(previousEnd, end);
}

// A call that took time of its own (allocation, stream creation, a free
// that did not wait): the host's, where it happened.
void HostWalk::timedCall(const HostItem &item, double end) {
  const double shortWork = workBefore(item.ts);
  uint32_t call = b.addCpu(ImportedStage::Kind::Call, item.kind, item.ts, item.dur + shortWork,
                           identifier(b.trace.callNames[item.name], "call_", "_call"));
  out.stages[call].callName = item.name;
  previousEnd = std::max(previousEnd, end);
}

// The host's time before a sync since its previous call is host work, not
// dispatch: it runs before the sync (a little of it is the sync stage's own
// time, after it).
void HostWalk::sync(const HostItem &item, double end) {
  const double shortWork = workBefore(item.ts);
  uint32_t sync = b.addCpu(ImportedStage::Kind::Sync, item.kind, item.ts, shortWork);
  out.stages[sync].returnUs = end - b.origin;
  b.syncs.push_back({sync, item.correlation, end});
  ++out.hostSyncs;
  previousEnd = std::max(previousEnd, end);
}

} // namespace

void step::walkHost(Builder &b) { HostWalk(b).run(); }

// The device's gap between back-to-back ops of a stream, as recorded: an op
// whose launch had returned before the one ahead of it ended began this
// long after it (waits for other streams left out: gaps of kGpuWaitSlackUs
// and more).
void step::measureStreamGap(Builder &b) {
  ImportedStep &out = b.out;
  double sum = 0;
  uint64_t gaps = 0;
  for (const auto &[stream, list] : b.onStream)
    for (size_t k = 1; k < list.size(); ++k) {
      const ImportedStage &x = out.stages[list[k - 1]], &y = out.stages[list[k]];
      const GpuOp &op = b.trace.ops[y.op];
      if (y.backlog || op.launchTs < 0 || op.launchTs + op.launchDur > x.endUs + b.origin)
        continue;
      const double gap = y.startUs - x.endUs;
      if (gap >= 0 && gap < kGpuWaitSlackUs)
        sum += gap, ++gaps;
    }
  if (gaps >= kLeastGapSamples)
    out.device.streamGapUs = sum / double(gaps);
}
