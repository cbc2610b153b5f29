//===- StreamAssignment.cpp -----------------------------------------------===//

#include "compiler/schedule/StreamAssignment.h"

#include "compiler/schedule/Matching.h"
#include "compiler/schedule/Reduction.h"
#include "compiler/schedule/Redundancy.h"

#include <algorithm>

using namespace pipec;

StageGraph::StageGraph(const program::Pipeline &p, llvm::ArrayRef<uint32_t> issue)
    : order(issue.begin(), issue.end()) {
  const uint32_t n = static_cast<uint32_t>(order.size());
  std::vector<uint32_t> positionOf(n);
  for (uint32_t pos = 0; pos < n; ++pos)
    positionOf[order[pos]] = pos;
  for (uint32_t pos = 0; pos < n; ++pos) {
    std::vector<uint32_t> row;
    for (const program::Dependency &d : p.stages[order[pos]].deps)
      if (!d.previousIteration())
        row.push_back(positionOf[d.stage]);
    std::sort(row.begin(), row.end());
    deps.targets.insert(deps.targets.end(), row.begin(), row.end());
    deps.begin.push_back(deps.targets.size());
  }

  // Which declared dependencies the others imply: exact at any size. A
  // stage that skips iterations implies nothing through itself (B -> C -> A
  // gives B[i] no A[i] when C[i] did not run, C's latest being earlier): it
  // is split in two, the stage its dependents name, with no dependencies,
  // and the stage that depends, which none names. The edges keep their
  // order, so the result is parallel to `deps` as it is.
  bool conditional = false;
  for (uint32_t stage : order)
    conditional |= !p.stages[stage].runs.always();
  CSR split;
  if (conditional) {
    std::vector<uint32_t> named(n); // position -> the vertex dependents name
    uint32_t next = 0;
    for (uint32_t pos = 0; pos < n; ++pos) {
      named[pos] = next++;
      if (!p.stages[order[pos]].runs.always()) {
        split.begin.push_back(split.targets.size()); // the named half: no edges
        ++next;                                      // the depending half follows
      }
      for (uint32_t target : deps.row(pos))
        split.targets.push_back(named[target]);
      split.begin.push_back(split.targets.size());
    }
  }
  DeclaredRedundancy redundancy = findRedundantDependencies(conditional ? split : deps);
  declaredKept = std::move(redundancy.kept);
  reductionExact = redundancy.complete;
  reduced.begin.assign(1, 0);
  for (uint32_t v = 0; v < n; ++v) {
    for (uint64_t e = deps.begin[v]; e < deps.begin[v + 1]; ++e)
      if (declaredKept[e])
        reduced.targets.push_back(deps.targets[e]);
    reduced.begin.push_back(reduced.targets.size());
  }
}

ReachIndex::ReachIndex(const StageGraph &graph) : graph(graph) {
  const uint32_t n = static_cast<uint32_t>(graph.order.size());
  const CSR &reduced = graph.reduced;
  // A chain cover and vector clocks over it. Chains
  // are chosen greedily: a stage extends a chain whose last stage is already
  // one of its ancestors, else it starts a chain. A clock row only spans the
  // chains that existed when its stage was seen (later chains hold no
  // ancestor of it), so memory follows the width of the graph, not the
  // number of stages times the number of chains.
  constexpr uint32_t kNone = UINT32_MAX;
  chainOf.assign(n, 0);
  rowBegin.assign(1, 0);
  clocks.clear();
  std::vector<uint32_t> tailOf, acc;
  for (uint32_t v = 0; v < n; ++v) {
    const uint32_t width = static_cast<uint32_t>(tailOf.size());
    acc.assign(width + 1, 0);
    for (uint32_t p : reduced.row(v)) {
      const uint32_t *row = &clocks[rowBegin[p]];
      const uint32_t rowWidth = static_cast<uint32_t>(rowBegin[p + 1] - rowBegin[p]);
      for (uint32_t k = 0; k < rowWidth; ++k)
        acc[k] = std::max(acc[k], row[k]);
    }
    // Extend the chain whose tail is the latest ancestor, if any.
    uint32_t chosen = kNone;
    for (uint32_t c = 0; c < width; ++c)
      if (acc[c] != 0 && acc[c] == positionOf1[tailOf[c]] &&
          (chosen == kNone || tailOf[c] > tailOf[chosen]))
        chosen = c;
    if (chosen == kNone) {
      chosen = width;
      tailOf.push_back(v);
      chainLength.push_back(0);
    } else {
      tailOf[chosen] = v;
    }
    chainOf[v] = chosen;
    positionOf1.push_back(++chainLength[chosen]);
    const uint32_t rowWidth = static_cast<uint32_t>(tailOf.size());
    acc.resize(rowWidth, 0);
    acc[chosen] = positionOf1[v];
    if (clocks.size() + rowWidth > kMaxClockCells) {
      // Too wide to index cheaply: answer reachability by direct edges only.
      indexed = false;
      clocks = {};
      rowBegin = {};
      return;
    }
    clocks.insert(clocks.end(), acc.begin(), acc.end());
    rowBegin.push_back(clocks.size());
  }
}

bool ReachIndex::reaches(uint32_t u, uint32_t v) const {
  if (u >= v)
    return false;
  if (!indexed) {
    llvm::ArrayRef<uint32_t> preds = graph.deps.row(v);
    return std::binary_search(preds.begin(), preds.end(), u);
  }
  uint32_t c = chainOf[u];
  uint64_t width = rowBegin[v + 1] - rowBegin[v];
  return c < width && clocks[rowBegin[v] + c] >= positionOf1[u];
}

StreamPlan pipec::assignStreams(const Instances &inst, const StageGraph &graph,
                                unsigned maxStreams, int normalPriority) {
  const program::Pipeline &p = inst.pipeline();
  const uint32_t n = inst.stagesPerIteration();
  StreamPlan plan;
  plan.streams = p.streams;
  plan.streamOfStage.assign(n, 0);

  // Unpinned stages, by position; index among them.
  std::vector<uint32_t> autoIndex(n, UINT32_MAX), autoPos;
  for (uint32_t pos = 0; pos < n; ++pos) {
    const program::Stage &s = p.stages[inst.order()[pos]];
    if (program::unpinned(s)) {
      autoIndex[pos] = static_cast<uint32_t>(autoPos.size());
      autoPos.push_back(pos);
    } else {
      plan.streamOfStage[inst.order()[pos]] =
          onHostThread(s.kind()) ? kHostStream : static_cast<uint32_t>(s.stream);
    }
  }
  plan.autoStages = static_cast<uint32_t>(autoPos.size());
  if (autoPos.empty())
    return plan;

  // Bipartite graph over the reduced edges between unpinned stages.
  const uint32_t m = plan.autoStages;
  std::vector<std::vector<uint32_t>> succ(m);
  for (uint32_t v = 0; v < n; ++v)
    if (autoIndex[v] != UINT32_MAX)
      for (uint32_t u : graph.reduced.row(v))
        if (autoIndex[u] != UINT32_MAX) {
          succ[autoIndex[u]].push_back(autoIndex[v]);
          ++plan.autoEdges;
        }
  CSR adjacency;
  for (uint32_t u = 0; u < m; ++u) {
    adjacency.targets.insert(adjacency.targets.end(), succ[u].begin(), succ[u].end());
    adjacency.begin.push_back(adjacency.targets.size());
  }
  std::vector<uint32_t> next = maximumMatching(adjacency, m);
  std::vector<uint8_t> hasPrev(m, 0);
  uint64_t matched = 0;
  for (uint32_t u = 0; u < m; ++u)
    if (next[u] != kUnmatched) {
      hasPrev[next[u]] = 1;
      ++matched;
    }
  plan.matchingBound = plan.autoEdges - matched;

  // Earliest finish of each position within one iteration (dependencies
  // only): the guess of which stream frees up first.
  std::vector<double> finish(n, 0);
  for (uint32_t v = 0; v < n; ++v) {
    double start = 0;
    for (uint32_t u : graph.deps.row(v))
      start = std::max(start, finish[u]);
    finish[v] = start + p.stages[inst.order()[v]].durationUs;
  }

  // Chains in order of their heads; fold each onto an ordered stream.
  uint32_t declaredUsed = 0;
  {
    std::vector<uint8_t> used(p.streams.size(), 0);
    for (const program::Stage &s : p.stages)
      if (s.stream != program::kNoStream)
        used[s.stream] = 1;
    for (uint8_t u : used)
      declaredUsed += u;
  }
  const uint32_t cap =
      std::max<uint32_t>(1, maxStreams > declaredUsed ? maxStreams - declaredUsed : 1);
  const ReachIndex index(graph);
  std::vector<uint32_t> tailPos; // per automatic stream: its last position
  std::vector<uint32_t> streamOfAuto(m);
  for (uint32_t head = 0; head < m; ++head) {
    if (hasPrev[head])
      continue;
    ++plan.matchingChains;
    const uint32_t headPos = autoPos[head];
    uint32_t best = UINT32_MAX;
    for (uint32_t s = 0; s < tailPos.size(); ++s)
      if (index.reaches(tailPos[s], headPos) &&
          (best == UINT32_MAX || tailPos[s] > tailPos[best]))
        best = s;
    if (best == UINT32_MAX && tailPos.size() < cap) {
      best = static_cast<uint32_t>(tailPos.size());
      tailPos.push_back(headPos);
    }
    if (best == UINT32_MAX) {
      for (uint32_t s = 0; s < tailPos.size(); ++s)
        if (best == UINT32_MAX || finish[tailPos[s]] < finish[tailPos[best]])
          best = s;
      ++plan.forcedOrderings;
    }
    for (uint32_t a = head; a != kUnmatched; a = next[a]) {
      streamOfAuto[a] = best;
      tailPos[best] = std::max(tailPos[best], autoPos[a]);
    }
  }

  const uint32_t firstAuto = static_cast<uint32_t>(plan.streams.size());
  for (uint32_t s = 0; s < tailPos.size(); ++s) {
    program::Stream stream;
    stream.name = "auto" + std::to_string(s);
    stream.priorityClass = program::PriorityClass::Normal;
    stream.cudaPriority = normalPriority;
    stream.isAuto = true;
    plan.streams.push_back(std::move(stream));
  }
  for (uint32_t a = 0; a < m; ++a)
    plan.streamOfStage[inst.order()[autoPos[a]]] = firstAuto + streamOfAuto[a];
  for (uint32_t v = 0; v < n; ++v)
    if (autoIndex[v] != UINT32_MAX)
      for (uint32_t u : graph.reduced.row(v))
        if (autoIndex[u] != UINT32_MAX &&
            streamOfAuto[autoIndex[u]] != streamOfAuto[autoIndex[v]])
          ++plan.crossStreamAutoEdges;
  return plan;
}
