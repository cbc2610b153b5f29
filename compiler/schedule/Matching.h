//===- Matching.h - Maximum bipartite matching (Hopcroft-Karp) ------------===//
#ifndef PIPEC_SCHEDULE_MATCHING_H
#define PIPEC_SCHEDULE_MATCHING_H

#include "compiler/schedule/Instances.h"

#include <cstdint>
#include <vector>

namespace pipec {

constexpr uint32_t kUnmatched = UINT32_MAX;

/// A maximum matching of the bipartite graph whose left vertex u has the
/// right neighbours adjacency.row(u). Returns, for each left vertex, its
/// right partner or kUnmatched. O(E * sqrt(V)); iterative, no recursion.
std::vector<uint32_t> maximumMatching(const CSR &adjacency, uint32_t numRight);

} // namespace pipec

#endif // PIPEC_SCHEDULE_MATCHING_H
