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
  // A collective's parts are issued together (in one NCCL group), when the
  // last of them is ready: its first part stands for them in the heap.
  std::vector<uint32_t> partsLeft;
  auto groupOf = [&](uint32_t v) {
    const program::Stage &st = p.stages[v];
    return program::collectiveParts(st) > 1 ? st.collective().group : v;
  };
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
  auto nowReady = [&](uint32_t v) {
    uint32_t g = groupOf(v);
    if (g == v && program::collectiveParts(p.stages[v]) <= 1) {
      ready.push(v);
      return;
    }
    if (partsLeft.empty())
      partsLeft.assign(n, 0);
    if (++partsLeft[g] == p.stages[g].collective().parts)
      ready.push(g);
  };
  for (uint32_t v = 0; v < n; ++v)
    if (waiting[v] == 0)
      nowReady(v);
  std::vector<uint32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    uint32_t g = ready.top();
    ready.pop();
    const program::Stage &st = p.stages[g];
    uint32_t parts = program::collectiveParts(st) > 1 ? st.collective().parts : 1;
    for (uint32_t v = g; v < g + parts; ++v)
      order.push_back(v);
    for (uint32_t v = g; v < g + parts; ++v)
      for (uint32_t k = firstUser[v]; k < firstUser[v + 1]; ++k)
        if (--waiting[users[k]] == 0)
          nowReady(users[k]);
  }
  return order; // sema has rejected cycles, so every stage is here
}

Instances::Instances(const program::Pipeline &pipeline)
    : source(&pipeline), perIteration(static_cast<uint32_t>(pipeline.stages.size())),
      stageOrder(issueOrder(pipeline)), positionOf(pipeline.stages.size()) {
  for (uint32_t pos = 0; pos < stageOrder.size(); ++pos)
    positionOf[stageOrder[pos]] = pos;

  // Per position: (distance, position) of each dependency, farthest first,
  // so that each instance's targets come out ascending.
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
  for (const program::Stage &st : pipeline.stages)
    conditional |= !st.runs.always();
  if (conditional) {
    unrollConditional(targetsOf);
    return;
  }
  // Every predecessor lies within k + 1 iterations' worth of instances, for
  // the farthest @prev(k) (and the previous instance on a stream, or the
  // last cpu stage before it, within one iteration's worth).
  reachBound = (std::max<size_t>(1, farthest) + 1) * size_t(perIteration);
  const size_t total = size();
  depGraph.begin.reserve(total + 1);
  depGraph.targets.reserve(perIterationEdges * pipeline.iterations);
  for (uint32_t it = 0; it < pipeline.iterations; ++it) {
    uint64_t base = uint64_t(it) * perIteration;
    for (uint32_t pos = 0; pos < perIteration; ++pos) {
      // `@prev(k)` refers to nothing in iterations 0 .. k-1.
      for (const Target &t : targetsOf[pos])
        if (t.distance <= it) {
          depGraph.targets.push_back(
              static_cast<uint32_t>(base - uint64_t(t.distance) * perIteration + t.position));
          if (anyInferred)
            edgeBuffer.push_back(t.buffer);
        }
      depGraph.begin.push_back(depGraph.targets.size());
    }
  }
}

void Instances::unrollConditional(const std::vector<std::vector<Target>> &targetsOf) {
  const program::Pipeline &p = *source;
  const uint32_t iterations = p.iterations;
  const size_t stages = p.stages.size();
  runIds.assign(stages, {});
  runIterations.assign(stages, {});
  uint32_t spacing = 1;
  for (const program::Stage &st : p.stages)
    spacing = std::max(spacing, st.runs.spacing(iterations));
  // The latest instance of `stage` in iteration `t` or before, among those
  // made so far; -1: none.
  auto latest = [&](uint32_t stage, int64_t t) -> int64_t {
    if (t < 0)
      return -1;
    const std::vector<uint32_t> &ids = runIds[stage];
    if (p.stages[stage].runs.always())
      return int64_t(ids[size_t(t)]);
    const std::vector<uint32_t> &its = runIterations[stage];
    size_t i = std::upper_bound(its.begin(), its.end(), uint32_t(t)) - its.begin();
    return i == 0 ? -1 : int64_t(ids[i - 1]);
  };
  std::vector<std::pair<uint32_t, int32_t>> row; // (target, buffer)
  size_t depReach = 0;
  std::vector<size_t> iterationStart;
  iterationStart.reserve(iterations + 1);
  for (uint32_t it = 0; it < iterations; ++it) {
    iterationStart.push_back(idStage.size());
    for (uint32_t pos = 0; pos < perIteration; ++pos) {
      const uint32_t stage = stageOrder[pos];
      if (!runsIn(stage, it))
        continue;
      const uint32_t id = static_cast<uint32_t>(idStage.size());
      row.clear();
      for (const Target &t : targetsOf[pos]) {
        int64_t u = latest(stageOrder[t.position], int64_t(it) - int64_t(t.distance));
        if (u >= 0)
          row.push_back({static_cast<uint32_t>(u), t.buffer});
      }
      // Two dependencies may name one instance (A and A@prev both meaning
      // A's one run): ascending, once, a declared edge first.
      std::sort(row.begin(), row.end());
      row.erase(std::unique(row.begin(), row.end(),
                            [](const auto &a, const auto &b) { return a.first == b.first; }),
                row.end());
      for (auto [u, buffer] : row) {
        depGraph.targets.push_back(u);
        if (anyInferred)
          edgeBuffer.push_back(buffer);
        depReach = std::max<size_t>(depReach, id - u);
      }
      depGraph.begin.push_back(depGraph.targets.size());
      idStage.push_back(stage);
      idIteration.push_back(it);
      runIds[stage].push_back(id);
      if (!p.stages[stage].runs.always())
        runIterations[stage].push_back(it);
    }
  }
  iterationStart.push_back(idStage.size());
  // Stream order and the host thread reach back over at most `spacing`
  // iterations (between two runs of a stage, or to the stage's first).
  size_t chainReach = 0;
  for (uint32_t it = 0; it < iterations; ++it)
    chainReach = std::max(
        chainReach, iterationStart[std::min<size_t>(iterations, size_t(it) + spacing + 1)] -
                        iterationStart[it]);
  reachBound = std::max({depReach, chainReach, size_t(1)});
}

uint32_t Instances::idOf(uint32_t stage, uint32_t iteration) const {
  if (!conditional)
    return iteration * perIteration + positionOf[stage];
  if (source->stages[stage].runs.always())
    return runIds[stage][iteration];
  const std::vector<uint32_t> &its = runIterations[stage];
  return runIds[stage]
               [size_t(std::lower_bound(its.begin(), its.end(), iteration) - its.begin())];
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
