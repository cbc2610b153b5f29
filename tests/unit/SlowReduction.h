//===- SlowReduction.h - Reachability and reduction by brute force --------===//
//
// The slow, obvious versions the scheduling tests compare against: ancestor
// sets as bitsets, and an edge kept unless a vertex lies on a path between
// its ends. Graphs of up to kMaxVertices vertices, edges u -> v with u < v.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_TESTS_SLOWREDUCTION_H
#define PIPEC_TESTS_SLOWREDUCTION_H

#include <bitset>
#include <cstdint>
#include <set>
#include <utility>
#include <vector>

namespace pipec::test {

constexpr size_t kMaxVertices = 512;
using Bits = std::bitset<kMaxVertices>;
using Edge = std::pair<uint32_t, uint32_t>;

/// reach[v]: the vertices that reach v (v excluded).
inline std::vector<Bits> ancestors(size_t n, const std::set<Edge> &edges) {
  std::vector<Bits> reach(n);
  for (auto [u, v] : edges) // ordered by u, and every u < v: reach[u] is whole
    reach[v] |= reach[u], reach[v].set(u);
  return reach;
}

/// The transitive reduction: (u, v) stays unless some w sits between.
inline std::set<Edge> slowReduction(size_t n, const std::set<Edge> &edges) {
  std::vector<Bits> reach = ancestors(n, edges);
  std::set<Edge> kept;
  for (auto [u, v] : edges) {
    bool between = false;
    for (size_t w = u + 1; w < v && !between; ++w)
      between = reach[w].test(u) && reach[v].test(w);
    if (!between)
      kept.insert({u, v});
  }
  return kept;
}

} // namespace pipec::test

#endif // PIPEC_TESTS_SLOWREDUCTION_H
