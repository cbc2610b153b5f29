//===- Instances.cpp ------------------------------------------------------===//

#include "compiler/schedule/Instances.h"

#include "compiler/support/Decimal.h"

#include <algorithm>
#include <functional>
#include <queue>

using namespace pipec;

std::vector<uint32_t> pipec::issueOrder(const program::Pipeline &p) {
  // Kahn's algorithm with a min-heap on declaration index; each stage's
  // users in one array (CSR), not a vector each.
  const size_t n = p.stages.size();
  std::vector<uint32_t> waiting(n, 0);
  std::vector<uint32_t> firstUser(n + 1, 0);
  for (uint32_t v = 0; v < n; ++v)
    for (const program::Dependency &d : p.stages[v].deps)
      if (!d.previousIteration()) {
        ++waiting[v];
        ++firstUser[d.stage + 1];
      }
  for (size_t i = 0; i < n; ++i)
    firstUser[i + 1] += firstUser[i];
  std::vector<uint32_t> users(firstUser[n]);
  {
    std::vector<uint32_t> filled(firstUser.begin(), firstUser.end() - 1);
    for (uint32_t v = 0; v < n; ++v)
      for (const program::Dependency &d : p.stages[v].deps)
        if (!d.previousIteration())
          users[filled[d.stage]++] = v;
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
    for (uint32_t k = firstUser[v]; k < firstUser[v + 1]; ++k)
      if (--waiting[users[k]] == 0)
        ready.push(users[k]);
  }
  return order; // sema has rejected cycles, so every stage is here
}

Instances::Instances(const program::Pipeline &pipeline)
    : source(&pipeline),
      perIteration(static_cast<uint32_t>(pipeline.stages.size())),
      stageOrder(issueOrder(pipeline)), positionOf(pipeline.stages.size()) {
  for (uint32_t pos = 0; pos < stageOrder.size(); ++pos)
    positionOf[stageOrder[pos]] = pos;

  // Per position: (distance, position) of each dependency, farthest first,
  // so that each instance's targets come out ascending.
  struct Target {
    uint32_t distance, position;
    int32_t buffer; ///< -1 declared, else inferred from this buffer
  };
  std::vector<std::vector<Target>> targetsOf(perIteration);
  size_t perIterationEdges = 0;
  for (uint32_t pos = 0; pos < perIteration; ++pos) {
    auto &row = targetsOf[pos];
    for (const program::Dependency &d : pipeline.stages[stageOrder[pos]].deps) {
      row.push_back({d.distance, positionOf[d.stage], d.inferredFrom});
      if (d.distance < pipeline.iterations)
        farthest = std::max(farthest, d.distance);
      anyInferred |= d.inferred();
    }
    // Farthest first, then by position: ascending instance ids. A declared
    // edge wins over an inferred one to the same instance.
    std::sort(row.begin(), row.end(), [](const Target &a, const Target &b) {
      if (a.distance != b.distance)
        return a.distance > b.distance;
      return a.position != b.position ? a.position < b.position : a.buffer < b.buffer;
    });
    row.erase(std::unique(row.begin(), row.end(),
                          [](const Target &a, const Target &b) {
                            return a.distance == b.distance && a.position == b.position;
                          }),
              row.end());
    perIterationEdges += row.size();
  }
  const size_t total = size();
  depGraph.begin.reserve(total + 1);
  depGraph.targets.reserve(perIterationEdges * pipeline.iterations);
  for (uint32_t it = 0; it < pipeline.iterations; ++it) {
    uint64_t base = uint64_t(it) * perIteration;
    for (uint32_t pos = 0; pos < perIteration; ++pos) {
      // `@prev(k)` refers to nothing in iterations 0 .. k-1.
      for (const Target &t : targetsOf[pos])
        if (t.distance <= it) {
          depGraph.targets.push_back(static_cast<uint32_t>(
              base - uint64_t(t.distance) * perIteration + t.position));
          if (anyInferred)
            edgeBuffer.push_back(t.buffer);
        }
      depGraph.begin.push_back(depGraph.targets.size());
    }
  }
}

void Instances::writeName(llvm::raw_ostream &os, uint32_t id) const {
  os << stage(id).name;
  if (source->iterations != 1)
    os << '[' << Decimal(iterationOf(id)) << ']';
}

std::string Instances::name(uint32_t id) const {
  const std::string &base = stage(id).name;
  if (source->iterations == 1)
    return base;
  return base + "[" + std::to_string(iterationOf(id)) + "]";
}
