//===- Matching.cpp - Hopcroft-Karp with an explicit stack ----------------===//

#include "compiler/schedule/Matching.h"

#include <limits>

using namespace pipec;

std::vector<uint32_t> pipec::maximumMatching(const CSR &adj, uint32_t numRight) {
  const uint32_t numLeft = static_cast<uint32_t>(adj.rows());
  constexpr uint32_t kInf = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> matchL(numLeft, kUnmatched), matchR(numRight, kUnmatched);

  // A greedy start; Hopcroft-Karp then needs few phases.
  for (uint32_t u = 0; u < numLeft; ++u)
    for (uint32_t v : adj.row(u))
      if (matchR[v] == kUnmatched) {
        matchL[u] = v;
        matchR[v] = u;
        break;
      }

  std::vector<uint32_t> dist(numLeft), queue;
  std::vector<std::pair<uint32_t, uint64_t>> stack; // (left vertex, next edge)
  auto bfs = [&] {
    queue.clear();
    for (uint32_t u = 0; u < numLeft; ++u) {
      dist[u] = matchL[u] == kUnmatched ? 0 : kInf;
      if (dist[u] == 0)
        queue.push_back(u);
    }
    bool found = false;
    for (size_t i = 0; i < queue.size(); ++i) {
      uint32_t u = queue[i];
      for (uint32_t v : adj.row(u)) {
        uint32_t w = matchR[v];
        if (w == kUnmatched)
          found = true;
        else if (dist[w] == kInf) {
          dist[w] = dist[u] + 1;
          queue.push_back(w);
        }
      }
    }
    return found;
  };
  auto augmentFrom = [&](uint32_t root) {
    stack.assign(1, {root, adj.begin[root]});
    while (!stack.empty()) {
      auto &[u, edge] = stack.back();
      if (edge == adj.begin[u + 1]) {
        dist[u] = kInf; // dead end for this phase
        stack.pop_back();
        continue;
      }
      uint32_t v = adj.targets[edge++];
      uint32_t w = matchR[v];
      if (w == kUnmatched) {
        // Flip the path: each frame's left vertex takes the right vertex
        // its last tried edge leads to.
        for (auto &frame : stack) {
          uint32_t right = adj.targets[frame.second - 1];
          matchL[frame.first] = right;
          matchR[right] = frame.first;
        }
        return true;
      }
      if (dist[w] == dist[u] + 1)
        stack.push_back({w, adj.begin[w]});
    }
    return false;
  };
  while (bfs())
    for (uint32_t u = 0; u < numLeft; ++u)
      if (matchL[u] == kUnmatched)
        augmentFrom(u);
  return matchL;
}
