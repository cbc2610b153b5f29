//===- MakespanAssignment.cpp - Streams chosen by what they cost ----------===//
//
// The default assignment of stages declared without `on` (docs/scheduling.md
// §6): candidates are list scheduling in issue order, round-robin by index,
// Taskflow's levels and Nimble's matching; with an evaluator (the device
// model) each is run, a local search moves the stages that stream order
// holds back, and the fastest wins, fewer cross-stream edges breaking ties.
// The waits of the winner are then the fewest for it, as for any
// assignment: the reduction and event planning do not change.
//
//===----------------------------------------------------------------------===//

#include "compiler/schedule/StreamAssignment.h"

#include <algorithm>
#include <cmath>

using namespace pipec;

AssignmentEvaluator::~AssignmentEvaluator() = default;

const char *pipec::spelling(AssignMethod method) {
  switch (method) {
  case AssignMethod::Makespan:
    return "makespan";
  case AssignMethod::Matching:
    return "matching";
  case AssignMethod::RoundRobin:
    return "round-robin";
  case AssignMethod::Levels:
    return "levels";
  }
  return "makespan";
}

bool pipec::parseAssignMethod(llvm::StringRef text, AssignMethod &out) {
  for (AssignMethod m : {AssignMethod::Makespan, AssignMethod::Matching,
                         AssignMethod::RoundRobin, AssignMethod::Levels})
    if (text == spelling(m)) {
      out = m;
      return true;
    }
  return false;
}

namespace {

constexpr uint32_t kNone = UINT32_MAX;

/// One assignment of the unpinned stages: an automatic stream each.
struct Candidate {
  Candidate(const char *name, std::vector<uint32_t> autoStream)
      : name(name), autoStream(std::move(autoStream)) {}
  const char *name;
  std::vector<uint32_t> autoStream; ///< per unpinned stage (issue order)
  double makespan = INFINITY;
  uint64_t crossEdges = 0;
  std::vector<double> start, end; ///< the model's trace, per instance
};

class Assigner {
public:
  Assigner(const Instances &inst, const StageGraph &graph, const DeviceProfile &profile,
           const AssignOptions &options)
      : inst(inst), graph(graph), p(profile), options(options), pipeline(inst.pipeline()),
        n(inst.stagesPerIteration()) {
    autoIndex.assign(n, kNone);
    for (uint32_t pos = 0; pos < n; ++pos)
      if (program::unpinned(stageAt(pos))) {
        autoIndex[pos] = static_cast<uint32_t>(autoPos.size());
        autoPos.push_back(pos);
      }
    K = std::max(1u, options.autoStreams);
    D = static_cast<uint32_t>(pipeline.streams.size());
  }

  StreamPlan run() {
    StreamPlan matching = assignStreams(inst, graph, options.maxStreams,
                                        p.priorityFor(program::PriorityClass::Normal));
    if (autoPos.empty())
      return matching;
    std::vector<Candidate> candidates;
    auto add = [&](Candidate c) {
      c.crossEdges = crossEdges(c);
      candidates.push_back(std::move(c));
    };
    switch (options.method) {
    case AssignMethod::Matching:
      matching.method = AssignMethod::Matching;
      return matching;
    case AssignMethod::RoundRobin:
      add(roundRobin());
      break;
    case AssignMethod::Levels:
      add(levels());
      break;
    case AssignMethod::Makespan:
      add(listScheduling());
      if (options.evaluator) {
        add(roundRobin());
        add(levels());
        // The matching as a candidate keeps to this method's K automatic
        // streams (the hardware queues may allow fewer than --max-streams).
        add(fromPlan(matching.streams.size() - D <= K
                         ? matching
                         : assignStreams(inst, graph, declaredUsed() + K,
                                         p.priorityFor(program::PriorityClass::Normal))));
      }
      break;
    }
    uint32_t evaluations = 0;
    size_t best = 0;
    if (options.method == AssignMethod::Makespan && options.evaluator) {
      for (Candidate &c : candidates) {
        evaluate(c);
        ++evaluations;
      }
      for (size_t i = 1; i < candidates.size(); ++i)
        if (better(candidates[i], candidates[best]))
          best = i;
      evaluations += localSearch(candidates[best]);
    }
    StreamPlan plan = planOf(candidates[best]);
    plan.method = options.method;
    plan.evaluations = evaluations;
    plan.modelMakespanUs =
        std::isfinite(candidates[best].makespan) ? candidates[best].makespan : 0;
    plan.chosenFrom = candidates[best].name;
    // The matching's figures, for the report: the syncs an assignment that
    // adds no ordering needs at least.
    plan.matchingChains = matching.matchingChains;
    plan.autoEdges = matching.autoEdges;
    plan.matchingBound = matching.matchingBound;
    return plan;
  }

private:
  /// Declared streams that some stage is on.
  uint32_t declaredUsed() const {
    std::vector<uint8_t> used(D, 0);
    for (const program::Stage &st : pipeline.stages)
      if (st.stream != program::kNoStream)
        used[st.stream] = 1;
    return static_cast<uint32_t>(std::count(used.begin(), used.end(), 1));
  }

  const program::Stage &stageAt(uint32_t pos) const {
    return pipeline.stages[inst.order()[pos]];
  }
  /// The stream of position `pos` under `c`: declared [0, D), automatic
  /// [D, D + K), the host thread (a cpu stage) D + K.
  uint32_t streamOf(const Candidate &c, uint32_t pos) const {
    uint32_t a = autoIndex[pos];
    if (a != kNone)
      return D + c.autoStream[a];
    return onHostThread(stageAt(pos).kind()) ? D + K
                                             : static_cast<uint32_t>(stageAt(pos).stream);
  }

  static bool better(const Candidate &a, const Candidate &b) {
    if (a.makespan < b.makespan - 1e-9)
      return true;
    return a.makespan <= b.makespan + 1e-9 && a.crossEdges < b.crossEdges;
  }

  uint64_t crossEdges(const Candidate &c) const {
    uint64_t cross = 0;
    for (uint32_t v = 0; v < n; ++v)
      for (uint32_t u : graph.reduced.row(v))
        cross += streamOf(c, u) != streamOf(c, v);
    return cross;
  }

  Candidate roundRobin() const {
    Candidate c{"round-robin by index", {}};
    for (uint32_t j = 0; j < autoPos.size(); ++j)
      c.autoStream.push_back(j % K);
    return c;
  }

  Candidate levels() const {
    Candidate c{"levels (Taskflow)", {}};
    std::vector<uint32_t> level(n, 0);
    for (uint32_t v = 0; v < n; ++v)
      for (uint32_t u : graph.deps.row(v))
        level[v] = std::max(level[v], level[u] + 1);
    for (uint32_t pos : autoPos)
      c.autoStream.push_back(level[pos] % K);
    return c;
  }

  Candidate fromPlan(const StreamPlan &plan) const {
    Candidate c{"matching (Nimble)", {}};
    for (uint32_t pos : autoPos) {
      uint32_t stream = plan.streamOfStage[inst.order()[pos]] - D;
      // A plan of more streams than K never reaches pinned(): folded in.
      c.autoStream.push_back(stream % K);
    }
    return c;
  }

  /// Earliest finish time in issue order on a model of streams, copy
  /// engines, the host-function executor and the host issuing the calls.
  Candidate listScheduling() const {
    Candidate c{"list scheduling", std::vector<uint32_t>(autoPos.size(), 0)};
    const uint32_t S = D + K;
    std::vector<double> streamFree(S + 1, 0), finish(n, 0);
    std::vector<uint8_t> streamUsed(S + 1, 0);
    std::vector<uint32_t> streamOfPos(n, 0), lastOn(S + 1, kNone);
    double engineFree[3] = {0, 0, 0}, hostFree = 0, issue = 0;
    uint32_t opened = 0;
    for (uint32_t v = 0; v < n; ++v) {
      const program::Stage &st = stageAt(v);
      if (onHostThread(st.kind())) {
        // The host thread itself: it waits for what the stage depends on,
        // works, and only then issues what follows.
        double start = issue;
        for (uint32_t u : graph.reduced.row(v))
          start = std::max(start, finish[u]);
        finish[v] = start + st.durationUs;
        issue = finish[v];
        streamOfPos[v] = S;
        continue;
      }
      issue += st.issueUs + p.launchUs;
      auto finishOn = [&](uint32_t s, double &start) {
        double ready = issue;
        for (uint32_t u : graph.reduced.row(v))
          ready = std::max(
              ready,
              finish[u] + (streamOfPos[u] != s && streamOfPos[u] != S ? p.waitLatencyUs : 0));
        if (streamUsed[s])
          ready = std::max(ready, streamFree[s] + p.streamGapUs);
        double cost = st.durationUs;
        switch (st.kind()) {
        case StageKind::Copy: // its direction's engine
          ready = std::max(ready, engineFree[engineIndex(st.copy().direction)]);
          cost += p.copyLatencyUs;
          break;
        case StageKind::Host: // the host-function executor
          ready = std::max(ready + p.hostFuncLatencyUs, hostFree);
          break;
        case StageKind::Kernel: // the SMs, not modelled here
        case StageKind::Memset:
        case StageKind::Collective:
        case StageKind::Cpu:
          break;
        }
        start = ready;
        return ready + cost;
      };
      uint32_t chosen;
      double start = 0;
      if (autoIndex[v] == kNone) {
        chosen = static_cast<uint32_t>(st.stream);
        finishOn(chosen, start);
      } else {
        chosen = kNone;
        double bestFinish = INFINITY;
        bool bestFollows = false;
        for (uint32_t t = 0; t < std::min(K, opened + 1); ++t) {
          uint32_t s = D + t;
          double trial;
          double f = finishOn(s, trial);
          bool follows = false; // the stream's last stage is a dependency
          if (lastOn[s] != kNone)
            for (uint32_t u : graph.reduced.row(v))
              follows |= u == lastOn[s];
          if (f < bestFinish - 1e-9 || (f <= bestFinish + 1e-9 && follows && !bestFollows)) {
            bestFinish = f, chosen = s, start = trial, bestFollows = follows;
          }
        }
        opened = std::max(opened, chosen - D + 1);
        c.autoStream[autoIndex[v]] = chosen - D;
      }
      streamOfPos[v] = chosen;
      double end = finishOn(chosen, start);
      for (uint32_t u : graph.reduced.row(v))
        issue += streamOfPos[u] != chosen && streamOfPos[u] != S ? p.waitUs : 0;
      finish[v] = end;
      streamFree[chosen] = end;
      streamUsed[chosen] = 1;
      lastOn[chosen] = v;
      switch (st.kind()) {
      case StageKind::Copy:
        engineFree[engineIndex(st.copy().direction)] = end;
        break;
      case StageKind::Host:
        hostFree = end;
        break;
      case StageKind::Kernel:
      case StageKind::Memset:
      case StageKind::Collective:
      case StageKind::Cpu:
        break;
      }
    }
    return c;
  }

  /// The pipeline with every stage on a stream: the automatic ones named
  /// auto0, auto1, ... in order of first use.
  program::Pipeline pinned(const Candidate &c,
                           std::vector<uint32_t> *renumber = nullptr) const {
    program::Pipeline q = pipeline;
    std::vector<uint32_t> number(K, kNone);
    uint32_t next = 0;
    for (uint32_t a = 0; a < autoPos.size(); ++a)
      if (number[c.autoStream[a]] == kNone)
        number[c.autoStream[a]] = next++;
    for (uint32_t i = 0; i < next; ++i) {
      program::Stream s;
      s.name = "auto" + std::to_string(i);
      s.priorityClass = program::PriorityClass::Normal;
      s.cudaPriority = p.priorityFor(program::PriorityClass::Normal);
      s.isAuto = true;
      q.streams.push_back(std::move(s));
    }
    for (uint32_t a = 0; a < autoPos.size(); ++a)
      q.stages[inst.order()[autoPos[a]]].stream =
          static_cast<int32_t>(D + number[c.autoStream[a]]);
    if (renumber)
      *renumber = std::move(number);
    return q;
  }

  void evaluate(Candidate &c) const {
    c.makespan = options.evaluator->run(pinned(c), c.start, c.end);
  }

  /// First-improvement local search, while the makespan improves: moves
  /// the stages that stream order holds back the most to the stream that
  /// frees up first (or a new one), and stages that wait for a dependency
  /// on another stream onto that stream (a wait and a record fewer for the
  /// host to issue). The number of runs is fixed by the program's size, so
  /// the result does not depend on the machine.
  uint32_t localSearch(Candidate &best) const {
    const size_t instances = inst.size();
    uint32_t budget = static_cast<uint32_t>(
        std::clamp<size_t>(400000 / std::max<size_t>(1, instances), 4, 200));
    uint32_t used = 0;
    while (used < budget) {
      if (best.start.size() != instances)
        break;
      // Per unpinned stage: how long its instances waited for their stream
      // after their dependencies were done.
      std::vector<double> held(autoPos.size(), 0);
      std::vector<uint32_t> previous(D + K + 1, kNone);
      for (uint32_t v = 0; v < instances; ++v) {
        const uint32_t pos = v % n;
        const uint32_t s = streamOf(best, pos);
        double depsDone = 0;
        for (uint32_t u : inst.deps().row(v))
          depsDone = std::max(depsDone, best.end[u]);
        uint32_t before = previous[s];
        previous[s] = v;
        if (autoIndex[pos] == kNone || before == kNone)
          continue;
        if (best.start[v] > depsDone + 1e-9 && best.end[before] > depsDone)
          held[autoIndex[pos]] += best.start[v] - std::max(depsDone, best.start[before]);
      }
      std::vector<uint32_t> order;
      for (uint32_t a = 0; a < held.size(); ++a)
        if (held[a] > 1e-9)
          order.push_back(a);
      std::stable_sort(order.begin(), order.end(),
                       [&](uint32_t x, uint32_t y) { return held[x] > held[y]; });
      if (order.size() > 8)
        order.resize(8);
      std::vector<std::pair<uint32_t, uint32_t>> moves; // (stage, stream)
      for (uint32_t a : order)
        for (uint32_t target : targetsFor(best, a))
          moves.push_back({a, target});
      // Onto a dependency's automatic stream: the stages with the most
      // dependencies on other streams first.
      std::vector<std::pair<uint32_t, uint32_t>> joins;
      std::vector<uint32_t> crossIn(autoPos.size(), 0);
      for (uint32_t a = 0; a < autoPos.size(); ++a)
        for (uint32_t u : graph.reduced.row(autoPos[a]))
          if (autoIndex[u] != kNone && best.autoStream[autoIndex[u]] != best.autoStream[a]) {
            ++crossIn[a];
            joins.push_back({a, best.autoStream[autoIndex[u]]});
          }
      std::stable_sort(joins.begin(), joins.end(),
                       [&](auto x, auto y) { return crossIn[x.first] > crossIn[y.first]; });
      if (joins.size() > 8)
        joins.resize(8);
      moves.insert(moves.end(), joins.begin(), joins.end());
      bool improved = false;
      for (auto [a, target] : moves) {
        if (used >= budget)
          break;
        if (best.autoStream[a] == target)
          continue;
        Candidate trial{"list scheduling and local search", best.autoStream};
        trial.autoStream[a] = target;
        trial.crossEdges = crossEdges(trial);
        evaluate(trial);
        ++used;
        if (better(trial, best)) {
          best = std::move(trial);
          improved = true;
          break;
        }
      }
      if (!improved)
        break;
    }
    return used;
  }

  /// Where to try moving unpinned stage `a`: the automatic stream whose
  /// last instance before the stage's first ends earliest, and a stream of
  /// its own when one is left.
  std::vector<uint32_t> targetsFor(const Candidate &c, uint32_t a) const {
    const uint32_t first = autoPos[a]; // iteration 0's instance
    std::vector<double> freeAt(K, 0);
    std::vector<uint8_t> inUse(K, 0);
    for (uint32_t b = 0; b < autoPos.size(); ++b)
      inUse[c.autoStream[b]] = 1;
    for (uint32_t v = 0; v < first; ++v)
      if (autoIndex[v] != kNone)
        freeAt[c.autoStream[autoIndex[v]]] = c.end.empty() ? 0 : c.end[v];
    std::vector<uint32_t> out;
    uint32_t earliest = kNone;
    for (uint32_t t = 0; t < K; ++t)
      if (inUse[t] && t != c.autoStream[a] &&
          (earliest == kNone || freeAt[t] < freeAt[earliest]))
        earliest = t;
    if (earliest != kNone)
      out.push_back(earliest);
    for (uint32_t t = 0; t < K; ++t)
      if (!inUse[t]) {
        out.push_back(t);
        break;
      }
    return out;
  }

  StreamPlan planOf(const Candidate &c) const {
    std::vector<uint32_t> number;
    program::Pipeline q = pinned(c, &number);
    StreamPlan plan;
    plan.streams = q.streams;
    plan.streamOfStage.assign(n, 0);
    for (uint32_t k = 0; k < q.stages.size(); ++k)
      plan.streamOfStage[k] = onHostThread(q.stages[k].kind())
                                  ? kHostStream
                                  : static_cast<uint32_t>(q.stages[k].stream);
    plan.autoStages = static_cast<uint32_t>(autoPos.size());
    for (uint32_t v = 0; v < n; ++v)
      if (autoIndex[v] != kNone)
        for (uint32_t u : graph.reduced.row(v))
          if (autoIndex[u] != kNone &&
              c.autoStream[autoIndex[u]] != c.autoStream[autoIndex[v]])
            ++plan.crossStreamAutoEdges;
    return plan;
  }

  const Instances &inst;
  const StageGraph &graph;
  const DeviceProfile &p;
  const AssignOptions &options;
  const program::Pipeline &pipeline;
  const uint32_t n;
  std::vector<uint32_t> autoIndex, autoPos;
  uint32_t K = 1, D = 0;
};

} // namespace

StreamPlan pipec::assignStreams(const Instances &instances, const StageGraph &graph,
                                const DeviceProfile &profile, const AssignOptions &options) {
  return Assigner(instances, graph, profile, options).run();
}
