//===- Reduction.h - Transitive reduction of a DAG covered by chains ------===//
//
// The vertices 0..n-1 are in topological order, and each lies on one chain
// (a stream): consecutive members of a chain are ordered, and that order is
// part of the graph. The graph is the union of the declared edges and the
// chain-order edges; the result is its transitive reduction.
//
// Because chains are totally ordered, the ancestors of v on chain c form a
// prefix of c. One integer per chain and vertex -- the position, plus one, of
// v's latest ancestor on that chain -- answers every reachability question
// ("vector clocks"). A predecessor p of v is redundant exactly when a later
// predecessor of v has p as an ancestor. Time O((V + E) * C), memory
// O(window * C): rows older than `window` vertices are never read again.
// With many chains the row operations are the cost, so when the window
// allows, entries are 16-bit, counted from a base that moves up now and
// then (Reduction.cpp says why no answer changes).
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SCHEDULE_REDUCTION_H
#define PIPEC_SCHEDULE_REDUCTION_H

#include "compiler/schedule/Instances.h"

#include <cstdint>
#include <vector>

namespace pipec {

struct Reduction {
  /// Each vertex's predecessors in the reduction, ascending (chain-order
  /// edges included when they survive).
  CSR kept;
  /// Parallel to the declared edges' targets: 1 if that edge survived.
  std::vector<uint8_t> declaredKept;
  uint64_t removedDeclared = 0;
};

/// `declared`: predecessors of each vertex, ascending, all smaller than it.
/// `window`: no predecessor (declared, or previous on its chain) is more
/// than `window` vertices before its successor.
Reduction transitiveReduction(const CSR &declared, const std::vector<uint32_t> &chainOf,
                              uint32_t numChains, size_t window);

namespace detail {
/// The 16-bit variant with the base moved whenever an entry would pass
/// `limit` (> window + 1), so that tests can make it move often.
Reduction transitiveReduction(const CSR &declared, const std::vector<uint32_t> &chainOf,
                              uint32_t numChains, size_t window, uint16_t limit);
} // namespace detail

} // namespace pipec

#endif // PIPEC_SCHEDULE_REDUCTION_H
