//===- Instances.cpp ------------------------------------------------------===//

#include "compiler/schedule/Instances.h"

#include <algorithm>
#include <functional>
#include <queue>

using namespace pipec;

std::vector<uint32_t> pipec::issueOrder(const program::Pipeline &p) {
  // Kahn's algorithm with a min-heap on declaration index.
  const size_t n = p.stages.size();
  std::vector<uint32_t> waiting(n, 0);
  std::vector<std::vector<uint32_t>> users(n);
  for (uint32_t v = 0; v < n; ++v)
    for (const program::Dependency &d : p.stages[v].deps)
      if (!d.previousIteration) {
        ++waiting[v];
        users[d.stage].push_back(v);
      }
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
  for (uint32_t v = 0; v < n; ++v)
    if (waiting[v] == 0)
      ready.push(v);
  std::vector<uint32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    uint32_t v = ready.top();
    ready.pop();
    order.push_back(v);
    for (uint32_t w : users[v])
      if (--waiting[w] == 0)
        ready.push(w);
  }
  return order; // sema has rejected cycles, so every stage is here
}

Instances::Instances(const program::Pipeline &pipeline)
    : source(&pipeline),
      perIteration(static_cast<uint32_t>(pipeline.stages.size())),
      stageOrder(issueOrder(pipeline)), positionOf(pipeline.stages.size()) {
  for (uint32_t pos = 0; pos < stageOrder.size(); ++pos)
    positionOf[stageOrder[pos]] = pos;

  // Per position: the positions it depends on, same iteration and previous.
  std::vector<std::vector<uint32_t>> same(perIteration), prev(perIteration);
  size_t perIterationEdges = 0;
  for (uint32_t pos = 0; pos < perIteration; ++pos) {
    for (const program::Dependency &d : pipeline.stages[stageOrder[pos]].deps)
      (d.previousIteration ? prev : same)[pos].push_back(positionOf[d.stage]);
    std::sort(same[pos].begin(), same[pos].end());
    std::sort(prev[pos].begin(), prev[pos].end());
    perIterationEdges += same[pos].size() + prev[pos].size();
  }
  const size_t total = size();
  depGraph.begin.reserve(total + 1);
  depGraph.targets.reserve(perIterationEdges * pipeline.iterations);
  for (uint32_t it = 0; it < pipeline.iterations; ++it) {
    uint32_t base = it * perIteration;
    for (uint32_t pos = 0; pos < perIteration; ++pos) {
      // Previous-iteration targets are all smaller than this iteration's.
      if (it > 0)
        for (uint32_t q : prev[pos])
          depGraph.targets.push_back(base - perIteration + q);
      for (uint32_t q : same[pos])
        depGraph.targets.push_back(base + q);
      depGraph.begin.push_back(depGraph.targets.size());
    }
  }
}

std::string Instances::name(uint32_t id) const {
  const std::string &base = stage(id).name;
  if (source->iterations == 1)
    return base;
  return base + "[" + std::to_string(iterationOf(id)) + "]";
}
