//===- StepOrderings.cpp - What the recorded program ordered --------------===//
//
// Same-stream order, the stream waits (with sync events, each exactly;
// without them, a cut at each cudaStreamWaitEvent call: a safe superset),
// and what each host sync waited for. Keys: an op's correlation (its launch
// time when unknown).
//
//===----------------------------------------------------------------------===//

#include "runtime/import/StepBuild.h"

#include "compiler/support/Fail.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <limits>

using namespace pipec;
using namespace pipec::importer;
using namespace pipec::importer::step;
using llvm::formatv;

namespace {

/// The last kept element of a stream's list (in issue order) whose key is
/// below `at`, or -1; the first whose key is above it, or -1.
template <typename Key>
int64_t lastBelow(const std::vector<uint32_t> &list, double at, Key key) {
  auto pos =
      std::partition_point(list.begin(), list.end(), [&](uint32_t i) { return key(i) < at; });
  return pos == list.begin() ? -1 : int64_t(*(pos - 1));
}
template <typename Key>
int64_t firstAbove(const std::vector<uint32_t> &list, double at, Key key) {
  auto pos =
      std::partition_point(list.begin(), list.end(), [&](uint32_t i) { return key(i) <= at; });
  return pos == list.end() ? -1 : int64_t(*pos);
}

class Orderings {
public:
  explicit Orderings(Builder &b) : b(b), out(b.out) {
    // The stream waits that order the backlog were issued before the step,
    // from its first op's launch on: they hold as the step's own do.
    waitsFrom = b.from;
    for (const GpuOp *op : b.backlog)
      if (op->launchTs >= 0)
        waitsFrom = std::min(waitsFrom, op->launchTs);
  }
  /// Same-stream order: the recorded program relies on it, so it is written.
  void streamOrder() {
    for (const auto &[stream, list] : b.onStream)
      for (size_t k = 1; k < list.size(); ++k)
        depend(list[k], list[k - 1]);
  }
  void streamWaits();
  void hostSyncs();

private:
  double key(uint32_t i, bool byCorrelation) const {
    const GpuOp &op = b.trace.ops[out.stages[i].op];
    if (out.stages[i].backlog && (byCorrelation ? op.correlation < 0 : op.launchTs < 0))
      return -std::numeric_limits<double>::infinity(); // before all of the step
    return byCorrelation ? double(op.correlation) : LaunchTimes::of(op);
  }
  const std::vector<uint32_t> *listOf(int64_t stream) const {
    auto it = b.onStream.find(stream);
    return it == b.onStream.end() ? nullptr : &it->second;
  }
  int64_t lastBefore(int64_t stream, double at, bool byCorr) const {
    const std::vector<uint32_t> *list = listOf(stream);
    return list ? lastBelow(*list, at, [&](uint32_t i) { return key(i, byCorr); }) : -1;
  }
  /// The same, among the ops that had ended by `by` (recorded, from the
  /// origin): an ordering the recording would contradict is none. A
  /// stream's ops end in issue order, so both conditions are prefixes of
  /// its list.
  int64_t lastEndedBefore(int64_t stream, double at, bool byCorr, double by) const {
    const std::vector<uint32_t> *list = listOf(stream);
    if (!list)
      return -1;
    auto issued = std::partition_point(list->begin(), list->end(),
                                       [&](uint32_t i) { return key(i, byCorr) < at; });
    auto ended = std::partition_point(list->begin(), issued, [&](uint32_t i) {
      return out.stages[i].endUs <= by + kClockSlackUs;
    });
    return ended == list->begin() ? -1 : int64_t(*(ended - 1));
  }
  int64_t firstAfter(int64_t stream, double at, bool byCorr) const {
    const std::vector<uint32_t> *list = listOf(stream);
    return list ? firstAbove(*list, at, [&](uint32_t i) { return key(i, byCorr); }) : -1;
  }
  /// Duplicates are taken out once, at the end (a find per call would be
  /// quadratic in a stage's dependencies).
  void depend(int64_t consumer, int64_t producer) {
    if (consumer < 0 || producer < 0 || consumer <= producer)
      return;
    out.stages[consumer].deps.push_back(uint32_t(producer));
  }
  void cut(std::vector<double> cuts, bool byCorrelation);
  void cutAtWaitCalls();
  bool callIn(int64_t corr, double begin) {
    const uint32_t *call = b.callOf.find(corr);
    return call && b.trace.calls[*call].ts >= begin && b.trace.calls[*call].ts < b.to;
  }

  Builder &b;
  ImportedStep &out;
  double waitsFrom;
  /// Sync events by the call they belong to.
  llvm::DenseMap<int64_t, const SyncEvent *> syncEventOf;
};

// A cut at each of `cuts` (keys in issue order): the first op after it on
// every stream follows the last before it on every stream. Only the latest
// cut before an op (and after the previous op of its stream) matters: the
// last op before an earlier cut is, on each stream, at or before the last
// op before a later one. So each op gets at most one dependency per stream,
// however many cuts there were (12,000 over 256 streams made 786 million
// calls).
void Orderings::cut(std::vector<double> cuts, bool byCorrelation) {
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  if (cuts.empty())
    return;
  for (const auto &[stream, list] : b.onStream)
    for (size_t k = 0; k < list.size(); ++k) {
      const double at = key(list[k], byCorrelation);
      auto it = std::lower_bound(cuts.begin(), cuts.end(), at);
      if (it == cuts.begin())
        continue;
      const double c = *(it - 1);
      if (k > 0 && c < key(list[k - 1], byCorrelation))
        continue;
      for (int64_t s : out.streams)
        if (s != stream)
          depend(list[k], lastEndedBefore(s, c, byCorrelation, out.stages[list[k]].startUs));
    }
}

void Orderings::streamWaits() {
  for (const SyncEvent &s : b.trace.syncs) {
    const bool issued = callIn(s.correlation, b.from);
    if (s.kind == SyncEvent::StreamWait && (issued || callIn(s.correlation, waitsFrom))) {
      out.waitsIssued += issued;
      if (s.waitOnStream >= 0 && s.recordCorrelation >= 0)
        depend(firstAfter(s.stream, double(s.correlation), true),
               lastBefore(s.waitOnStream, double(s.recordCorrelation), true));
    } else if (issued && s.kind != SyncEvent::StreamWait) {
      syncEventOf[s.correlation] = &s;
    }
  }
  if (!out.syncEvents)
    cutAtWaitCalls();
}

// Without sync events: every stream's first op after a cudaStreamWaitEvent
// call waits for the last op before it on every other stream.
void Orderings::cutAtWaitCalls() {
  std::vector<double> waits;
  uint64_t backlogWaits = 0; ///< issued before the step, ordering its backlog
  bool byCorrelation = true;
  auto waitCall = [&](const HostCall &c) {
    return c.kind == HostCall::StreamWait && c.ts >= waitsFrom && c.ts < b.to;
  };
  for (const HostCall &c : b.trace.calls)
    if (waitCall(c)) {
      out.waitsIssued += c.ts >= b.from;
      backlogWaits += c.ts < b.from;
      byCorrelation &= c.correlation >= 0;
      waits.push_back(c.correlation >= 0 ? double(c.correlation) : c.ts);
    }
  if (!byCorrelation) {
    waits.clear();
    for (const HostCall &c : b.trace.calls)
      if (waitCall(c))
        waits.push_back(c.ts);
  }
  cut(std::move(waits), byCorrelation);
  if (out.waitsIssued || backlogWaits)
    out.notes.push_back(
        formatv("the trace has no sync events: each of its {0} cudaStreamWaitEvent call(s){1} "
                "orders every stream's next op behind the last op issued before it on every "
                "other stream (a safe superset of the recorded orderings); {2}",
                out.waitsIssued,
                backlogWaits ? formatv(" (and {0} issued before the step, which order the "
                                       "previous step's ops still running in it)",
                                       backlogWaits)
                                   .str()
                             : std::string(),
                b.trace.exactWaitsAdvice));
}

// What each host synchronisation waited for.
void Orderings::hostSyncs() {
  for (const PendingSync &p : b.syncs) {
    ImportedStage &st = out.stages[p.stage];
    const double at = p.correlation >= 0 ? double(p.correlation) : INFINITY;
    auto found = syncEventOf.find(p.correlation);
    const SyncEvent *e = found == syncEventOf.end() ? nullptr : found->second;
    std::vector<int64_t> producers;
    if (st.call == HostCall::DeviceSync || st.call == HostCall::Free) {
      for (int64_t s : out.streams)
        producers.push_back(lastBefore(s, at, true));
    } else if (e && e->kind == SyncEvent::StreamSync && e->stream >= 0) {
      producers.push_back(lastBefore(e->stream, at, true));
    } else if (e && e->kind == SyncEvent::EventSync && e->waitOnStream >= 0 &&
               e->recordCorrelation >= 0) {
      producers.push_back(lastBefore(e->waitOnStream, double(e->recordCorrelation), true));
    } else {
      // Which stream or event is not in the trace: whatever had ended by
      // the time the call returned (the recording shows it was done).
      for (int64_t s : out.streams)
        producers.push_back(lastEndedBefore(s, at, true, p.callEnd - b.origin));
    }
    for (int64_t u : producers) {
      depend(p.stage, u);
      if (u >= 0)
        st.waitedEndUs = std::max(st.waitedEndUs, out.stages[u].endUs);
    }
  }
  for (ImportedStage &st : out.stages)
    if (st.kind == ImportedStage::Kind::Sync && st.call == HostCall::BlockingCopy)
      st.waitedEndUs = out.stages[st.deps.front()].endUs;
}

} // namespace

llvm::Error step::orderStages(Builder &b) {
  ImportedStep &out = b.out;
  for (int64_t id : out.streams) {
    auto known = b.trace.streamPriority.find(id);
    if (known != b.trace.streamPriority.end() && known->second != 0)
      out.streamPriority[id] = known->second;
  }
  if (out.streams.size() > 256)
    return fail(formatv("the step's GPU ops run on {0} streams; a .pipe pipeline has at "
                        "most 256",
                        out.streams.size()));
  Orderings o(b);
  o.streamOrder();
  o.streamWaits();
  o.hostSyncs();
  return llvm::Error::success();
}
