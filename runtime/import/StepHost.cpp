//===- StepHost.cpp - The host's calls in the step ------------------------===//

#include "runtime/import/StepBuild.h"

#include <algorithm>

using namespace pipec;
using namespace pipec::importer;
using namespace pipec::importer::step;

namespace {

/// The host's calls in the span, and a launch slot for each op whose call
/// is not in the trace (one per call: a graph's ops share the first one's),
/// in time order.
std::vector<HostItem> callsInSpan(Builder &b) {
  std::vector<HostItem> items;
  const std::vector<const GpuOp *> &ops = b.ops;
  // Sized once, over the ids' range (an array when they fill it).
  CorrelationIndex opOfCorrelation = CorrelationIndex::sizedFor([&](auto visit) {
    for (const GpuOp *op : ops)
      visit(op->correlation);
  });
  for (uint32_t i = 0; i < ops.size(); ++i)
    if (ops[i]->correlation >= 0)
      opOfCorrelation.tryEmplace(ops[i]->correlation, i); // a graph's first
  for (const HostCall &c : b.trace.calls) {
    if (c.ts < b.from || c.ts >= b.to)
      continue;
    const uint32_t *found = c.correlation >= 0 ? opOfCorrelation.find(c.correlation) : nullptr;
    int64_t op = found ? int64_t(*found) : -1;
    if (op >= 0 && ops[op]->launchTs != c.ts)
      op = -1; // a duplicate correlation: the op's call is another
    items.push_back({c.ts, c.dur, c.correlation, op, c.name, c.kind});
  }
  for (uint32_t i = 0; i < ops.size(); ++i)
    if (ops[i]->launchTs < 0 &&
        (i == 0 || ops[i]->correlation < 0 || ops[i - 1]->correlation != ops[i]->correlation))
      items.push_back(
          {b.launches.slot(*ops[i]), 0, ops[i]->correlation, int64_t(i), 0, HostCall::Other});
  std::stable_sort(items.begin(), items.end(), [](const HostItem &x, const HostItem &y) {
    return x.ts != y.ts ? x.ts < y.ts : x.correlation < y.correlation;
  });
  return items;
}

/// A host that polls cudaEventQuery or cudaStreamQuery until the GPU is
/// done waits for it as a sync does: a run of at least three polls, no
/// other call among them, over kUnexplainedIdleUs or more, whose last
/// found an op ended since the one before it began, is one sync (what it
/// waited for: what had ended when the last poll returned).
void foldPolls(Builder &b) {
  std::vector<HostItem> &items = b.items;
  auto polls = [&](const HostItem &item) {
    if (item.op >= 0 || item.kind != HostCall::Other)
      return false;
    llvm::StringRef name = b.trace.callNames[item.name];
    return name == "cudaEventQuery" || name == "cudaStreamQuery";
  };
  std::vector<HostItem> kept;
  kept.reserve(items.size());
  for (size_t k = 0; k < items.size();) {
    size_t e = k;
    while (e < items.size() && polls(items[e]))
      ++e;
    if (e == k) {
      kept.push_back(items[k++]);
      continue;
    }
    const double first = items[k].ts, last = items[e - 1].ts + items[e - 1].dur;
    bool spun = false;
    if (e - k >= 3 && last - first >= kUnexplainedIdleUs) {
      auto ended = std::lower_bound(b.ends.begin(), b.ends.end(), items[e - 2].ts);
      spun = ended != b.ends.end() && *ended <= last;
    }
    if (spun) {
      HostItem spin = items[e - 1];
      spin.ts = first;
      spin.dur = last - first;
      spin.kind = HostCall::Poll;
      kept.push_back(spin);
    } else {
      kept.insert(kept.end(), items.begin() + k, items.begin() + e);
    }
    k = e;
  }
  items = std::move(kept);
}

/// Room for every stage the walk can add, at most: each op, a sync after a
/// copy that may block, a sync and the host work before it per sync call,
/// and the stretches of host work (no more than fit in the host's span). A
/// million stages grown by doubling would hold both copies at once: the
/// import's peak.
size_t mostStages(const Builder &b) {
  size_t most = b.backlog.size() + b.ops.size() + 2; // (host work before and after the calls)
  for (const GpuOp *op : b.ops)
    most += op->kind != OpKind::Kernel;
  for (const HostItem &item : b.items)
    most += item.kind == HostCall::StreamSync || item.kind == HostCall::EventSync ||
                    item.kind == HostCall::DeviceSync || item.kind == HostCall::Free ||
                    item.kind == HostCall::Poll || (item.op < 0 && item.dur >= kMinHostWorkUs)
                ? 2
                : 0;
  if (!b.items.empty()) {
    const double span = b.items.back().ts + b.items.back().dur - b.items.front().ts;
    most += std::min<double>(double(b.items.size()), span / kHostWorkUs + 1);
  }
  return most;
}

} // namespace

void step::gatherHostCalls(Builder &b) {
  b.opsOfCorrelation = CorrelationIndex::sizedFor([&](auto visit) {
    for (const GpuOp &op : b.trace.ops)
      visit(op.correlation);
  });
  for (const GpuOp &op : b.trace.ops)
    if (op.correlation >= 0)
      ++*b.opsOfCorrelation.tryEmplace(op.correlation, 0).first;
  b.items = callsInSpan(b);
  b.ends.reserve(b.trace.ops.size());
  for (const GpuOp &op : b.trace.ops)
    b.ends.push_back(op.ts + op.dur);
  std::sort(b.ends.begin(), b.ends.end());
  foldPolls(b);

  b.out.stages.reserve(mostStages(b));
  // A step's host time is its own from the step's start: the stretch
  // before its first call (the data loading before its first launch, say)
  // is host work, a stage of its own, first in the program. The previous
  // step's backlog, cut to the part after the step's first op began, is
  // issued after it (the whole trace's host starts at its first launch).
  if (std::isfinite(b.from) && !b.items.empty() &&
      b.items.front().ts - b.from >= kMinHostWorkUs)
    b.addHostWork(b.from, b.items.front().ts - b.from,
                  ImportedStage::HostWorkAt::BeforeFirstCall);
  for (const GpuOp *op : b.backlog)
    b.out.stages[b.addOp(*op, true)].graphLaunched = b.graphLaunched(*op);
  b.out.backlogOps = b.backlog.size();
}
