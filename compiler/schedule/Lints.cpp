//===- Lints.cpp ----------------------------------------------------------===//

#include "compiler/schedule/Lints.h"

#include "compiler/schedule/Instances.h"
#include "compiler/schedule/StreamAssignment.h"

#include "llvm/Support/FormatVariadic.h"

#include <deque>
#include <vector>

using namespace pipec;

/// A shortest chain of dependencies from `from` to `to` (stage indices, in
/// the "depends on" direction) that does not use the direct edge.
static std::vector<uint32_t> indirectPath(const program::Pipeline &p, uint32_t from,
                                          uint32_t to) {
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<uint32_t> parent(p.stages.size(), kNone);
  std::deque<uint32_t> queue;
  for (const program::Dependency &d : p.stages[from].deps)
    if (!d.previousIteration() && d.stage != to && parent[d.stage] == kNone) {
      parent[d.stage] = from;
      queue.push_back(d.stage);
    }
  while (!queue.empty()) {
    uint32_t v = queue.front();
    queue.pop_front();
    if (v == to)
      break;
    for (const program::Dependency &d : p.stages[v].deps)
      if (!d.previousIteration() && parent[d.stage] == kNone && d.stage != from) {
        parent[d.stage] = v;
        queue.push_back(d.stage);
      }
  }
  std::vector<uint32_t> path;
  if (parent[to] == kNone)
    return path;
  for (uint32_t v = to; v != from; v = parent[v])
    path.push_back(v);
  path.push_back(from);
  return {path.rbegin(), path.rend()};
}

namespace {

/// Calls `f(stage position, its declaration)` for each declared
/// same-iteration dependency that the stage's other dependencies imply.
template <typename F>
void forEachRedundant(const program::Pipeline &p, const StageGraph &graph, F f) {
  const std::vector<uint32_t> &order = graph.order;
  for (uint32_t pos = 0; pos < order.size(); ++pos) {
    const program::Stage &stage = p.stages[order[pos]];
    uint64_t edge = graph.deps.begin[pos];
    // deps.row(pos) lists the same-iteration dependencies by position,
    // ascending; find each one's declaration to point at it.
    for (uint32_t targetPos : graph.deps.row(pos)) {
      bool kept = graph.declaredKept[edge++];
      if (kept)
        continue;
      uint32_t target = order[targetPos];
      // Only what someone wrote: a dependency pipec inferred from the data
      // is no one's to delete.
      const program::Dependency *decl = nullptr;
      for (const program::Dependency &d : stage.deps)
        if (!d.previousIteration() && d.stage == target && !d.inferred())
          decl = &d;
      if (decl)
        f(pos, *decl);
    }
  }
}

} // namespace

size_t pipec::countRedundantDependencies(const program::Pipeline &p, const StageGraph &graph) {
  size_t n = 0;
  if (graph.reductionExact)
    forEachRedundant(p, graph, [&](uint32_t, const program::Dependency &) { ++n; });
  return n;
}

void pipec::lintRedundantDependencies(const program::Pipeline &p, const StageGraph &graph,
                                      DiagnosticEngine &diags) {
  const std::vector<uint32_t> &order = graph.order;
  if (!graph.reductionExact) {
    // Never silently: say the lint did not run (the schedule is unaffected).
    diags.warning(p.range, llvm::formatv("redundant dependencies in pipeline '{0}' were "
                                         "not checked: its {1} dependencies cross too "
                                         "many parallel chains to check in bounded time",
                                         p.name, graph.deps.edges()));
    return;
  }
  // Generated pipelines can hold thousands: show the first few in full.
  constexpr unsigned kMaxShown = 10;
  unsigned reported = 0;
  forEachRedundant(p, graph, [&](uint32_t pos, const program::Dependency &decl) {
    const program::Stage &stage = p.stages[order[pos]];
    const uint32_t target = decl.stage;
    const std::string &name = p.stages[target].name;
    if (++reported > kMaxShown)
      return;
    std::vector<uint32_t> path = indirectPath(p, order[pos], target);
    auto warning = diags.warning(
        decl.range,
        llvm::formatv("redundant dependency on '{0}'; '{1}' already "
                      "depends on it through '{2}'",
                      name, stage.name, path.size() > 1 ? p.stages[path[1]].name : name));
    if (path.size() > 1) {
      std::string chain;
      for (uint32_t v : path)
        chain += (chain.empty() ? "" : " -> ") + p.stages[v].name;
      for (const program::Dependency &d : stage.deps)
        if (!d.previousIteration() && d.stage == path[1])
          warning.attachNote(d.range, "implied by " + chain);
    }
  });
  if (reported > kMaxShown)
    diags.warning(p.range, llvm::formatv("{0} more redundant dependencies in "
                                         "pipeline '{1}' are not shown",
                                         reported - kMaxShown, p.name));
}

void pipec::lintWrittenOrder(const program::Pipeline &p, const StageGraph &graph,
                             DiagnosticEngine &diags) {
  const std::vector<uint32_t> &order = graph.order;
  std::vector<uint32_t> position(p.stages.size(), 0);
  for (uint32_t pos = 0; pos < order.size(); ++pos)
    position[order[pos]] = pos;
  // Per stream: the latest-written stage issued so far, and whether it
  // was warned of already (one warning a stream: the first pair).
  std::vector<int64_t> latest(p.streams.size(), -1);
  std::vector<uint8_t> warned(p.streams.size(), 0);
  for (uint32_t pos = 0; pos < order.size(); ++pos) {
    const uint32_t k = order[pos];
    const program::Stage &st = p.stages[k];
    if (st.stream < 0 || size_t(st.stream) >= p.streams.size())
      continue;
    int64_t &last = latest[size_t(st.stream)];
    if (last < 0 || uint32_t(last) < k) {
      last = int64_t(k);
      continue;
    }
    if (warned[size_t(st.stream)])
      continue;
    warned[size_t(st.stream)] = 1;
    // Written before `ahead`, issued after it: a dependency issued after
    // `ahead` holds it back (the latest of its dependencies in the order).
    const program::Stage &ahead = p.stages[size_t(last)];
    const program::Dependency *forcing = nullptr;
    for (const program::Dependency &d : st.deps)
      if (!d.previousIteration() && position[d.stage] > position[size_t(last)] &&
          (!forcing || position[d.stage] > position[forcing->stage]))
        forcing = &d;
    auto warning = diags.warning(
        st.range,
        llvm::formatv(
            "stage '{0}' is written before '{1}' on stream '{2}' but is issued after "
            "it, so the stream runs '{1}' first{3}",
            st.name, ahead.name, p.streams[size_t(st.stream)].name,
            forcing ? llvm::formatv(": '{0}' depends on '{1}', which comes after "
                                    "'{2}' in the issue order (make '{2}' depend on "
                                    "'{0}' to keep the order as written)",
                                    st.name, p.stages[forcing->stage].name, ahead.name)
                          .str()
                    : std::string()));
    if (forcing)
      warning.attachNote(forcing->range,
                         "the dependency that orders it after '" + ahead.name + "'");
  }
}

void pipec::lintHardwareQueues(const program::Pipeline &p, unsigned queues,
                               DiagnosticEngine &diags) {
  if (queues == 0 || p.streams.size() <= queues)
    return;
  // Each device has its own queues: its streams, in order, round-robin
  // onto them.
  std::vector<std::vector<uint32_t>> streamsOf(p.deviceCount());
  for (uint32_t i = 0; i < p.streams.size(); ++i)
    streamsOf[p.devices.empty() ? 0 : p.streams[i].device].push_back(i);
  for (size_t d = 0; d < streamsOf.size(); ++d) {
    const std::vector<uint32_t> &own = streamsOf[d];
    if (own.size() <= queues)
      continue;
    const program::Stream &first = p.streams[own[0]], &extra = p.streams[own[queues]];
    const std::string declares =
        p.devices.size() > 1
            ? llvm::formatv("pipeline '{0}' puts {1} streams on device '{2}' but a device "
                            "has",
                            p.name, own.size(), p.devices[d].name)
                  .str()
            : llvm::formatv("pipeline '{0}' declares {1} streams but the device has", p.name,
                            own.size())
                  .str();
    diags
        .warning(extra.range,
                 llvm::formatv("{0} {1} hardware queues: stream '{2}' shares a queue with "
                               "stream '{3}', and work of streams that share a queue runs "
                               "in one FIFO, serialised even where the schedule lets it "
                               "overlap",
                               declares, queues, extra.name, first.name)
                     .str())
        .attachNote(first.range,
                    llvm::formatv("raise CUDA_DEVICE_MAX_CONNECTIONS (up to 32; "
                                  "'hardware_queues' in the profile) or declare "
                                  "at most {0} streams{1}",
                                  queues, p.devices.size() > 1 ? " per device" : "")
                        .str());
  }
}
