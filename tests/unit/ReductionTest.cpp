// The transitive reduction against a slow, obvious one (ancestor bitsets),
// on random DAGs covered by chains, with the 16-bit clocks' base moved as
// often as the window allows.

#include "SlowReduction.h"

#include "compiler/schedule/Reduction.h"

#include <doctest/doctest.h>

#include "Seed.h"

#include <algorithm>
#include <random>
#include <set>

using namespace pipec;

namespace {

using test::Edge;

struct Graph {
  CSR declared;
  std::vector<uint32_t> chainOf;
  uint32_t chains = 0;
  size_t window = 0;
};

/// n vertices on g's chains; every predecessor, declared (each vertex of the
/// window before, with probability density / 8) or previous on its chain,
/// at most `window` vertices back.
void addVertices(Graph &g, size_t n, uint32_t density, std::mt19937 &rng) {
  std::vector<size_t> last(g.chains, SIZE_MAX);
  for (size_t v = 0; v < n; ++v) {
    std::vector<uint32_t> allowed;
    for (uint32_t k = 0; k < g.chains; ++k)
      if (last[k] == SIZE_MAX || v - last[k] <= g.window)
        allowed.push_back(k);
    // v - 1's chain always qualifies.
    const uint32_t k = allowed[rng() % allowed.size()];
    g.chainOf.push_back(k);
    last[k] = v;
    for (size_t p = v > g.window ? v - g.window : 0; p < v; ++p)
      if (rng() % 8 < density)
        g.declared.targets.push_back(static_cast<uint32_t>(p));
    g.declared.begin.push_back(g.declared.targets.size());
  }
}

Graph randomGraph(std::mt19937 &rng) {
  Graph g;
  const size_t n = 1 + rng() % test::kMaxVertices;
  g.chains = 1 + rng() % 8;
  g.window = 1 + rng() % (rng() % 2 ? 8 : n);
  addVertices(g, n, 1 + rng() % 6, rng);
  return g;
}

/// The reduction by brute force, of declared ∪ chain order.
std::set<Edge> slowReduction(const Graph &g) {
  std::set<Edge> h;
  std::vector<size_t> last(g.chains, SIZE_MAX);
  for (uint32_t v = 0; v < g.chainOf.size(); ++v) {
    for (uint32_t u : g.declared.row(v))
      h.insert({u, v});
    if (last[g.chainOf[v]] != SIZE_MAX)
      h.insert({static_cast<uint32_t>(last[g.chainOf[v]]), v});
    last[g.chainOf[v]] = v;
  }
  return test::slowReduction(g.chainOf.size(), h);
}

void checkAgainst(const Graph &g, const std::set<Edge> &expected, const Reduction &r) {
  std::set<Edge> kept;
  for (uint32_t v = 0; v < r.kept.rows(); ++v)
    for (uint32_t u : r.kept.row(v))
      kept.insert({u, v});
  CHECK(kept == expected);
  std::vector<uint8_t> declaredKept;
  uint64_t removed = 0;
  for (uint32_t v = 0; v < g.chainOf.size(); ++v)
    for (uint32_t u : g.declared.row(v)) {
      declaredKept.push_back(expected.count({u, v}) > 0);
      removed += !declaredKept.back();
    }
  CHECK(r.declaredKept == declaredKept);
  CHECK(r.removedDeclared == removed);
}

} // namespace

TEST_CASE("reduction: randomized against the slow one, base moved often") {
  PIPEC_SEEDED(rng, 31);
  for (int round = 0; round < 400; ++round) {
    Graph g = randomGraph(rng);
    CAPTURE(round);
    std::set<Edge> expected = slowReduction(g);
    checkAgainst(g, expected, transitiveReduction(g.declared, g.chainOf, g.chains, g.window));
    // The smallest limit moves the base at every vertex past the first
    // window + 1; one a little larger, every few vertices.
    for (size_t extra : {2, 5}) {
      const auto limit = static_cast<uint16_t>(g.window + extra);
      checkAgainst(
          g, expected,
          detail::transitiveReduction(g.declared, g.chainOf, g.chains, g.window, limit));
    }
  }
}

namespace {

/// For short windows, by brute force on any length: anc[v] bit d - 1 says
/// v - d is an ancestor of v (d <= window), and a path between two vertices
/// a window apart stays within it.
std::set<Edge> slowWindowedReduction(const Graph &g) {
  REQUIRE(g.window < 64);
  const size_t n = g.chainOf.size();
  const uint64_t mask = (uint64_t(1) << g.window) - 1;
  std::vector<uint64_t> anc(n, 0);
  std::vector<std::vector<uint32_t>> preds(n);
  std::vector<size_t> last(g.chains, SIZE_MAX);
  for (uint32_t v = 0; v < n; ++v) {
    for (uint32_t u : g.declared.row(v))
      preds[v].push_back(u);
    const size_t prev = last[g.chainOf[v]];
    if (prev != SIZE_MAX && !std::count(preds[v].begin(), preds[v].end(), prev))
      preds[v].push_back(static_cast<uint32_t>(prev));
    last[g.chainOf[v]] = v;
    for (uint32_t u : preds[v]) {
      const size_t d = v - u;
      anc[v] |= ((anc[u] << d) | (uint64_t(1) << (d - 1))) & mask;
    }
  }
  std::set<Edge> kept;
  for (uint32_t v = 0; v < n; ++v)
    for (uint32_t u : preds[v]) {
      bool between = false;
      for (uint32_t w = u + 1; w < v && !between; ++w)
        between = (anc[w] >> (w - u - 1) & 1) && (anc[v] >> (v - w - 1) & 1);
      if (!between)
        kept.insert({u, v});
    }
  return kept;
}

} // namespace

TEST_CASE("reduction: long graphs pass the 16-bit range, same answers") {
  PIPEC_SEEDED(rng, 32);
  for (int round = 0; round < 3; ++round) {
    Graph g;
    g.chains = 1 + rng() % 16;
    g.window = 1 + rng() % 40;
    // Past 65,535 vertices: the base moves once or twice.
    addVertices(g, 70000 + rng() % 70000, 1, rng);
    CAPTURE(round);
    checkAgainst(g, slowWindowedReduction(g),
                 transitiveReduction(g.declared, g.chainOf, g.chains, g.window));
  }
}
