//===- Cycles.cpp - Tarjan's SCC, iteratively, then a shortest cycle ------===//

#include "compiler/sema/Cycles.h"

#include <algorithm>
#include <deque>
#include <limits>

using namespace pipec::sema;

static constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();

/// Component id for every vertex (Tarjan's algorithm with an explicit stack).
static std::vector<uint32_t> components(const std::vector<std::vector<uint32_t>> &g) {
  const uint32_t n = static_cast<uint32_t>(g.size());
  std::vector<uint32_t> index(n, kNone), low(n, 0), comp(n, kNone);
  std::vector<uint32_t> stack;
  std::vector<bool> onStack(n, false);
  std::vector<std::pair<uint32_t, size_t>> work; // (vertex, next edge)
  uint32_t counter = 0, numComponents = 0;
  for (uint32_t root = 0; root < n; ++root) {
    if (index[root] != kNone)
      continue;
    work.push_back({root, 0});
    index[root] = low[root] = counter++;
    stack.push_back(root);
    onStack[root] = true;
    while (!work.empty()) {
      auto &[v, edge] = work.back();
      if (edge < g[v].size()) {
        uint32_t w = g[v][edge++];
        if (index[w] == kNone) {
          index[w] = low[w] = counter++;
          stack.push_back(w);
          onStack[w] = true;
          work.push_back({w, 0});
        } else if (onStack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      uint32_t done = v;
      work.pop_back();
      if (!work.empty())
        low[work.back().first] = std::min(low[work.back().first], low[done]);
      if (low[done] == index[done]) {
        uint32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          onStack[w] = false;
          comp[w] = numComponents;
        } while (w != done);
        ++numComponents;
      }
    }
  }
  return comp;
}

std::vector<std::vector<uint32_t>>
pipec::sema::findCycles(const std::vector<std::vector<uint32_t>> &g) {
  const uint32_t n = static_cast<uint32_t>(g.size());
  std::vector<uint32_t> comp = components(g);
  std::vector<uint32_t> size(n, 0), smallest(n, kNone);
  for (uint32_t v = 0; v < n; ++v) {
    ++size[comp[v]];
    smallest[comp[v]] = std::min(smallest[comp[v]], v);
  }
  std::vector<std::vector<uint32_t>> cycles;
  std::vector<uint32_t> parent(n, kNone);
  for (uint32_t c = 0; c < n; ++c) {
    if (size[c] < 2)
      continue;
    // Breadth-first from s inside the component until an edge returns to s.
    uint32_t s = smallest[c];
    std::deque<uint32_t> queue{s};
    std::vector<uint32_t> touched{s};
    parent[s] = s;
    uint32_t last = kNone;
    while (!queue.empty() && last == kNone) {
      uint32_t v = queue.front();
      queue.pop_front();
      for (uint32_t w : g[v]) {
        if (comp[w] != c)
          continue;
        if (w == s) {
          last = v;
          break;
        }
        if (parent[w] == kNone) {
          parent[w] = v;
          touched.push_back(w);
          queue.push_back(w);
        }
      }
    }
    std::vector<uint32_t> cycle;
    for (uint32_t v = last; v != s; v = parent[v])
      cycle.push_back(v);
    cycle.push_back(s);
    std::reverse(cycle.begin(), cycle.end());
    cycles.push_back(std::move(cycle));
    for (uint32_t v : touched)
      parent[v] = kNone;
  }
  return cycles;
}
