// The redundant-dependency pass against a slow, obvious one: a declared
// dependency p of v is redundant exactly when another dependency of v has p
// as an ancestor (found by a search backwards). Random graphs of 10^3 to
// 10^5 vertices, local and with long edges, and the lint end to end on
// generated flat files: the same findings at every size, no cap.

#include "FrontendHelpers.h"

#include "compiler/schedule/Instances.h"
#include "compiler/schedule/Lints.h"
#include "compiler/schedule/Redundancy.h"
#include "compiler/schedule/StreamAssignment.h"

#include <doctest/doctest.h>

#include "Seed.h"

#include <algorithm>
#include <random>
#include <set>

using namespace pipec;

namespace {

/// Each vertex depends on up to `maxDeps` earlier ones: within `window`
/// before it, or (with probability `longEdges`) anywhere before it.
CSR randomGraph(std::mt19937 &rng, uint32_t n, uint32_t window, uint32_t maxDeps,
                double longEdges) {
  std::uniform_real_distribution<double> coin(0, 1);
  CSR g;
  for (uint32_t v = 0; v < n; ++v) {
    std::vector<uint32_t> row;
    uint32_t k = v == 0 ? 0 : rng() % (maxDeps + 1);
    for (uint32_t i = 0; i < k; ++i) {
      uint32_t lo = coin(rng) < longEdges || v < window ? 0 : v - window;
      row.push_back(lo + rng() % (v - lo));
    }
    if (rng() % 50 == 0 && !row.empty())
      row.push_back(row.front()); // a duplicate: the second copy is redundant
    std::sort(row.begin(), row.end());
    g.targets.insert(g.targets.end(), row.begin(), row.end());
    g.begin.push_back(g.targets.size());
  }
  return g;
}

/// The obvious answer: search backwards from v's other dependencies, never
/// below p. Of two copies of one dependency the later is kept.
std::vector<uint8_t> slowKept(const CSR &g) {
  std::vector<uint8_t> kept(g.edges(), 1);
  std::vector<uint32_t> seen(g.rows(), UINT32_MAX), stack;
  uint32_t stamp = 0;
  for (uint32_t v = 0; v < g.rows(); ++v)
    for (uint64_t e = g.begin[v]; e < g.begin[v + 1]; ++e) {
      uint32_t p = g.targets[e];
      if (e + 1 < g.begin[v + 1] && g.targets[e + 1] == p) {
        kept[e] = 0;
        continue;
      }
      ++stamp;
      stack.clear();
      for (uint32_t q : g.row(v))
        if (q > p && seen[q] != stamp) {
          seen[q] = stamp;
          stack.push_back(q);
        }
      bool found = false;
      while (!stack.empty() && !found) {
        uint32_t w = stack.back();
        stack.pop_back();
        for (uint32_t a : g.row(w)) {
          if (a == p)
            found = true;
          if (a > p && seen[a] != stamp) {
            seen[a] = stamp;
            stack.push_back(a);
          }
        }
      }
      kept[e] = !found;
    }
  return kept;
}

void crossCheck(const CSR &g) {
  DeclaredRedundancy fast = findRedundantDependencies(g);
  REQUIRE(fast.complete);
  CHECK(fast.work <= defaultRedundancyBudget(g));
  std::vector<uint8_t> slow = slowKept(g);
  REQUIRE(fast.kept.size() == slow.size());
  size_t differ = 0;
  for (size_t e = 0; e < slow.size(); ++e)
    differ += fast.kept[e] != slow[e];
  CHECK(differ == 0);
}

} // namespace

TEST_CASE("redundant dependencies match a backward search on local random graphs") {
  PIPEC_SEEDED(rng, 7);
  for (uint32_t n : {1000u, 10000u, 100000u})
    for (uint32_t window : {4u, 16u, 64u}) {
      CAPTURE(n);
      CAPTURE(window);
      crossCheck(randomGraph(rng, n, window, 3, 0));
    }
}

TEST_CASE("redundant dependencies match a backward search with long edges") {
  PIPEC_SEEDED(rng, 11);
  for (int round = 0; round < 200; ++round) {
    uint32_t n = 1 + rng() % 300;
    CAPTURE(round);
    crossCheck(randomGraph(rng, n, 1 + rng() % 20, 1 + rng() % 6, (rng() % 4) * 0.25));
  }
  crossCheck(randomGraph(rng, 10000, 16, 3, 0.01));
  crossCheck(randomGraph(rng, 3000, 16, 5, 0.2));
}

TEST_CASE("redundancy: out of budget, every edge is kept and it says so") {
  PIPEC_SEEDED(rng, 3);
  CSR g = randomGraph(rng, 2000, 16, 3, 0);
  DeclaredRedundancy r = findRedundantDependencies(g, 100);
  CHECK_FALSE(r.complete);
  CHECK(std::count(r.kept.begin(), r.kept.end(), 1) == long(g.edges()));
}

TEST_CASE("redundancy: a wide fan-in over a long chain stays within budget") {
  // k sources, a hub on all of them, a chain of m after the hub, a sink on
  // the chain's tail and every source: every source edge of the sink is
  // redundant, and the clocks along the chain carry the k sources.
  const uint32_t k = 300, m = 300;
  CSR g;
  for (uint32_t s = 0; s < k; ++s)
    g.begin.push_back(g.targets.size());
  for (uint32_t s = 0; s < k; ++s)
    g.targets.push_back(s);
  g.begin.push_back(g.targets.size()); // hub = k
  for (uint32_t i = 0; i < m; ++i) {
    g.targets.push_back(k + i);
    g.begin.push_back(g.targets.size());
  }
  for (uint32_t s = 0; s < k; ++s)
    g.targets.push_back(s);
  g.targets.push_back(k + m);
  g.begin.push_back(g.targets.size()); // sink
  crossCheck(g);
}

TEST_CASE("the lint reports the same redundant dependencies at every size") {
  // Flat files as generators write them; the count the lint announces
  // (shown plus "N more") must equal the slow count.
  PIPEC_SEEDED(rng, 5);
  for (uint32_t n : {1000u, 6000u, 20000u}) {
    CAPTURE(n);
    CSR g = randomGraph(rng, n, 16, 3, 0.002);
    std::string text = "pipeline flat {\n  stream s;\n";
    for (uint32_t v = 0; v < n; ++v) {
      text += "  stage S" + std::to_string(v) + " on s kernel 1us";
      std::set<uint32_t> deps(g.row(v).begin(), g.row(v).end());
      if (!deps.empty()) {
        text += " depends_on(";
        bool first = true;
        for (uint32_t p : deps) {
          text += (first ? "S" : ", S") + std::to_string(p);
          first = false;
        }
        text += ")";
      }
      text += ";\n";
    }
    text += "}\n";
    test::FrontendRun run(text);
    REQUIRE(run.errors == 0);
    REQUIRE(run.program.pipelines.size() == 1);
    const program::Pipeline &p = run.program.pipelines[0];
    DiagnosticEngine diags([&](const Diagnostic &d) {
      run.all.push_back({d.severity, 0, 0, d.message});
    });
    size_t before = run.all.size();
    StageGraph graph(p, issueOrder(p));
    lintRedundantDependencies(p, graph, diags);

    // The slow count, on the deduplicated graph the file declares.
    CSR dedup;
    for (uint32_t v = 0; v < n; ++v) {
      std::set<uint32_t> deps(g.row(v).begin(), g.row(v).end());
      dedup.targets.insert(dedup.targets.end(), deps.begin(), deps.end());
      dedup.begin.push_back(dedup.targets.size());
    }
    std::vector<uint8_t> slow = slowKept(dedup);
    size_t expected = std::count(slow.begin(), slow.end(), 0);
    size_t shown = 0, more = 0;
    for (size_t i = before; i < run.all.size(); ++i) {
      const std::string &m = run.all[i].message;
      if (m.rfind("redundant dependency on", 0) == 0)
        ++shown;
      else if (m.find("more redundant dependencies") != std::string::npos)
        more = std::stoul(m);
      else
        FAIL("unexpected diagnostic: " << m);
    }
    CHECK(shown == std::min<size_t>(expected, 10));
    CHECK(shown + more == expected);
    CHECK(expected > 0);
  }
}
