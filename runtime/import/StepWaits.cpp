//===- StepWaits.cpp - The waits the trace does not hold ------------------===//
//
// An op that began well after everything it is known to wait for (its
// stream's previous op, the ops its recorded orderings name, its launch
// call's return; a backlog op, the step's start) waited for something
// else. Where another op ended just before it began, it waited for that one
// (an ordering the trace does not record: a dependency); otherwise for what
// the trace does not hold (a host node, an external event, another
// process): the wait is kept, as a stage of its time between the op and
// what it follows. Both are said: a run keeps the wait, a what-if moves it
// with what it follows.
//
//===----------------------------------------------------------------------===//

#include "runtime/import/StepBuild.h"

#include "compiler/schedule/Redundancy.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <array>
#include <map>

using namespace pipec;
using namespace pipec::importer;
using namespace pipec::importer::step;
using llvm::formatv;

namespace {

struct Idle {
  uint32_t at;
  double us;
};

class WaitFinder {
public:
  explicit WaitFinder(Builder &b) : b(b), out(b.out), profile(profileFor(b.out.device)) {
    for (uint32_t i = 0; i < out.stages.size(); ++i)
      if (!out.stages[i].onHost())
        byEnd.push_back({out.stages[i].endUs, i});
    std::sort(byEnd.begin(), byEnd.end());
    for (const ImportedStage &st : out.stages)
      if (!st.onHost())
        byStart.push_back({double(st.startUs), double(st.endUs)});
    std::sort(byStart.begin(), byStart.end());
    for (size_t k = 1; k < byStart.size(); ++k)
      byStart[k].second = std::max(byStart[k].second, byStart[k - 1].second);
    // The same per copy direction: when each copy engine was busy.
    for (const ImportedStage &st : out.stages)
      if (!st.onHost() && !st.idle && b.trace.ops[st.op].kind == OpKind::Memcpy)
        copiesByStart[size_t(b.trace.ops[st.op].direction)].push_back(
            {double(st.startUs), double(st.endUs)});
    for (auto &list : copiesByStart) {
      std::sort(list.begin(), list.end());
      for (size_t k = 1; k < list.size(); ++k)
        list[k].second = std::max(list[k].second, list[k - 1].second);
    }
  }
  /// Each op's wait, a dependency where an op explains it, else an Idle.
  void run() {
    for (uint32_t i = 0; i < out.stages.size(); ++i)
      if (!out.stages[i].onHost())
        examine(i);
  }
  std::vector<Idle> idles;
  /// (op, op whose wait it shares): it follows the other's gpu_idle stage.
  std::vector<std::pair<uint32_t, uint32_t>> sharedWaits;
  uint64_t inferredWaits = 0;

private:
  void examine(uint32_t i);
  /// Until when the GPU ran something before `t` (from the origin): the
  /// latest end among the ops that began before it.
  double busyUntil(double t) const { return busyUntilIn(byStart, t); }
  /// Until when a copy of `direction` ran before `t` (its engine busy).
  double engineBusyUntil(CopyDirection direction, double t) const {
    return busyUntilIn(copiesByStart[size_t(direction)], t);
  }
  static double busyUntilIn(const std::vector<std::pair<double, double>> &list, double t) {
    auto it = std::lower_bound(list.begin(), list.end(),
                               std::make_pair(t - kClockSlackUs, -double(INFINITY)));
    return it == list.begin() ? 0.0 : std::min(t, (it - 1)->second);
  }
  /// What share of the SMs the kernels running at `t` asked for (worked out
  /// the first time it is asked: most steps never need it).
  double askedAt(double t) {
    if (!demand)
      demand.emplace(out.stages, b.trace.ops, profile);
    return demand->at(t);
  }

  Builder &b;
  ImportedStep &out;
  const DeviceProfile profile;
  std::optional<SmDemand> demand;
  std::vector<std::pair<double, uint32_t>> byEnd; ///< (end, stage), device ops
  std::map<double, uint32_t> idleStarts;          ///< ops with a wait of their own, by start
  std::vector<std::pair<double, double>> byStart; ///< (start, latest end so far)
  /// The same for the copies of each direction (CopyDirection's order).
  std::array<std::vector<std::pair<double, double>>, 4> copiesByStart;
};

void WaitFinder::examine(uint32_t i) {
  ImportedStage &st = out.stages[i];
  const GpuOp &op = b.trace.ops[st.op];
  const double origin = b.origin;
  if (op.ts <= origin)
    return;
  double explained = origin;
  if (!st.backlog && op.launchTs >= 0)
    explained = std::max(explained, op.launchTs + op.launchDur);
  for (uint32_t d : st.deps)
    if (!out.stages[d].onHost())
      explained = std::max(explained, out.stages[d].endUs + origin);
  // Waited at least a few microseconds past what it is known to follow
  // (less is the device's own start-up): for what?
  const double waited = op.ts - explained;
  // An op whose launch the trace does not hold (a sampled trace, a graph's
  // node) and that began as an op issued before it ended, later than all
  // it is known to follow, may have waited for that op however little
  // past the rest: its launch time says nothing (below: where it had room).
  const bool launchUnknown = st.graphLaunched || op.launchTs < 0;
  if (waited < kGpuWaitSlackUs && !launchUnknown)
    return;
  // The op issued before it that ended last before it began (among the
  // last few to end: a bounded look, whatever the input). The op began as
  // it ended, or a little after it with the GPU idle in between (the wait's
  // own latency).
  const double at = op.ts - origin;
  auto it = std::upper_bound(byEnd.begin(), byEnd.end(),
                             std::make_pair(at + kClockSlackUs, UINT32_MAX));
  for (int look = 0; look < 64 && it != byEnd.begin() && (it - 1)->second >= i; ++look)
    --it;
  int64_t ended = -1;
  bool asEnded = false, idleBefore = false;
  if (it != byEnd.begin() && (it - 1)->second < i) {
    const double end = (it - 1)->first;
    asEnded = at - end <= kGpuWaitSlackUs;
    idleBefore =
        !asEnded && at - end < kUnexplainedIdleUs && busyUntil(at) <= end + kClockSlackUs;
    if (asEnded || idleBefore)
      ended = int64_t((it - 1)->second);
  }
  // It waited for one of the ops that ended just before it began: all of
  // them (a safe superset, each ended before it began), the latest alone
  // when it began a while after the GPU went idle.
  auto waitedForEnded = [&] {
    st.deps.push_back(uint32_t(ended));
    if (asEnded)
      for (auto c = it - 1; c != byEnd.begin() && it - c < 64;) {
        --c;
        if (c->first < at - kGpuWaitSlackUs)
          break;
        if (c->second < i)
          st.deps.push_back(c->second);
      }
    ++inferredWaits;
  };
  // Whether, at `t`, its blocks fit beside those of the kernels running (an
  // op that is not a kernel needs no room on the SMs; a fill's one small
  // block always fits).
  const auto roomAt = [&](double t) {
    return op.kind != OpKind::Kernel || askedAt(t) + smShare(op, profile) <= 1;
  };
  // Whether, at `t`, one block of it fit beside the kernels running.
  const auto blockRoomAt = [&](double t) {
    if (op.kind != OpKind::Kernel)
      return true;
    GpuOp block = op;
    block.blocks = 1;
    return askedAt(t) + smShare(block, profile) <= 1;
  };
  // Whether it had room as the op that ended before it ended: a kernel (or
  // a fill) beside the kernels still running; a copy, its direction's copy
  // engine, which the op that ended held if it was a copy of that
  // direction (the copy waited for the engine, which the model has: not
  // an ordering).
  const auto roomAsEnded = [&] {
    if (op.kind != OpKind::Memcpy)
      return roomAt(out.stages[ended].endUs - kClockSlackUs);
    const ImportedStage &before = out.stages[ended];
    if (before.onHost() || before.idle)
      return true;
    const GpuOp &held = b.trace.ops[before.op];
    return held.kind != OpKind::Memcpy || held.direction != op.direction;
  };
  if (!st.graphLaunched && op.launchTs >= 0) {
    // A launched op that found the GPU running others may have waited for
    // room on the SMs (or a copy engine), which the model has. It waited
    // for the op ahead of it if it began a while after the GPU went idle,
    // or as that op ended while it had room (beside what was running, or
    // on its copy engine): a copy that followed another stream's kernel
    // (an NCCL SendRecv it was ordered behind) waited for that kernel. A
    // copy whose engine sat idle a while before it began did not wait for
    // room, whatever else ran: for the op that ended as it began, or for
    // what the trace does not hold (below).
    // So did a kernel (or a fill) that had room beside what ran just before
    // it began: a block of it fit then (a kernel starts with its first
    // block, the rest as room frees), so it waited for something else.
    const bool engineIdle = op.kind == OpKind::Memcpy &&
                            at - engineBusyUntil(op.direction, at) >= kUnexplainedIdleUs;
    const bool hadRoom = op.kind != OpKind::Memcpy && blockRoomAt(at - kClockSlackUs);
    if (engineIdle || hadRoom) {
      if (ended >= 0 && (asEnded || idleBefore)) {
        waitedForEnded();
        return;
      }
    } else if (at - busyUntil(at) < kUnexplainedIdleUs) {
      if (ended >= 0 && (idleBefore || roomAsEnded()))
        waitedForEnded();
      return;
    }
  } else {
    // A graph's node, or an op whose launch the trace lacks: it waited for
    // the op that ended as it began, unless it had no room (a kernel beside
    // what ran until then, a copy on its engine); or, on a GPU full of
    // others' blocks, for room, which the model has. Within the device's
    // start-up of what it is known to follow, only an op that ended later
    // than all of that explains it.
    if (waited < kGpuWaitSlackUs &&
        (ended < 0 || !asEnded ||
         out.stages[ended].endUs + origin <= explained + kClockSlackUs))
      return;
    if (ended >= 0 && (idleBefore || roomAsEnded())) {
      waitedForEnded();
      return;
    }
    if (at - busyUntil(at) < kClockSlackUs && !roomAt(at - kClockSlackUs))
      return;
  }
  if (waited < kUnexplainedIdleUs)
    return;
  // It began as another op began that had waited for what the trace does
  // not show (within a few microseconds after it): both waited for that
  // (an NCCL kernel and the kernel that needs its peer's data, released
  // by one event of another process): it follows the other's wait.
  auto began = idleStarts.lower_bound(at - kGpuWaitSlackUs);
  if (began != idleStarts.end() && began->first <= at + kClockSlackUs) {
    sharedWaits.push_back({i, began->second});
    ++inferredWaits;
    return;
  }
  idles.push_back({i, waited});
  idleStarts.emplace(at, i);
}

/// Each wait kept as a gpu_idle stage of its time, before its op on its
/// stream: it follows what the op followed, and the op follows it.
void insertIdle(Builder &b, const std::vector<Idle> &idles,
                const std::vector<std::pair<uint32_t, uint32_t>> &sharedWaits) {
  ImportedStep &out = b.out;
  std::vector<ImportedStage> old = std::move(out.stages);
  out.stages.clear();
  out.stages.reserve(old.size() + idles.size());
  std::vector<uint32_t> newIndex(old.size());
  std::string longestName;
  double idleUs = 0, longestUs = 0, longestAt = 0;
  size_t k = 0;
  for (uint32_t i = 0; i < old.size(); ++i) {
    if (k < idles.size() && idles[k].at == i) {
      const ImportedStage &before = old[i];
      ImportedStage idle;
      idle.idle = true;
      idle.op = before.op;
      idle.backlog = before.backlog;
      idle.graphLaunched = before.graphLaunched;
      // Between two nodes of one graph launch: a node of it too.
      if (i > 0 && old[i - 1].graphLaunch >= 0 && old[i - 1].graphLaunch == before.graphLaunch)
        idle.graphLaunch = before.graphLaunch;
      idle.hostUs = before.hostUs;
      idle.durUs = idles[k].us;
      idle.endUs = b.trace.ops[before.op].ts - b.origin;
      idle.startUs = idle.endUs - idle.durUs;
      idle.name = b.uniqueName("gpu_idle");
      idleUs += idle.durUs;
      if (idle.durUs > longestUs)
        longestUs = idle.durUs, longestName = before.name, longestAt = idle.endUs;
      out.stages.push_back(std::move(idle));
      ++k;
    }
    newIndex[i] = uint32_t(out.stages.size());
    out.stages.push_back(std::move(old[i]));
  }
  for (ImportedStage &st : out.stages)
    for (uint32_t &d : st.deps)
      d = newIndex[d];
  for (uint32_t j = 0; j + 1 < out.stages.size(); ++j)
    if (out.stages[j].idle) {
      out.stages[j].deps = std::move(out.stages[j + 1].deps);
      out.stages[j + 1].deps = {j};
    }
  // An op that shared another's wait follows that wait (the stage just
  // before the other op).
  for (auto [op, other] : sharedWaits)
    out.stages[newIndex[op]].deps.push_back(newIndex[other] - 1);
  out.notes.push_back(formatv(
      "ops waited {0} ms in {1} gap(s) for what the trace does not show (the longest "
      "{2} ms, before '{3}', {4} ms into the step): each wait is kept as a gpu_idle "
      "stage of its time after what the op follows, so that a run keeps it",
      formatv("{0:f2}", idleUs / 1000), idles.size(), formatv("{0:f2}", longestUs / 1000),
      longestName, formatv("{0:f2}", longestAt / 1000)));
}

} // namespace

void step::inferWaits(Builder &b) {
  WaitFinder finder(b);
  finder.run();
  if (!finder.idles.empty())
    insertIdle(b, finder.idles, finder.sharedWaits);
  b.forgetNames();
  if (finder.inferredWaits)
    b.out.notes.push_back(formatv(
        "{0} op(s) began, {1} us or more after everything the trace says they follow, as an "
        "op of another stream ended (or soon after, with the GPU idle in between) and not "
        "for want of room on the SMs: each is taken to have waited for that op (an ordering "
        "the trace does not record)",
        finder.inferredWaits, unsigned(kGpuWaitSlackUs)));
}

void step::finishStep(Builder &b) {
  ImportedStep &out = b.out;
  // Only the dependencies the others do not imply: the file states each
  // ordering once (and `pipec check` has no redundant one to warn about).
  CSR graph;
  for (ImportedStage &st : out.stages) {
    std::sort(st.deps.begin(), st.deps.end());
    st.deps.erase(std::unique(st.deps.begin(), st.deps.end()), st.deps.end());
    graph.targets.insert(graph.targets.end(), st.deps.begin(), st.deps.end());
    graph.begin.push_back(graph.targets.size());
  }
  DeclaredRedundancy redundant = findRedundantDependencies(graph);
  if (redundant.complete) {
    size_t edge = 0;
    for (ImportedStage &st : out.stages) {
      std::vector<uint32_t> kept;
      for (uint32_t u : st.deps)
        if (redundant.kept[edge++])
          kept.push_back(u);
      st.deps = std::move(kept);
    }
  }
  // Pageable copies a file can write as such: a blocking copy of pageable
  // memory whose sync (the stage after it) waited for it alone and holds no
  // host time past its end (the call returned once staged, before the DMA
  // ended): `[pageable]` says all of that (docs/import.md).
  for (size_t i = 0; i + 1 < out.stages.size(); ++i) {
    ImportedStage &copy = out.stages[i], &sync = out.stages[i + 1];
    if (copy.onHost() || copy.idle || !copy.blocking || copy.graphLaunch >= 0 ||
        sync.kind != ImportedStage::Kind::Sync || sync.call != HostCall::BlockingCopy ||
        sync.deps.size() != 1 || sync.deps.front() != i)
      continue;
    const GpuOp &op = b.trace.ops[copy.op];
    if (op.kind != OpKind::Memcpy ||
        (op.direction != CopyDirection::H2D && op.direction != CopyDirection::D2H) ||
        !llvm::StringRef(out.names[op.name]).contains("Pageable"))
      continue;
    if (sync.returnUs <= sync.waitedEndUs + kClockSlackUs && sync.cpuUs < 0.0005) {
      copy.pageable = true;
      sync.waitOfCopy = true;
    }
  }
  // The step's ops, taken from the trace in its order (the others left).
  Trace &trace = b.trace;
  std::vector<uint32_t> kept(trace.ops.size(), UINT32_MAX);
  for (const ImportedStage &st : out.stages)
    if (!st.onHost())
      kept[st.op] = 0;
  uint32_t next = 0;
  for (uint32_t i = 0; i < trace.ops.size(); ++i)
    if (kept[i] == 0) {
      kept[i] = next;
      trace.ops[next++] = trace.ops[i];
    }
  for (ImportedStage &st : out.stages)
    if (!st.onHost())
      st.op = kept[st.op];
  trace.ops.resize(next);
  out.ops = std::move(trace.ops);
}
