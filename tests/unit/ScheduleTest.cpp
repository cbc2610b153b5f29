// The scheduling core against slow, obvious implementations: transitive
// closure with bitsets, and exhaustive search for the fewest waits.

#include "FrontendHelpers.h"
#include "RandomPrograms.h"
#include "SlowReduction.h"

#include "compiler/schedule/GraphShapes.h"
#include "compiler/schedule/Schedule.h"
#include "model/GraphCost.h"
#include "model/SimBackend.h"
#include "runtime/Backend.h"

#include <doctest/doctest.h>

#include "Seed.h"

#include <map>
#include <ostream>
#include <random>
#include <set>
#include <sstream>

using namespace pipec;
using pipec::test::FrontendRun;

namespace {

using test::ancestors;
using test::Bits;
using test::Edge;
using test::randomProgram;
using test::slowReduction;

/// The graph of dependencies and stream order, by brute force.
std::set<Edge> dependenciesAndStreamOrder(const Schedule &s) {
  std::set<Edge> h;
  const size_t n = s.instances.size();
  std::map<uint32_t, uint32_t> lastOnStream;
  for (uint32_t v = 0; v < n; ++v) {
    for (uint32_t u : s.instances.deps().row(v))
      h.insert({u, v});
    auto it = lastOnStream.find(s.streamOf(v));
    if (it != lastOnStream.end())
      h.insert({it->second, v});
    lastOnStream[s.streamOf(v)] = v;
  }
  return h;
}

/// Everything a correct stream lowering must satisfy, checked from its ops.
void checkStreamLowering(const Schedule &s) {
  const size_t n = s.instances.size();
  std::set<Edge> h = dependenciesAndStreamOrder(s);
  std::set<Edge> reduced = slowReduction(n, h);

  // 1. The kept edges are exactly the reduction.
  std::set<Edge> kept;
  for (uint32_t v = 0; v < n; ++v)
    for (uint32_t u : s.reduction.kept.row(v))
      kept.insert({u, v});
  CHECK(kept == reduced);

  // 2. Replay the ops as CUDA would: a wait binds to its event's latest
  //    record, which covers its stream's work up to then.
  std::map<uint32_t, uint32_t> lastOnStream, eventCovers;
  std::set<Edge> enforced, waited;
  std::vector<Edge> pending;
  std::set<uint32_t> producers;
  std::map<uint32_t, size_t> recordAt, lastWaitAt;
  std::set<uint32_t> crossThread;
  uint64_t records = 0, waits = 0;
  for (size_t i = 0; i < s.ops.size(); ++i) {
    const Op &op = s.ops[i];
    switch (op.kind) {
    case Op::Record: {
      ++records;
      REQUIRE(lastOnStream.count(op.stream));
      uint32_t last = lastOnStream[op.stream];
      CHECK(last == op.instance); // recorded right after its producer
      CHECK(producers.insert(op.instance).second);
      eventCovers[op.event] = last;
      recordAt[op.instance] = i;
      break;
    }
    case Op::Wait: {
      ++waits;
      REQUIRE(eventCovers.count(op.event));
      CHECK(eventCovers[op.event] == op.instance); // binds to the right record
      pending.push_back({eventCovers[op.event], op.stream});
      lastWaitAt[op.instance] = i;
      // A wait issued by another device's host thread keeps its event
      // from reuse: the threads keep no common order.
      if (s.streamPlan.streams.at(op.stream).device !=
          s.streamPlan.streams.at(s.streamOf(op.instance)).device)
        crossThread.insert(op.instance);
      break;
    }
    case Op::Launch: {
      uint32_t v = op.instance;
      CHECK(op.stream == s.streamOf(v));
      auto it = lastOnStream.find(op.stream);
      if (it != lastOnStream.end())
        enforced.insert({it->second, v});
      for (auto [producer, stream] : pending) {
        CHECK(stream == op.stream);
        enforced.insert({producer, v});
        waited.insert({producer, v});
      }
      pending.clear();
      lastOnStream[op.stream] = v;
      break;
    }
    case Op::Cpu:
    case Op::Sync:
    case Op::GraphLaunch:
    case Op::Join:
      FAIL("no host-thread op in a program without cpu stages");
      break;
    }
  }
  CHECK(records == s.records);
  CHECK(waits == s.waits);

  // 3. Every dependency holds and none is added: same closure as h.
  std::vector<Bits> want = ancestors(n, h), got = ancestors(n, enforced);
  for (size_t v = 0; v < n; ++v)
    CHECK(want[v] == got[v]);

  // 4. Exactly one wait per cross-stream edge of the reduction.
  std::set<Edge> crossReduced;
  for (auto [u, v] : reduced)
    if (s.streamOf(u) != s.streamOf(v))
      crossReduced.insert({u, v});
  CHECK(waited == crossReduced);
  CHECK(waits == crossReduced.size());

  // 5. Event objects: each recorded on one device's streams only (CUDA
  //    records an event on its own device), and per device as many as
  //    records alive at once there, no more; one waited for by another
  //    device's host thread stays alive.
  auto deviceOf = [&](uint32_t stream) { return s.streamPlan.streams.at(stream).device; };
  std::map<uint32_t, uint32_t> deviceOfEvent;
  std::map<uint32_t, std::vector<std::pair<size_t, int>>> changes; // per device
  for (const Op &op : s.ops)
    if (op.kind == Op::Record) {
      auto [it, first] = deviceOfEvent.try_emplace(op.event, deviceOf(op.stream));
      CHECK(it->second == deviceOf(op.stream));
    }
  for (auto [producer, at] : recordAt) {
    const uint32_t device = deviceOf(s.streamOf(producer));
    changes[device].push_back({at, +1});
    if (!crossThread.count(producer))
      changes[device].push_back({lastWaitAt[producer], -1});
  }
  uint32_t objects = 0;
  for (auto &[device, list] : changes) {
    std::sort(list.begin(), list.end());
    int alive = 0, most = 0;
    for (auto [at, delta] : list) {
      alive += delta;
      most = std::max(most, alive);
    }
    objects += static_cast<uint32_t>(most);
  }
  CHECK(s.eventObjects == objects);
}

/// The fewest waits, by trying every subset of cross-stream edges.
size_t exhaustiveFewestWaits(const Schedule &s) {
  const size_t n = s.instances.size();
  std::set<Edge> h = dependenciesAndStreamOrder(s);
  std::vector<Bits> want = ancestors(n, h);
  std::set<Edge> streamOrder;
  std::vector<Edge> cross;
  for (auto [u, v] : h)
    (s.streamOf(u) == s.streamOf(v) ? streamOrder.insert({u, v}),
     void()                         : cross.push_back({u, v}));
  size_t best = cross.size();
  for (uint32_t mask = 0; mask < (1u << cross.size()); ++mask) {
    size_t size = __builtin_popcount(mask);
    if (size >= best)
      continue;
    std::set<Edge> g = streamOrder;
    for (size_t i = 0; i < cross.size(); ++i)
      if (mask >> i & 1)
        g.insert(cross[i]);
    std::vector<Bits> got = ancestors(n, g);
    if (got == want)
      best = size;
  }
  return best;
}

Schedule compile(const FrontendRun &run, LoweringChoice lowering = LoweringChoice::Streams,
                 AssignMethod assign = AssignMethod::Makespan,
                 const AssignmentEvaluator *evaluator = nullptr) {
  ScheduleOptions options;
  options.lowering = lowering;
  options.assign = assign;
  options.assignEvaluator = evaluator;
  return Schedule(run.program.pipelines.at(0), DeviceProfile(), options);
}

} // namespace

TEST_CASE("schedule: the seed sample") {
  FrontendRun run(R"(pipeline infer {
  stream copy    priority low;
  stream compute priority high;
  stream post;
  stage H2D    on copy    copy h2d 12us;
  stage Kernel on compute kernel 40us   depends_on(H2D);
  stage D2H    on copy    copy d2h 10us depends_on(Kernel);
  stage Post   on post    host 8us      depends_on(D2H);
})");
  REQUIRE(run.errors == 0);
  Schedule s = compile(run);
  CHECK(s.analysis.sequentialUs == doctest::Approx(70));
  CHECK(s.analysis.streamBoundUs == doctest::Approx(40));
  CHECK(s.analysis.criticalPathUs == doctest::Approx(70));
  CHECK(s.waits == 3);
  CHECK(s.records == 3);
  CHECK(s.eventObjects == 1);
  CHECK(s.analysis.crossStreamDependencies == 3);
  checkStreamLowering(s);
}

TEST_CASE("schedule: issue order prefers declaration order") {
  FrontendRun run("pipeline p { stage C kernel 1us depends_on(B);"
                  " stage A kernel 1us; stage B kernel 1us; }");
  REQUIRE(run.errors == 0);
  Instances inst(run.program.pipelines[0]);
  CHECK(inst.name(0) == "A");
  CHECK(inst.name(1) == "B");
  CHECK(inst.name(2) == "C");
}

TEST_CASE("schedule: a dependency implied by stream order needs no wait") {
  FrontendRun run("pipeline p { stream a; stream b;"
                  " stage A on a kernel 1us; stage B on a kernel 1us;"
                  " stage C on b kernel 1us depends_on(A, B); }");
  REQUIRE(run.errors == 0);
  Schedule s = compile(run);
  CHECK(s.waits == 1); // on B only: A is before B on stream a
  CHECK(s.analysis.redundantDependencies == 1);
  checkStreamLowering(s);
}

TEST_CASE("schedule: randomized against the slow reduction (streams pinned)") {
  PIPEC_SEEDED(rng, 11);
  for (int round = 0; round < 1500; ++round) {
    FrontendRun run(randomProgram(rng, /*allowAuto=*/false));
    REQUIRE(run.errors == 0);
    Schedule s = compile(run);
    checkStreamLowering(s);
  }
}

TEST_CASE("schedule: randomized over several devices, against the slow reduction") {
  // Streams on 2 to 4 devices: the fewest waits as on one (a dependency
  // across devices is a wait on the producer's event), every ordering
  // enforced, each event object recorded on one device's streams.
  PIPEC_SEEDED(rng, 41);
  size_t crossDevice = 0, collectives = 0;
  for (int round = 0; round < 1500; ++round) {
    const std::string text = randomProgram(rng, /*allowAuto=*/false,
                                           /*conditional=*/round % 3 == 0, 2 + rng() % 3);
    INFO(text);
    FrontendRun run(text);
    REQUIRE(run.errors == 0);
    Schedule s = compile(run);
    checkStreamLowering(s);
    const program::Pipeline &p = s.pipeline;
    auto deviceOf = [&](uint32_t v) { return s.streamPlan.streams[s.streamOf(v)].device; };
    for (const Op &op : s.ops) {
      if (op.kind != Op::Wait)
        continue;
      const uint32_t waiter = s.streamPlan.streams[op.stream].device;
      crossDevice += waiter != deviceOf(op.instance);
      // A wait on a collective's part is on the waiter's device's part,
      // where the collective has one there.
      const program::Stage &st = s.instances.stage(op.instance);
      if (program::collectiveParts(st) < 2)
        continue;
      bool partHere = false;
      for (uint32_t k = 0; k < st.collective().parts; ++k)
        partHere |=
            uint32_t(
                s.streamPlan.streams[p.stages[st.collective().group + k].stream].device) ==
            waiter;
      if (partHere)
        CHECK(deviceOf(op.instance) == waiter);
    }
    // A collective's parts are issued one after another.
    for (size_t i = 0; i + 1 < s.ops.size(); ++i) {
      const Op &op = s.ops[i];
      if (op.kind != Op::Launch)
        continue;
      const program::Stage &st = s.instances.stage(op.instance);
      if (program::collectiveParts(st) < 2 ||
          s.instances.stageOf(op.instance) + 1 ==
              st.collective().group + st.collective().parts)
        continue;
      ++collectives;
      size_t j = i + 1;
      while (j < s.ops.size() && s.ops[j].kind != Op::Launch)
        ++j;
      REQUIRE(j < s.ops.size());
      CHECK(s.ops[j].instance == op.instance + 1);
      CHECK(s.instances.stageOf(s.ops[j].instance) == s.instances.stageOf(op.instance) + 1);
    }
  }
  CHECK(crossDevice > 500);
  CHECK(collectives > 200);
}

TEST_CASE("schedule: the timeline of several devices, against a slow relaxation") {
  // Every instance as early as its dependencies and stream order allow; a
  // collective's parts of one iteration all start when the last of them
  // can, and end together. Relaxed until nothing moves, then each device's
  // busy time (the union of its work) and communication compared.
  PIPEC_SEEDED(rng, 43);
  size_t coupled = 0;
  for (int round = 0; round < 800; ++round) {
    const std::string text = randomProgram(rng, /*allowAuto=*/false,
                                           /*conditional=*/round % 3 == 0, 2 + rng() % 3);
    INFO(text);
    FrontendRun run(text);
    REQUIRE(run.errors == 0);
    Schedule s = compile(run);
    const size_t n = s.instances.size();
    std::vector<std::vector<uint32_t>> preds(n);
    for (auto [u, v] : dependenciesAndStreamOrder(s))
      preds[v].push_back(u);
    std::vector<double> finish(n, 0);
    for (bool moved = true; moved;) {
      moved = false;
      for (uint32_t v = 0; v < n; ++v) {
        const program::Stage &st = s.instances.stage(v);
        // The instances this one ends with: its collective's parts.
        std::vector<uint32_t> group = {v};
        if (program::collectiveParts(st) > 1) {
          group.clear();
          for (uint32_t w = 0; w < n; ++w)
            if (s.instances.iterationOf(w) == s.instances.iterationOf(v) &&
                program::isCollective(s.instances.stage(w)) &&
                s.instances.stage(w).collective().group == st.collective().group &&
                program::isCollective(s.instances.stage(w)))
              group.push_back(w);
          coupled += group.size() == st.collective().parts;
        }
        double start = 0;
        for (uint32_t w : group)
          for (uint32_t u : preds[w])
            start = std::max(start, finish[u]);
        if (start + st.durationUs > finish[v] + 1e-9) {
          finish[v] = start + st.durationUs;
          moved = true;
        }
      }
    }
    double end = 0;
    for (double f : finish)
      end = std::max(end, f);
    CHECK(s.analysis.criticalPathUs == doctest::Approx(end));
    for (size_t d = 0; d < s.pipeline.devices.size(); ++d) {
      // Busy and communication time by sampling the union at every edge.
      std::vector<std::pair<double, double>> work, comm, other;
      for (uint32_t v = 0; v < n; ++v) {
        const program::Stage &st = s.instances.stage(v);
        if (s.streamPlan.streams[s.streamOf(v)].device != d || st.durationUs <= 0)
          continue;
        work.push_back({finish[v] - st.durationUs, finish[v]});
        if (program::isCollective(st) || isPeerCopy(st))
          comm.push_back({finish[v] - st.durationUs, finish[v]});
        else
          other.push_back({finish[v] - st.durationUs, finish[v]});
      }
      std::vector<double> cuts;
      for (auto [a, b] : work)
        cuts.push_back(a), cuts.push_back(b);
      std::sort(cuts.begin(), cuts.end());
      double busy = 0, talk = 0, hidden = 0;
      for (size_t i = 1; i < cuts.size(); ++i) {
        const double mid = (cuts[i - 1] + cuts[i]) / 2, width = cuts[i] - cuts[i - 1];
        auto covers = [&](const std::vector<std::pair<double, double>> &spans) {
          for (auto [a, b] : spans)
            if (a < mid && mid < b)
              return true;
          return false;
        };
        busy += covers(work) ? width : 0;
        talk += covers(comm) ? width : 0;
        hidden += covers(comm) && covers(other) ? width : 0;
      }
      CHECK(s.analysis.devices[d].busyUs == doctest::Approx(busy));
      CHECK(s.analysis.devices[d].commUs == doctest::Approx(talk));
      CHECK(s.analysis.devices[d].hiddenCommUs == doctest::Approx(hidden));
    }
  }
  CHECK(coupled > 100);
}

TEST_CASE("schedule: randomized with automatic streams") {
  PIPEC_SEEDED(rng, 12);
  for (int round = 0; round < 1500; ++round) {
    FrontendRun run(randomProgram(rng, /*allowAuto=*/true));
    REQUIRE(run.errors == 0);
    // Every method's schedule is correct and minimal for its assignment.
    for (AssignMethod m : {AssignMethod::Makespan, AssignMethod::Matching,
                           AssignMethod::RoundRobin, AssignMethod::Levels}) {
      Schedule s = compile(run, LoweringChoice::Streams, m);
      checkStreamLowering(s);
      const StreamPlan &p = s.streamPlan;
      // The matching adds no ordering, so it needs at least its bound.
      if (m == AssignMethod::Matching)
        CHECK(p.crossStreamAutoEdges >= p.matchingBound);
      // --max-streams (8) caps the streams in use, declared and automatic.
      std::set<uint32_t> inUse(p.streamOfStage.begin(), p.streamOfStage.end());
      CHECK(inUse.size() <= 8);
    }
  }
}

TEST_CASE("schedule: the matching adds no ordering when under the cap") {
  PIPEC_SEEDED(rng, 13);
  for (int round = 0; round < 800; ++round) {
    // All stages unpinned, one iteration: stream order must be implied by
    // the dependencies themselves.
    uint32_t t = 1 + rng() % 10;
    std::string text = "pipeline r {\n";
    for (uint32_t i = 0; i < t; ++i) {
      text += "  stage X" + std::to_string(i) + " kernel 1us";
      std::string deps;
      for (uint32_t j = 0; j < i; ++j)
        if (rng() % 3 == 0)
          deps += (deps.empty() ? "" : ", ") + ("X" + std::to_string(j));
      if (!deps.empty())
        text += " depends_on(" + deps + ")";
      text += ";\n";
    }
    FrontendRun run(text + "}\n");
    REQUIRE(run.errors == 0);
    Schedule s = compile(run, LoweringChoice::Streams, AssignMethod::Matching);
    if (s.streamPlan.forcedOrderings != 0)
      continue;
    std::set<Edge> depsOnly;
    for (uint32_t v = 0; v < s.instances.size(); ++v)
      for (uint32_t u : s.instances.deps().row(v))
        depsOnly.insert({u, v});
    CHECK(ancestors(t, dependenciesAndStreamOrder(s)) == ancestors(t, depsOnly));
    // Chains of the matching need no event inside them: waits are at
    // least the matching bound, and every wait is a reduced edge.
    CHECK(s.waits >= s.streamPlan.matchingBound);
  }
}

TEST_CASE("schedule: exhaustive search finds no fewer waits") {
  PIPEC_SEEDED(rng, 14);
  int tried = 0;
  for (int round = 0; round < 3000 && tried < 400; ++round) {
    FrontendRun run(randomProgram(rng, /*allowAuto=*/false));
    REQUIRE(run.errors == 0);
    Schedule s = compile(run);
    std::set<Edge> h = dependenciesAndStreamOrder(s);
    size_t cross = 0;
    for (auto [u, v] : h)
      cross += s.streamOf(u) != s.streamOf(v);
    if (cross > 12)
      continue;
    ++tried;
    CHECK(s.waits == exhaustiveFewestWaits(s));
  }
  CHECK(tried >= 100);
}

TEST_CASE("schedule: stages that skip iterations, against the slow reduction") {
  // A dependency on a stage that skips the iteration it names is on its
  // latest instance before: the instances' edges against that rule, slowly,
  // then everything the stream lowering must satisfy.
  PIPEC_SEEDED(rng, 17);
  size_t conditional = 0, far = 0;
  for (int round = 0; round < 1500; ++round) {
    FrontendRun run(randomProgram(rng, /*allowAuto=*/round % 2 == 1, /*conditional=*/true));
    REQUIRE(run.errors == 0);
    Schedule s = compile(run);
    const Instances &inst = s.instances;
    const program::Pipeline &p = s.pipeline;
    conditional += inst.hasConditionalStages();
    // Instances: exactly those of the stages that run, in issue order.
    std::vector<std::pair<uint32_t, uint32_t>> want, got; // (iteration, stage)
    for (uint32_t it = 0; it < p.iterations; ++it)
      for (uint32_t stage : inst.order())
        if (p.stages[stage].runs.runsIn(it, p.iterations))
          want.push_back({it, stage});
    for (uint32_t v = 0; v < inst.size(); ++v) {
      got.push_back({inst.iterationOf(v), inst.stageOf(v)});
      CHECK(inst.idOf(inst.stageOf(v), inst.iterationOf(v)) == v);
    }
    REQUIRE(got == want);
    // Each dependency: the latest instance of its stage at or before the
    // iteration it names, found by scanning back.
    size_t reach = 0;
    std::map<uint32_t, uint32_t> lastOnStream;
    for (uint32_t v = 0; v < inst.size(); ++v) {
      std::set<uint32_t> expected;
      for (const program::Dependency &d : inst.stage(v).deps)
        for (int64_t t = int64_t(inst.iterationOf(v)) - d.distance; t >= 0; --t)
          if (p.stages[d.stage].runs.runsIn(uint32_t(t), p.iterations)) {
            expected.insert(inst.idOf(d.stage, uint32_t(t)));
            break;
          }
      llvm::ArrayRef<uint32_t> row = inst.deps().row(v);
      CHECK(std::set<uint32_t>(row.begin(), row.end()) == expected);
      CHECK(std::is_sorted(row.begin(), row.end()));
      CHECK(row.size() == expected.size());
      for (uint32_t u : row)
        reach = std::max<size_t>(reach, v - u);
      auto it = lastOnStream.find(s.streamOf(v));
      if (it != lastOnStream.end())
        reach = std::max<size_t>(reach, v - it->second);
      lastOnStream[s.streamOf(v)] = v;
    }
    CHECK(reach <= inst.reach());
    far += reach > inst.stagesPerIteration();
    // A dependency the stage graph calls redundant (the lint's claim) is
    // implied, in every instance, by the instance's other dependencies.
    StageGraph graph(p, inst.order());
    for (uint32_t pos = 0; pos < graph.order.size(); ++pos) {
      const uint32_t stage = graph.order[pos];
      for (uint64_t e = graph.deps.begin[pos]; e < graph.deps.begin[pos + 1]; ++e) {
        if (graph.declaredKept[e])
          continue;
        const uint32_t target = graph.order[graph.deps.targets[e]];
        for (uint32_t v = 0; v < inst.size(); ++v) {
          if (inst.stageOf(v) != stage)
            continue;
          int64_t t = inst.iterationOf(v);
          while (t >= 0 && !p.stages[target].runs.runsIn(uint32_t(t), p.iterations))
            --t;
          if (t < 0)
            continue;
          const uint32_t u = inst.idOf(target, uint32_t(t));
          // Reachable from v's other dependencies?
          std::set<uint32_t> seen;
          std::vector<uint32_t> todo;
          for (uint32_t w : inst.deps().row(v))
            if (w != u)
              todo.push_back(w);
          bool found = false;
          while (!todo.empty() && !found) {
            uint32_t w = todo.back();
            todo.pop_back();
            if (!seen.insert(w).second)
              continue;
            found = w == u;
            for (uint32_t x : inst.deps().row(w))
              todo.push_back(x);
          }
          CHECK(found);
        }
      }
    }
    checkStreamLowering(s);
    // The graph lowering too: its edges are the reduction.
    Schedule g = compile(run, LoweringChoice::Graph);
    auto edges = g.graphEdges();
    CHECK(std::set<Edge>(edges.begin(), edges.end()) ==
          slowReduction(g.instances.size(), dependenciesAndStreamOrder(g)));
  }
  CHECK(conditional > 700);
  CHECK(far > 100);
}

TEST_CASE("schedule: the graph lowering's edges are the reduction") {
  PIPEC_SEEDED(rng, 15);
  for (int round = 0; round < 500; ++round) {
    FrontendRun run(randomProgram(rng, /*allowAuto=*/true));
    REQUIRE(run.errors == 0);
    Schedule s = compile(run, LoweringChoice::Graph);
    CHECK(s.ops.empty());
    CHECK(s.waits == 0);
    std::set<Edge> h = dependenciesAndStreamOrder(s);
    std::set<Edge> reduced = slowReduction(s.instances.size(), h);
    auto edges = s.graphEdges();
    CHECK(std::set<Edge>(edges.begin(), edges.end()) == reduced);
    CHECK(std::is_sorted(edges.begin(), edges.end()));
  }
}

TEST_CASE("schedule: issue order is the smallest ready stage first, as a slow search finds") {
  // Random DAGs declared in a shuffled order, with @prev edges (which do
  // not order stages within an iteration) to anything.
  PIPEC_SEEDED(rng, 2026);
  for (int round = 0; round < 300; ++round) {
    const uint32_t n = 1 + rng() % 60;
    std::vector<uint32_t> rank(n);
    for (uint32_t i = 0; i < n; ++i)
      rank[i] = i;
    std::shuffle(rank.begin(), rank.end(), rng);
    program::Pipeline p;
    p.stages.resize(n);
    for (uint32_t v = 0; v < n; ++v)
      for (uint32_t u = 0; u < n; ++u) {
        if (rank[u] < rank[v] && rng() % 4 == 0)
          p.stages[v].deps.push_back({u, 0, {}, -1});
        else if (rng() % 16 == 0)
          p.stages[v].deps.push_back({u, 1, {}, -1});
      }
    // The obvious way: n times, scan for the first unplaced stage whose
    // same-iteration dependencies are all placed.
    std::vector<uint32_t> slow;
    std::vector<bool> placed(n, false);
    while (slow.size() < n) {
      for (uint32_t v = 0; v < n; ++v) {
        if (placed[v])
          continue;
        bool ready = true;
        for (const program::Dependency &d : p.stages[v].deps)
          ready = ready && (d.distance != 0 || placed[d.stage]);
        if (ready) {
          placed[v] = true;
          slow.push_back(v);
          break;
        }
      }
    }
    CHECK(issueOrder(p) == slow);
  }
}

TEST_CASE("schedule: a large schedule's analysis and graph verdict, made on two threads, "
          "equal those made one after another") {
  // Past kParallelFrom instances the analysis runs beside the event plan
  // and the verdict's two lowerings beside each other: the same figures.
  std::string text = "pipeline big {\n  iterations " + std::to_string(kParallelFrom / 3 + 3) +
                     ";\n  stream a; stream b;\n  buffer h 1MB host;\n"
                     "  stage A on a kernel 3us [blocks=264];\n"
                     "  stage B on b kernel 2us depends_on(A);\n"
                     "  stage C cpu 1us [every=7] writes(h);\n"
                     "  stage D on a copy h2d 1KB reads(h) depends_on(B@prev);\n}\n";
  FrontendRun run(text);
  REQUIRE(run.errors == 0);
  DeviceProfile profile;
  runtime::SimGraphCost cost(profile);
  ScheduleOptions options;
  options.graphCost = &cost;
  Schedule s(run.program.pipelines.at(0), profile, options);
  REQUIRE(s.instances.size() >= kParallelFrom);
  Analysis again = analyzeSchedule(s, profile);
  CHECK(again.criticalPath == s.analysis.criticalPath);
  CHECK(again.criticalPathUs == s.analysis.criticalPathUs);
  CHECK(again.lowerBoundUs == s.analysis.lowerBoundUs);
  CHECK(again.sequentialUs == s.analysis.sequentialUs);
  CHECK(again.eventDensity == s.analysis.eventDensity);
  CHECK(again.crossStreamDependencies == s.analysis.crossStreamDependencies);
  CHECK(again.redundantDependencies == s.analysis.redundantDependencies);
  REQUIRE(again.bounds.size() == s.analysis.bounds.size());
  for (size_t i = 0; i < again.bounds.size(); ++i)
    CHECK(again.bounds[i].us == s.analysis.bounds[i].us);
  // The verdict, one lowering after the other.
  auto model = runtime::makeSimBackend(profile);
  runtime::RunOptions o;
  o.replays = options.replays;
  o.recordHost = false;
  o.extrapolate = true;
  o.timeline = false;
  auto streams = model->run(s, Lowering::Streams, o);
  auto graph = model->run(s, Lowering::Graph, o);
  REQUIRE(static_cast<bool>(streams));
  REQUIRE(static_cast<bool>(graph));
  GraphAdvice one = runtime::compareLowerings(*streams, *graph, options.replays);
  const GraphAdvice &two = s.analysis.graphAdvice;
  CHECK(two.evaluated);
  CHECK(one.streamsReplayUs == two.streamsReplayUs);
  CHECK(one.graphReplayUs == two.graphReplayUs);
  CHECK(one.oneTimeUs == two.oneTimeUs);
  CHECK(one.breakEvenReplays == two.breakEvenReplays);
  CHECK(one.suitable == two.suitable);
}

TEST_CASE("schedule: segments are one graph exactly when they map node for node, edge for "
          "edge") {
  // sameGraphAs (a hash of each segment's shape) against the obvious: two
  // segments are one graph when their nodes, in order, have the same stages
  // and ring slots, the same record nodes after them, and every edge within
  // one and every wait into it has its image in the other.
  PIPEC_SEEDED(rng, 581);
  size_t shared = 0, compared = 0;
  for (int round = 0; round < 300; ++round) {
    const std::string t = test::randomData(rng, rng() % 2, /*host=*/true);
    CAPTURE(t);
    test::FrontendRun front(t);
    if (front.errors)
      continue;
    DeviceProfile profile;
    Schedule s(front.program.pipelines.at(0), profile, ScheduleOptions());
    uint32_t distinct = 0;
    const std::vector<uint32_t> same = sameGraphAs(s, distinct);
    const uint32_t segments = std::max(1u, s.segments);
    REQUIRE(same.size() == segments);
    std::vector<std::vector<uint32_t>> nodes(segments);
    for (uint32_t v = 0; v < s.instances.size(); ++v)
      if (s.segmentOf[v] != kNoSegment)
        nodes[s.segmentOf[v]].push_back(v);
    uint32_t events = 0;
    const std::vector<uint32_t> eventOf = s.graphEventOf(events);
    std::set<std::pair<uint32_t, uint32_t>> edges, waits;
    for (auto e : s.graphEdges())
      edges.insert(e);
    if (s.graphWaits().rows())
      for (uint32_t v = 0; v < s.instances.size(); ++v)
        for (uint32_t u : s.graphWaits().row(v))
          waits.insert({u, v});
    auto sameGraph = [&](uint32_t g, uint32_t h) {
      if (nodes[g].size() != nodes[h].size())
        return false;
      std::map<uint32_t, uint32_t> image; // g's node -> h's, and the segments before
      for (size_t i = 0; i < nodes[g].size(); ++i)
        image[nodes[g][i]] = nodes[h][i];
      auto placeIn = [&](uint32_t seg, uint32_t u) -> int64_t {
        auto it = std::find(nodes[seg].begin(), nodes[seg].end(), u);
        return it == nodes[seg].end() ? -1 : it - nodes[seg].begin();
      };
      for (size_t i = 0; i < nodes[g].size(); ++i) {
        const uint32_t a = nodes[g][i], b = nodes[h][i];
        if (s.instances.stageOf(a) != s.instances.stageOf(b) ||
            (eventOf[a] != UINT32_MAX) != (eventOf[b] != UINT32_MAX))
          return false;
        for (const program::Access &x : s.instances.stage(a).accesses) {
          const uint32_t slots = s.pipeline.buffers[x.buffer].slots;
          if (x.slot(s.instances.iterationOf(a), slots) !=
              x.slot(s.instances.iterationOf(b), slots))
            return false;
        }
        size_t inA = 0, inB = 0, waitA = 0, waitB = 0;
        for (auto [u, v] : edges) {
          inA += v == a, inB += v == b;
          if (v == a && !edges.count({image[u], b}))
            return false;
        }
        for (auto [u, v] : waits) {
          waitA += v == a, waitB += v == b;
          if (v != a)
            continue;
          const uint32_t back = g - s.segmentOf[u];
          if (back > h)
            return false;
          const int64_t at = placeIn(s.segmentOf[u], u);
          const uint32_t there = h - back;
          if (at < 0 || size_t(at) >= nodes[there].size() ||
              !waits.count({nodes[there][at], b}))
            return false;
        }
        if (inA != inB || waitA != waitB)
          return false;
      }
      return true;
    };
    for (uint32_t h = 0; h < segments; ++h) {
      uint32_t first = h;
      for (uint32_t g = 0; g < h && first == h; ++g)
        if (sameGraph(g, h) && sameGraph(h, g))
          first = g;
      CHECK(same[h] == first);
      ++compared;
      shared += first != h;
    }
  }
  MESSAGE(compared << " segments compared, " << shared << " the same graph as an earlier one");
  CHECK(shared > 0);
}
