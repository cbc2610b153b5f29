//===- Reduction.cpp ------------------------------------------------------===//

#include "compiler/schedule/Reduction.h"

#include <algorithm>
#include <cassert>
#include <limits>

using namespace pipec;

namespace {

/// acc = max(acc, row), element by element: with many streams, most of the
/// reduction's time. AVX2 has the unsigned max SSE2 lacks; the CPU picks.
__attribute__((target_clones("avx2", "default"))) void
mergeMax(uint32_t *acc, const uint32_t *row, uint32_t c) {
  for (uint32_t k = 0; k < c; ++k)
    acc[k] = std::max(acc[k], row[k]);
}

} // namespace

Reduction pipec::transitiveReduction(const CSR &declared,
                                     const std::vector<uint32_t> &chainOf,
                                     uint32_t numChains, size_t window,
                                     std::vector<uint32_t> *clocks) {
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  const size_t n = declared.rows();
  // One row more than the window: a vertex's row never shares its place with
  // a predecessor's, so it is built where it is kept.
  const bool all = window >= n;
  const size_t rows = all ? std::max<size_t>(1, n) : window + 1;
  const uint32_t c = numChains;
  // clock[(v % rows) * c + k]: 1 + position on chain k of v's latest
  // ancestor there (v itself included); 0 when it has none.
  std::vector<uint32_t> clock(rows * c, 0);
  std::vector<uint32_t> lastOnChain(c, kNone), chainLength(c, 0);
  // (predecessor, index of the declared edge or kNone for chain order)
  std::vector<std::pair<uint32_t, uint64_t>> preds;
  std::vector<uint32_t> keptHere;

  Reduction out;
  out.kept.begin.reserve(n + 1);
  out.kept.targets.reserve(declared.edges() + n);
  out.declaredKept.assign(declared.edges(), 0);

  for (size_t v = 0; v < n; ++v) {
    const uint32_t chain = chainOf[v];
    preds.clear();
    for (uint64_t e = declared.begin[v]; e < declared.begin[v + 1]; ++e)
      preds.push_back({declared.targets[e], e});
    uint32_t chainPrev = lastOnChain[chain];
    if (chainPrev != kNone) {
      auto it = std::lower_bound(
          preds.begin(), preds.end(), chainPrev,
          [](const auto &a, uint32_t b) { return a.first < b; });
      if (it == preds.end() || it->first != chainPrev)
        preds.insert(it, {chainPrev, std::numeric_limits<uint64_t>::max()});
    }
    // v's row starts as its latest predecessor's (always kept: nothing
    // later can have it as an ancestor) and takes in the others kept.
    uint32_t *acc = &clock[(v % rows) * c];
    keptHere.clear();
    for (auto it = preds.rbegin(); it != preds.rend(); ++it) {
      const uint32_t p = it->first;
      assert(v - p < rows && "predecessor outside the window");
      const uint32_t *row = &clock[(p % rows) * c];
      const bool first = keptHere.empty();
      if (!first && row[chainOf[p]] <= acc[chainOf[p]])
        continue; // a later predecessor already has p as an ancestor
      keptHere.push_back(p);
      if (it->second != std::numeric_limits<uint64_t>::max())
        out.declaredKept[it->second] = 1;
      if (first)
        std::copy(row, row + c, acc);
      else
        mergeMax(acc, row, c);
    }
    if (keptHere.empty())
      std::fill(acc, acc + c, 0);
    acc[chain] = ++chainLength[chain];
    lastOnChain[chain] = static_cast<uint32_t>(v);
    std::reverse(keptHere.begin(), keptHere.end());
    out.kept.targets.insert(out.kept.targets.end(), keptHere.begin(),
                            keptHere.end());
    out.kept.begin.push_back(out.kept.targets.size());
  }
  for (uint8_t k : out.declaredKept)
    out.removedDeclared += !k;
  if (clocks && all)
    *clocks = std::move(clock);
  return out;
}
