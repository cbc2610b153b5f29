//===- Reduction.cpp ------------------------------------------------------===//

#include "compiler/schedule/Reduction.h"

#include <algorithm>
#include <cassert>
#include <limits>

using namespace pipec;

namespace {

/// out = max(a, b), element by element (out may be a): with many streams,
/// most of the reduction's time. AVX2 has the unsigned maxima SSE2 lacks;
/// the CPU picks.
__attribute__((target_clones("avx2", "default"))) void
mergeMax(uint32_t *out, const uint32_t *a, const uint32_t *b, uint32_t c) {
  for (uint32_t k = 0; k < c; ++k)
    out[k] = std::max(a[k], b[k]);
}

__attribute__((target_clones("avx2", "default"))) void
mergeMax(uint16_t *out, const uint16_t *a, const uint16_t *b, uint32_t c) {
  for (uint32_t k = 0; k < c; ++k)
    out[k] = std::max(a[k], b[k]);
}

/// The reduction with clock entries of type Clock. An entry for ancestor u
/// holds u + 1 - base; `limit` is the largest a Clock may hold. When v + 1 -
/// base would pass it, base moves up to v - window and every entry moves
/// down with it, those for older ancestors becoming 0 ("none"). No answer
/// changes: every predecessor asked about from then on is at least
/// v - window, so an ancestor older than that can never be the one that
/// makes it redundant, and the entries of newer ones keep their order.
template <typename Clock>
Reduction reduce(const CSR &declared, const std::vector<uint32_t> &chainOf, uint32_t numChains,
                 size_t window, uint64_t limit) {
  constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
  constexpr uint64_t kChainOrder = std::numeric_limits<uint64_t>::max();
  const size_t n = declared.rows();
  // One row more than the window: a vertex's row never shares its place with
  // a predecessor's, so it is built where it is kept.
  const size_t rows = window >= n ? n : window + 1;
  const uint32_t c = numChains;
  // clock[(v % rows) * c + k]: v's latest ancestor on chain k (v itself
  // included), as above; 0 when it has none.
  std::vector<Clock> clock(std::max<size_t>(1, rows) * c, 0);
  std::vector<uint32_t> lastOnChain(c, kNone);
  uint64_t base = 0;

  Reduction out;
  out.kept.begin.reserve(n + 1);
  out.kept.targets.reserve(declared.edges() + n);
  out.declaredKept.assign(declared.edges(), 0);

  for (size_t v = 0; v < n; ++v) {
    if (v + 1 - base > limit) {
      const uint64_t newBase = v - window;
      const Clock delta = static_cast<Clock>(newBase - base);
      for (Clock &x : clock)
        x = x > delta ? x - delta : 0;
      base = newBase;
    }
    const uint32_t chain = chainOf[v];
    // The predecessors from the latest down: the declared ones, with the
    // previous vertex on v's chain in its place among them (once).
    uint64_t e = declared.begin[v + 1];
    const uint64_t stop = declared.begin[v];
    uint32_t chainPrev = lastOnChain[chain];
    // v's row is its latest predecessor's (always kept: nothing later can
    // have it as an ancestor) with the other kept ones taken in. Until a
    // second is kept, `first` stands for it, and the two are merged into
    // v's row in one pass rather than a copy and a merge.
    Clock *acc = &clock[(v % rows) * c];
    const Clock *first = nullptr;
    const size_t keptBegin = out.kept.targets.size();
    uint32_t kept = 0;
    while (e > stop || chainPrev != kNone) {
      uint32_t p;
      uint64_t edge = kChainOrder;
      if (e > stop && (chainPrev == kNone || declared.targets[e - 1] >= chainPrev)) {
        edge = --e;
        p = declared.targets[e];
        if (p == chainPrev)
          chainPrev = kNone; // declared as well: one edge
      } else {
        p = chainPrev;
        chainPrev = kNone;
      }
      assert(v - p < rows && "predecessor outside the window");
      const Clock *row = &clock[(p % rows) * c];
      const Clock *have = kept == 1 ? first : acc;
      if (kept && row[chainOf[p]] <= have[chainOf[p]])
        continue; // a later predecessor already has p as an ancestor
      out.kept.targets.push_back(p);
      if (edge != kChainOrder)
        out.declaredKept[edge] = 1;
      if (kept == 0)
        first = row;
      else
        mergeMax(acc, kept == 1 ? first : acc, row, c);
      ++kept;
    }
    if (kept == 1)
      std::copy(first, first + c, acc);
    else if (kept == 0)
      std::fill(acc, acc + c, 0);
    acc[chain] = static_cast<Clock>(v + 1 - base);
    lastOnChain[chain] = static_cast<uint32_t>(v);
    std::reverse(out.kept.targets.begin() + keptBegin, out.kept.targets.end());
    out.kept.begin.push_back(out.kept.targets.size());
  }
  for (uint8_t k : out.declaredKept)
    out.removedDeclared += !k;
  return out;
}

} // namespace

Reduction pipec::transitiveReduction(const CSR &declared, const std::vector<uint32_t> &chainOf,
                                     uint32_t numChains, size_t window) {
  // 16-bit entries halve the memory the row operations touch, and with many
  // streams that memory is the cost. With windows up to a quarter of the
  // range, the rows are rewritten at most every 49,151 vertices: a third of
  // a row per vertex at worst.
  constexpr uint16_t kLimit = std::numeric_limits<uint16_t>::max();
  if (window < kLimit / 4)
    return reduce<uint16_t>(declared, chainOf, numChains, window, kLimit);
  return reduce<uint32_t>(declared, chainOf, numChains, window,
                          std::numeric_limits<uint32_t>::max());
}

Reduction pipec::detail::transitiveReduction(const CSR &declared,
                                             const std::vector<uint32_t> &chainOf,
                                             uint32_t numChains, size_t window,
                                             uint16_t limit) {
  assert(window + 1 < limit && "the window must fit under the limit");
  return reduce<uint16_t>(declared, chainOf, numChains, window, limit);
}
