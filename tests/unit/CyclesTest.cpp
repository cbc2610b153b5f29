#include "compiler/sema/Cycles.h"

#include <doctest/doctest.h>

#include "Seed.h"

#include <random>
#include <set>

using namespace pipec::sema;
using Graph = std::vector<std::vector<uint32_t>>;

namespace {
/// Slow and obvious: v is on a cycle iff v reaches itself; the set of
/// vertices on cycles, grouped by mutual reachability.
std::set<std::set<uint32_t>> slowCyclicGroups(const Graph &g) {
  size_t n = g.size();
  std::vector<std::vector<bool>> reach(n, std::vector<bool>(n, false));
  for (size_t v = 0; v < n; ++v)
    for (uint32_t w : g[v])
      reach[v][w] = true;
  for (size_t k = 0; k < n; ++k)
    for (size_t i = 0; i < n; ++i)
      if (reach[i][k])
        for (size_t j = 0; j < n; ++j)
          if (reach[k][j])
            reach[i][j] = true;
  std::set<std::set<uint32_t>> groups;
  for (size_t v = 0; v < n; ++v) {
    std::set<uint32_t> group;
    for (size_t w = 0; w < n; ++w)
      if (v != w && reach[v][w] && reach[w][v])
        group.insert(static_cast<uint32_t>(w));
    if (!group.empty()) {
      group.insert(static_cast<uint32_t>(v));
      groups.insert(group);
    }
  }
  return groups;
}

bool hasEdge(const Graph &g, uint32_t a, uint32_t b) {
  for (uint32_t w : g[a])
    if (w == b)
      return true;
  return false;
}
} // namespace

TEST_CASE("cycles: a triangle is reported once, from its smallest vertex") {
  Graph g = {{2}, {0}, {1}, {0, 1}};
  auto cycles = findCycles(g);
  REQUIRE(cycles.size() == 1);
  CHECK(cycles[0] == std::vector<uint32_t>{0, 2, 1});
}

TEST_CASE("cycles: self-loops and DAGs have none") {
  CHECK(findCycles({{0}, {0}, {1}}).empty());
  CHECK(findCycles({{}, {0}, {0, 1}}).empty());
}

TEST_CASE("cycles: randomized against transitive closure") {
  PIPEC_SEEDED(rng, 2024);
  for (int round = 0; round < 2000; ++round) {
    uint32_t n = 1 + rng() % 12;
    Graph g(n);
    uint32_t edges = rng() % (2 * n + 1);
    for (uint32_t e = 0; e < edges; ++e) {
      uint32_t a = rng() % n, b = rng() % n;
      if (a != b)
        g[a].push_back(b);
    }
    auto groups = slowCyclicGroups(g);
    auto cycles = findCycles(g);
    REQUIRE(cycles.size() == groups.size());
    for (const auto &cycle : cycles) {
      // A real cycle, starting at its group's smallest vertex, inside one group.
      REQUIRE(cycle.size() >= 2);
      std::set<uint32_t> inCycle(cycle.begin(), cycle.end());
      CHECK(inCycle.size() == cycle.size());
      for (size_t i = 0; i < cycle.size(); ++i)
        CHECK(hasEdge(g, cycle[i], cycle[(i + 1) % cycle.size()]));
      bool inOneGroup = false;
      for (const auto &group : groups)
        if (group.count(cycle[0])) {
          inOneGroup = *group.begin() == cycle[0];
          for (uint32_t v : cycle)
            inOneGroup = inOneGroup && group.count(v);
        }
      CHECK(inOneGroup);
    }
  }
}
