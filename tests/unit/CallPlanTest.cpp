// The CUDA call plan (compiler/lower/CallPlan.h) that the CUDA backend
// executes and the emitter prints: its calls are the schedule's ops, each
// made on its stream's device and after what it needs; its graph nodes and
// replay calls are the graph lowering's; its places are the buffers a stage
// declares, in the iteration's slot.

#include "FrontendHelpers.h"
#include "RandomPrograms.h"
#include "SlowHappensBefore.h"

#include "compiler/emit/Emitters.h"
#include "compiler/lower/CallPlan.h"
#include "model/DeviceModel.h"

#include "llvm/Support/raw_ostream.h"

#include <doctest/doctest.h>

#include "Seed.h"

#include <algorithm>
#include <random>
#include <tuple>
#include <vector>

using namespace pipec;
using lower::Call;
using pipec::test::FrontendRun;

namespace {

std::vector<Call> streamCalls(const Schedule &s) {
  std::vector<Call> calls;
  lower::forEachStreamCall(s, [&](const Call &c) {
    calls.push_back(c);
    return true;
  });
  return calls;
}

/// What an op or a call does, to compare the two.
using Doing = std::tuple<int, uint32_t, uint32_t, uint32_t>;
Call::Kind kindOf(Op::Kind kind) {
  switch (kind) {
  case Op::Launch:
    return Call::Launch;
  case Op::Record:
    return Call::Record;
  case Op::Wait:
    return Call::Wait;
  case Op::Sync:
    return Call::Sync;
  case Op::Cpu:
    return Call::Cpu;
  case Op::Join:
    return Call::Join;
  case Op::GraphLaunch:
    return Call::GraphLaunch;
  }
  return Call::GraphLaunch;
}

/// Everything the stream calls must be, checked against the schedule's ops.
void checkStreamCalls(const Schedule &s, size_t &groups, size_t &dispatches) {
  const std::vector<Call> calls = streamCalls(s);
  const bool several = s.pipeline.deviceCount() > 1;
  std::vector<uint8_t> launched(s.instances.size(), 0);
  int64_t current = -1;
  bool inGroup = false;
  std::vector<Doing> fromOps, records, fromOpsRecords;
  for (const Op &op : s.ops) {
    if (op.kind == Op::GraphLaunch)
      continue;
    // A join's event is the token it awaits: none with one issuing thread.
    Doing d{kindOf(op.kind), op.stream, op.instance,
            op.kind == Op::Launch ? 0
            : op.kind == Op::Join ? lower::kNoToken
                                  : op.event};
    (op.kind == Op::Record ? fromOpsRecords : fromOps).push_back(d);
  }
  std::vector<Doing> others;
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call &c = calls[i];
    if (c.stream != kHostStream && several)
      CHECK(s.streamPlan.streams[c.stream].device == current);
    switch (c.kind) {
    case Call::SetDevice:
      CHECK(several);
      CHECK(int64_t(c.device) != current);
      current = c.device;
      continue;
    case Call::Dispatch:
      ++dispatches;
      CHECK(s.instances.stage(c.instance).issueUs > 0);
      REQUIRE(i + 1 < calls.size());
      CHECK(calls[i + 1].kind == Call::Launch);
      CHECK(calls[i + 1].instance == c.instance);
      continue;
    case Call::GroupStart:
      CHECK(!inGroup);
      inGroup = true;
      ++groups;
      continue;
    case Call::GroupEnd:
      CHECK(inGroup);
      inGroup = false;
      continue;
    case Call::Launch:
      CHECK(c.work == lower::cudaWorkOf(s.instances.stage(c.instance)));
      CHECK(c.work != lower::Work::HostThread);
      CHECK(inGroup == (c.work == lower::Work::Collective));
      if (s.instances.stage(c.instance).issueUs > 0)
        CHECK((i > 0 && calls[i - 1].kind == Call::Dispatch));
      launched[c.instance] = 1;
      others.push_back({c.kind, c.stream, c.instance, 0});
      continue;
    case Call::Record:
      // Never inside a group (NCCL enqueues its parts at the end), and
      // after its producer's launch.
      CHECK(!inGroup);
      if (!s.onHost(c.instance))
        CHECK(launched[c.instance]);
      records.push_back({c.kind, c.stream, c.instance, c.event});
      continue;
    case Call::Wait:
    case Call::Sync:
    case Call::Cpu:
    case Call::Join:
      others.push_back({c.kind, c.stream, c.instance, c.event});
      continue;
    case Call::GraphLaunch:
    case Call::RecordedLaunch:
      FAIL("a graph launch among the stream calls");
      continue;
    case Call::Post:
    case Call::Await:
      FAIL("a post or await with one issuing thread");
    }
  }
  CHECK(!inGroup);
  // Every op is one call, in the ops' order; only records move (past a
  // group's end), keeping their own order.
  CHECK(others == fromOps);
  CHECK(records == fromOpsRecords);
}

} // namespace

TEST_CASE("call plan: the stream calls are the schedule's ops, each on its device") {
  PIPEC_SEEDED(rng, 4242);
  size_t groups = 0, dispatches = 0, programs = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const std::string text = trial % 3 == 0   ? test::randomDeviceData(rng, /*declared=*/true)
                             : trial % 3 == 1 ? test::randomHostThreads(rng)
                                              : test::randomWorkload(rng, /*hostThread=*/true);
    INFO(text);
    FrontendRun run(text);
    if (run.errors)
      continue;
    ++programs;
    Schedule s(run.program.pipelines.at(0), DeviceProfile(), ScheduleOptions());
    checkStreamCalls(s, groups, dispatches);
  }
  // The generators reach what the plan reorders and adds.
  CHECK(programs > 400);
  CHECK(groups > 50);
  CHECK(dispatches > 50);
}

TEST_CASE("call plan: the graph's nodes, events and replay calls") {
  PIPEC_SEEDED(rng, 4243);
  size_t waits = 0, syncs = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const std::string text = trial % 2 ? test::randomWorkload(rng, /*hostThread=*/true)
                                       : test::randomData(rng, /*declared=*/true,
                                                          /*host=*/true);
    INFO(text);
    FrontendRun run(text);
    if (run.errors)
      continue;
    ScheduleOptions options;
    options.lowering = LoweringChoice::Graph;
    Schedule s(run.program.pipelines.at(0), DeviceProfile(), options);
    const lower::GraphPlan plan(s);
    std::vector<uint32_t> nodes;
    plan.forEachNode([&](const lower::Node &node) {
      const uint32_t v = node.instance;
      CHECK(!s.onHost(v));
      CHECK(node.segment == s.segmentOf[v]);
      CHECK(node.work == lower::cudaWorkOf(s.instances.stage(v)));
      for (uint32_t u : node.after) // edges within its segment's graph
        CHECK((!s.onHost(u) && s.segmentOf[u] == node.segment && u < v));
      for (uint32_t u : node.waitFor) { // an earlier segment's event
        ++waits;
        CHECK(s.segmentOf[u] < node.segment);
        CHECK(plan.eventOf[u] != lower::kNoRecord);
      }
      CHECK(node.record == plan.eventOf[v]);
      CHECK((node.record == lower::kNoRecord || node.record < plan.events));
      nodes.push_back(v);
      return true;
    });
    std::vector<uint32_t> want, cpu, dynamic;
    for (uint32_t v = 0; v < s.instances.size(); ++v) {
      (s.onHost(v) ? cpu : want).push_back(v);
      if (!s.onHost(v) && s.instances.stage(v).dynamic)
        dynamic.push_back(v);
    }
    CHECK(nodes == want);
    CHECK(plan.nodes == want.size());
    CHECK(plan.dynamic == dynamic);
    CHECK(plan.launchStreams == std::min(std::max(1u, s.segments), kGraphLaunchStreams));
    // A replay launches each segment once, in order, on its launch stream,
    // runs each cpu stage once, and syncs only on recorded events.
    uint32_t segment = 0;
    std::vector<uint32_t> ran;
    plan.forEachReplayCall([&](const Call &c) {
      switch (c.kind) {
      case Call::GraphLaunch:
        CHECK(c.segment == segment++);
        CHECK(c.stream == c.segment % plan.launchStreams);
        break;
      case Call::Sync:
        ++syncs;
        CHECK(plan.eventOf[c.instance] == c.event);
        CHECK(s.segmentOf[c.instance] < segment);
        break;
      case Call::Cpu:
        ran.push_back(c.instance);
        break;
      default:
        FAIL("a replay is launches, syncs and cpu stages");
      }
      return true;
    });
    CHECK(segment == s.segments);
    std::sort(ran.begin(), ran.end());
    CHECK(ran == cpu);
  }
  CHECK(waits > 20);
  CHECK(syncs > 20);
}

TEST_CASE(
    "call plan: recorded graph launches are one graph launch each, every ordering kept") {
  PIPEC_SEEDED(rng, 4244);
  size_t programs = 0, launches = 0, shared = 0, forks = 0, moved = 0;
  for (int trial = 0; trial < 500; ++trial) {
    const std::string text = test::randomRecordedGraphs(rng);
    INFO(text);
    FrontendRun run(text);
    if (run.errors)
      continue;
    ++programs;
    const DeviceProfile profile;
    Schedule s(run.program.pipelines.at(0), profile, ScheduleOptions());
    const lower::RecordedGraphs recorded(s);
    const size_t n = s.instances.size();
    // What each instance runs after, as the calls order it (a set per
    // instance, closed under what it runs after): a stream's tail, an
    // event's record, what the host knows finished, a graph's nodes after
    // the launch stream's tail and their predecessors in the graph.
    using Set = std::vector<uint8_t>;
    auto join = [](Set &into, const Set &from) {
      for (size_t i = 0; i < into.size(); ++i)
        into[i] |= from[i];
    };
    std::vector<Set> before(n, Set(n, 0)), tail(s.streamPlan.streams.size(), Set(n, 0));
    std::vector<Set> event(recorded.events(), Set(n, 0));
    Set host(n, 0);
    std::vector<uint8_t> ran(n, 0);
    size_t graphCalls = 0;
    lower::forEachStreamCall(s, &recorded, [&](const Call &c) {
      switch (c.kind) {
      case Call::Launch:
        CHECK(s.instances.stage(c.instance).graph < 0);
        before[c.instance] = tail[c.stream];
        join(before[c.instance], host);
        tail[c.stream] = before[c.instance];
        tail[c.stream][c.instance] = 1;
        CHECK(!ran[c.instance]);
        ran[c.instance] = 1;
        break;
      case Call::Record:
        event[c.event] = tail[c.stream];
        join(event[c.event], host);
        break;
      case Call::Wait:
        join(tail[c.stream], event[c.event]);
        break;
      case Call::Sync:
        join(host, event[c.event]);
        break;
      case Call::Cpu:
        before[c.instance] = host;
        host[c.instance] = 1;
        CHECK(!ran[c.instance]);
        ran[c.instance] = 1;
        break;
      case Call::RecordedLaunch: {
        ++graphCalls;
        CHECK(c.stream == s.streamOf(c.instance));
        Set base = tail[c.stream], all(n, 0);
        join(base, host);
        join(all, base);
        recorded.forEachNode(c.event, [&](const lower::Node &node) {
          const uint32_t v = node.instance;
          CHECK(node.segment == c.segment);
          CHECK(s.instances.stage(v).graph == s.instances.stage(c.instance).graph);
          CHECK(s.instances.iterationOf(v) == s.instances.iterationOf(c.instance));
          before[v] = base;
          for (uint32_t u : node.after) {
            REQUIRE(ran[u]);
            join(before[v], before[u]);
            before[v][u] = 1;
          }
          join(all, before[v]);
          all[v] = 1;
          CHECK(!ran[v]);
          ran[v] = 1;
          return true;
        });
        tail[c.stream] = all;
        break;
      }
      case Call::Dispatch:
        break;
      default:
        FAIL("a call a one-device stream lowering does not make");
      }
      return true;
    });
    for (uint32_t v = 0; v < n; ++v)
      CHECK(ran[v]);
    // Every ordering of the schedule holds in the lowered calls.
    const auto reach = test::happensBefore(s);
    for (uint32_t u = 0; u < n; ++u)
      for (uint32_t v = 0; v < n; ++v)
        if (reach[u][v])
          CHECK(before[v][u]);
    // One graph launch where the model charges one.
    sim::ModelOptions options;
    options.recordHost = true;
    const sim::ReplayTrace replay = sim::simulate(s, Lowering::Streams, profile, options);
    size_t charged = 0;
    for (const runtime::HostCall &h : replay.host)
      charged += llvm::StringRef(h.what) == "graph launch";
    CHECK(graphCalls == charged);
    CHECK(graphCalls == recorded.launches.size());
    launches += graphCalls;
    shared += recorded.launches.size() - recorded.shapes.size();
    // Without the plan, every node is launched on its own.
    lower::forEachStreamCall(s, [&](const Call &c) {
      CHECK(c.kind != Call::RecordedLaunch);
      return true;
    });
    lower::forEachStreamCall(s, &recorded, [&](const Call &c) {
      forks += c.kind == Call::Wait && c.event == recorded.scratchEvent;
      moved += c.kind == Call::Wait && c.event != recorded.scratchEvent &&
               !recorded.launches.empty();
      return true;
    });
  }
  // The generator reaches graphs of several streams, shapes launched again
  // (iterations), and waits moved to the launch stream.
  CHECK(programs > 300);
  CHECK(launches > 300);
  CHECK(shared > 50);
  CHECK(forks > 50);
  CHECK(moved > 50);
}

TEST_CASE("call plan: a host thread per device keeps every ordering, in any interleaving") {
  PIPEC_SEEDED(rng, 4245);
  size_t programs = 0, posts = 0, joins = 0, interleavings = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const std::string text = trial % 2 ? test::randomHostThreads(rng)
                                       : test::randomDeviceData(rng, /*declared=*/true);
    INFO(text);
    FrontendRun run(text);
    if (run.errors)
      continue;
    Schedule s(run.program.pipelines.at(0), DeviceProfile(), ScheduleOptions());
    if (s.pipeline.deviceCount() < 2)
      continue;
    ++programs;
    const lower::HostThreads threads(s);
    const size_t n = s.instances.size();
    std::vector<std::vector<Call>> calls(threads.count);
    lower::forEachStreamCall(s, nullptr, &threads, [&](const Call &c) {
      REQUIRE(c.thread < threads.count);
      CHECK(c.kind != Call::SetDevice);
      CHECK(c.kind != Call::GroupStart);
      CHECK(c.kind != Call::GroupEnd);
      if (c.stream != kHostStream)
        CHECK(s.streamPlan.streams[c.stream].device == c.thread);
      posts += c.kind == Call::Post;
      joins += c.kind == Call::Join;
      calls[c.thread].push_back(c);
      return true;
    });
    const auto reach = test::happensBefore(s);
    // Each thread on its own, in random interleavings, with CUDA's
    // semantics: a wait or sync takes its event as last recorded when it
    // is made; an await blocks until its token is posted.
    for (int round = 0; round < 8; ++round, ++interleavings) {
      using Set = std::vector<uint8_t>;
      auto join = [](Set &into, const Set &from) {
        for (size_t i = 0; i < into.size(); ++i)
          into[i] |= from[i];
      };
      std::vector<Set> before(n, Set(n, 0)), tail(s.streamPlan.streams.size(), Set(n, 0));
      std::vector<Set> event(threads.eventBase + threads.tokens, Set(n, 0));
      std::vector<Set> host(threads.count, Set(n, 0)), token(threads.tokens, Set(n, 0));
      std::vector<uint8_t> posted(threads.tokens, 0), ran(n, 0);
      std::vector<size_t> next(threads.count, 0);
      for (;;) {
        std::vector<uint32_t> runnable;
        for (uint32_t th = 0; th < threads.count; ++th) {
          if (next[th] == calls[th].size())
            continue;
          const Call &c = calls[th][next[th]];
          const bool awaits =
              c.kind == Call::Await || (c.kind == Call::Join && c.event != lower::kNoToken);
          if (!awaits || posted[c.event])
            runnable.push_back(th);
        }
        if (runnable.empty())
          break;
        const uint32_t th = runnable[rng() % runnable.size()];
        const Call &c = calls[th][next[th]++];
        switch (c.kind) {
        case Call::Launch:
          before[c.instance] = tail[c.stream];
          join(before[c.instance], host[th]);
          tail[c.stream] = before[c.instance];
          tail[c.stream][c.instance] = 1;
          ran[c.instance] = 1;
          break;
        case Call::Record:
          event[c.event] = tail[c.stream];
          join(event[c.event], host[th]);
          break;
        case Call::Wait:
          join(tail[c.stream], event[c.event]);
          break;
        case Call::Sync:
          join(host[th], event[c.event]);
          break;
        case Call::Cpu:
          before[c.instance] = host[th];
          host[th][c.instance] = 1;
          ran[c.instance] = 1;
          break;
        case Call::Post:
          token[c.event] = host[th];
          posted[c.event] = 1;
          break;
        case Call::Await:
        case Call::Join:
          if (c.event != lower::kNoToken)
            join(host[th], token[c.event]);
          break;
        case Call::Dispatch:
          break;
        default:
          FAIL("a call the threads do not make");
        }
      }
      for (uint32_t th = 0; th < threads.count; ++th)
        CHECK(next[th] == calls[th].size()); // no thread left waiting
      for (uint32_t v = 0; v < n; ++v)
        CHECK(ran[v]);
      for (uint32_t u = 0; u < n; ++u)
        for (uint32_t v = 0; v < n; ++v)
          if (reach[u][v])
            CHECK(before[v][u]);
    }
  }
  CHECK(programs > 100);
  CHECK(posts > 100);
  CHECK(joins > 20);
}

TEST_CASE("call plan: a walk stops where its visitor does") {
  FrontendRun run("pipeline p { iterations 3; stream s; stage A on s kernel 1us; }");
  REQUIRE(run.errors == 0);
  Schedule s(run.program.pipelines.at(0), DeviceProfile(), ScheduleOptions());
  size_t seen = 0;
  CHECK(!lower::forEachStreamCall(s, [&](const Call &) { return ++seen < 2; }));
  CHECK(seen == 2);
  CHECK(lower::forEachStreamCall(s, [](const Call &) { return true; }));
}

TEST_CASE("call plan: places are the declared slots, else the stage's own buffers") {
  FrontendRun run(R"(pipeline p {
  iterations 3;
  buffer a[2] 1MB host;
  buffer b[3] 1MB;
  buffer c 1MB;
  stream s;
  stage Up   on s copy h2d reads(a) writes(b);
  stage K    on s kernel 1us reads(b) writes(c) depends_on(Up);
  stage Fill on s memset 1MB writes(c) depends_on(K);
  stage Own  on s copy h2d 1MB;
  stage Back on s copy d2h 1MB;
  stage Move on s copy d2d 1MB;
  stage Zero on s memset 1MB;
  stage Idle on s kernel 1us;
})");
  REQUIRE(run.errors == 0);
  Schedule s(run.program.pipelines.at(0), DeviceProfile(), ScheduleOptions());
  auto instance = [&](const std::string &name, uint32_t iteration) {
    for (uint32_t v = 0; v < s.instances.size(); ++v)
      if (s.instances.stage(v).name == name && s.instances.iterationOf(v) == iteration)
        return v;
    FAIL("no instance " << name);
    return 0u;
  };
  auto is = [](const lower::Place &p, lower::Place::Kind kind, uint32_t buffer = 0,
               uint32_t slot = 0) {
    return p.kind == kind &&
           (kind != lower::Place::Declared || (p.buffer == buffer && p.slot == slot));
  };
  // Iteration 2: slot 2 mod the ring's slots.
  lower::CopyPlaces up = lower::copyPlaces(s, instance("Up", 2));
  CHECK(is(up.dst, lower::Place::Declared, 1, 2));
  CHECK(is(up.src, lower::Place::Declared, 0, 0));
  CHECK(is(lower::kernelPlace(s, instance("K", 2)), lower::Place::Declared, 2, 0));
  CHECK(is(lower::memsetPlace(s, instance("Fill", 1)), lower::Place::Declared, 2, 0));
  lower::CopyPlaces own = lower::copyPlaces(s, instance("Own", 0));
  CHECK((is(own.dst, lower::Place::Device) && is(own.src, lower::Place::Host)));
  lower::CopyPlaces back = lower::copyPlaces(s, instance("Back", 0));
  CHECK((is(back.dst, lower::Place::Host) && is(back.src, lower::Place::Device)));
  lower::CopyPlaces move = lower::copyPlaces(s, instance("Move", 0));
  CHECK((is(move.dst, lower::Place::Device2) && is(move.src, lower::Place::Device)));
  CHECK(is(lower::memsetPlace(s, instance("Zero", 0)), lower::Place::Device));
  CHECK(is(lower::kernelPlace(s, instance("Idle", 0)), lower::Place::Nothing));
}

TEST_CASE("call plan: emitCuda refuses a graph it cannot write, and writes nothing") {
  // A collective on one device lowered to a graph: NCCL's calls are made on
  // streams (the fuzzer found the emitter reaching a node it has no call for).
  FrontendRun run(R"(version 4;
pipeline one {
  stream s;
  stream c;
  stage G on s kernel 50us;
  stage AR on (c) allreduce 64MB depends_on(G);
})");
  REQUIRE(run.errors == 0);
  ScheduleOptions options;
  options.lowering = LoweringChoice::Graph;
  Schedule s(run.program.pipelines.at(0), DeviceProfile(), options);
  REQUIRE(s.lowering == Lowering::Graph);
  std::string out;
  llvm::raw_string_ostream os(out);
  const Schedule *one[] = {&s};
  llvm::Error e = emitCuda(one, "one.pipe", DeviceProfile(), os);
  REQUIRE(static_cast<bool>(e));
  CHECK(llvm::toString(std::move(e)).find("collectives") != std::string::npos);
  CHECK(os.str().empty());
}
