//===- Redundancy.cpp -----------------------------------------------------===//

#include "compiler/schedule/Redundancy.h"

#include <algorithm>
#include <numeric>

using namespace pipec;

uint64_t pipec::defaultRedundancyBudget(const CSR &deps) {
  return 32 * (uint64_t(deps.rows()) + deps.edges()) + (uint64_t(1) << 22);
}

namespace {

/// One clock entry: the latest ancestor on `chain` is at position value - 1.
struct Entry {
  uint32_t chain, value;
};

/// The clock being built for one vertex: dense per chain, with the chains
/// touched listed so that clearing it costs what filling it did.
class Accumulator {
public:
  void addChain() { value.push_back(0); }
  uint32_t operator[](uint32_t chain) const { return value[chain]; }
  void raise(uint32_t chain, uint32_t v) {
    if (value[chain] == 0)
      touched.push_back(chain);
    value[chain] = std::max(value[chain], v);
  }
  /// Moves the entries `keep` accepts into `out`, and clears.
  template <typename Keep> void drain(std::vector<Entry> &out, Keep keep) {
    for (uint32_t chain : touched) {
      if (keep(value[chain]))
        out.push_back({chain, value[chain]});
      value[chain] = 0;
    }
    touched.clear();
  }

private:
  std::vector<uint32_t> value, touched;
};

} // namespace

DeclaredRedundancy pipec::findRedundantDependencies(const CSR &deps, uint64_t budget) {
  const uint32_t n = static_cast<uint32_t>(deps.rows());
  if (budget == 0)
    budget = defaultRedundancyBudget(deps);
  DeclaredRedundancy result;
  result.kept.assign(deps.edges(), 0);

  // lastUse[p]: the last vertex that declares p as a dependency (p if none).
  // reach[v]: the largest lastUse over v and the members before it on its
  // chain -- the last vertex that can ask whether they are ancestors.
  std::vector<uint32_t> lastUse(n), reach(n), chainOf(n), tailOf;
  std::iota(lastUse.begin(), lastUse.end(), 0u);
  for (uint32_t v = 0; v < n; ++v)
    for (uint32_t p : deps.row(v))
      lastUse[p] = std::max(lastUse[p], v);

  std::vector<std::vector<Entry>> clock(n);
  Accumulator acc;
  for (uint32_t v = 0; v < n; ++v) {
    // Latest dependency first: an earlier one that a later one already has
    // as an ancestor is redundant, and its clock adds nothing.
    constexpr uint32_t kNone = UINT32_MAX;
    uint32_t latestKept = kNone;
    for (uint64_t e = deps.begin[v + 1]; e-- > deps.begin[v];) {
      const uint32_t p = deps.targets[e];
      if (acc[chainOf[p]] > p)
        continue;
      result.kept[e] = 1;
      if (latestKept == kNone)
        latestKept = p;
      acc.raise(chainOf[p], p + 1);
      for (const Entry &x : clock[p])
        acc.raise(x.chain, x.value);
      result.work += clock[p].size() + 1;
    }
    // Extend the chain of the latest kept dependency when v can follow its
    // tail directly; otherwise start a chain.
    uint32_t chain;
    if (latestKept != kNone && tailOf[chainOf[latestKept]] == latestKept) {
      chain = chainOf[latestKept];
      tailOf[chain] = v;
      reach[v] = std::max(reach[latestKept], lastUse[v]);
    } else {
      chain = static_cast<uint32_t>(tailOf.size());
      tailOf.push_back(v);
      acc.addChain();
      reach[v] = lastUse[v];
    }
    chainOf[v] = chain;
    acc.raise(chain, v + 1);
    acc.drain(clock[v], [&](uint32_t value) { return reach[value - 1] > v; });
    result.work += 2 * clock[v].size();
    if (result.work > budget) {
      result.complete = false;
      result.kept.assign(deps.edges(), 1);
      return result;
    }
    // Clocks no later vertex reads are freed as we go.
    for (uint32_t p : deps.row(v))
      if (lastUse[p] == v)
        std::vector<Entry>().swap(clock[p]);
  }
  return result;
}
