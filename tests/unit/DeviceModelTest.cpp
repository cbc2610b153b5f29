// The device model's behaviour, case by case.

#include "FrontendHelpers.h"
#include "RandomPrograms.h"

#include "model/DeviceModel.h"
#include "model/SimBackend.h"
#include "runtime/Backend.h"
#include "runtime/report/Reports.h"

#include "llvm/Support/raw_ostream.h"

#include <doctest/doctest.h>

#include "Seed.h"

#include <random>

using namespace pipec;
using pipec::test::FrontendRun;

namespace {

struct Ran {
  explicit Ran(const std::string &text, Lowering lowering = Lowering::Streams,
               bool priorities = true, DeviceProfile profile = DeviceProfile())
      : front(text), profile(profile) {
    REQUIRE(front.errors == 0);
    schedule =
        std::make_unique<Schedule>(front.program.pipelines.at(0), profile, ScheduleOptions());
    runtime::RunOptions options;
    options.priorities = priorities;
    auto backend = runtime::makeSimBackend(profile);
    auto result = backend->run(*schedule, lowering, options);
    REQUIRE(static_cast<bool>(result));
    run = std::move(*result);
    CHECK(run.violations == 0);
  }
  uint32_t id(const std::string &name) const {
    for (uint32_t v = 0; v < schedule->instances.size(); ++v)
      if (schedule->instances.name(v) == name)
        return v;
    FAIL("no instance " << name);
    return 0;
  }
  double start(const std::string &name) const { return run.start[id(name)]; }
  double end(const std::string &name) const { return run.end[id(name)]; }

  FrontendRun front;
  DeviceProfile profile;
  std::unique_ptr<Schedule> schedule;
  runtime::LoweringRun run;
};

} // namespace

TEST_CASE("model: two independent kernels on two streams overlap") {
  Ran r("pipeline p { stream a; stream b;"
        " stage A on a kernel 100us; stage B on b kernel 100us; }");
  CHECK(r.start("B") < r.end("A"));
  CHECK(r.run.makespanUs < 110);
}

TEST_CASE("model: one stream serialises, with a gap between items") {
  DeviceProfile profile;
  Ran r("pipeline p { stream a;"
        " stage A on a kernel 100us; stage B on a kernel 100us; }");
  CHECK(r.start("B") >= r.end("A") + profile.streamGapUs - 1e-9);
  CHECK(r.run.makespanUs >= 200);
}

TEST_CASE("model: same-direction copies share an engine, opposite ones do not") {
  Ran same("pipeline p { stream a; stream b;"
           " stage X on a copy h2d 50us; stage Y on b copy h2d 50us; }");
  CHECK(same.start("Y") >= same.end("X") - 1e-9);
  Ran opposite("pipeline p { stream a; stream b;"
               " stage X on a copy h2d 50us; stage Y on b copy d2h 50us; }");
  CHECK(opposite.start("Y") < opposite.end("X"));
}

TEST_CASE("model: with two engines a small copy need not wait behind a large one, and "
          "copies share the direction's bandwidth") {
  DeviceProfile two;
  two.copyEnginesH2D = 2;
  const double lat = two.copyLatencyUs;
  const char *text = "pipeline p { stream a; stream b;"
                     " stage Big on a copy h2d 1000us; stage Small on b copy h2d 2us; }";
  Ran one(text);
  CHECK(one.start("Small") >= one.end("Big") - 1e-9);
  Ran shared(text, Lowering::Streams, true, two);
  // Both move bytes at half the bandwidth while both move: 2 us take 4.
  CHECK(shared.end("Small") == doctest::Approx(shared.start("Small") + lat + 4));
  CHECK(shared.end("Small") < shared.end("Big"));
  // The large one loses the 2 us the small one took: the bandwidth is one.
  CHECK(shared.end("Big") == doctest::Approx(shared.start("Big") + lat + 1002));
  // Two large copies together take as long as one after the other.
  Ran pair("pipeline p { stream a; stream b;"
           " stage X on a copy h2d 500us; stage Y on b copy h2d 500us; }",
           Lowering::Streams, true, two);
  CHECK(pair.start("Y") < pair.end("X"));
  CHECK(pair.run.makespanUs >= 1000);
  CHECK(pair.run.makespanUs <= 1000 + 2 * lat + 2 * two.streamGapUs + 1e-6);
  // Three copies on two engines: the third starts when one ends; the same
  // in a graph.
  for (Lowering l : {Lowering::Streams, Lowering::Graph}) {
    Ran three("pipeline p { stream a; stream b; stream c;"
              " stage X on a copy h2d 100us; stage Y on b copy h2d 100us;"
              " stage Z on c copy h2d 100us; }",
              l, true, two);
    CHECK(three.start("Z") >= std::min(three.end("X"), three.end("Y")) - 1e-9);
    CHECK(three.run.makespanUs >= 300 + lat - 1e-6);
    CHECK(three.run.makespanUs >= three.schedule->analysis.lowerBoundUs - 1e-9);
  }
  // D2D keeps its one engine.
  CHECK(two.copyEngines(CopyDirection::D2D) == 1);
}

TEST_CASE("model: a kernel's time is the whole kernel's, its blocks in waves") {
  DeviceProfile profile; // 132 SMs, 2048 threads per SM
  // 1024 threads a block: two fit on an SM, so 264 blocks make one wave.
  // Alone, every kernel takes its T; its blocks take T / waves each.
  Ran one("pipeline p { stage K kernel 10us [blocks=264, threads=1024]; }");
  CHECK(one.run.makespanUs == doctest::Approx(10));
  Ran two("pipeline p { stage K kernel 10us [blocks=265, threads=1024]; }");
  CHECK(two.run.makespanUs == doctest::Approx(10));
  Ran four("pipeline p { stage K kernel 40us [blocks=1056, threads=1024]; }");
  CHECK(four.run.makespanUs == doctest::Approx(40));
  // Beside another kernel that holds half the SMs, the waves take longer.
  Ran shared("pipeline p { stream a; stream b;"
             " stage Half on a kernel 40us [blocks=132, threads=1024];"
             " stage K on b kernel 40us [blocks=1056, threads=1024]; }");
  CHECK(shared.end("K") - shared.start("K") > 40);
  // Small blocks: 32 per SM at most.
  Ran small("pipeline p { stage K kernel 10us [blocks=4224, threads=64]; }");
  CHECK(small.run.makespanUs == doctest::Approx(10));
}

TEST_CASE("model: priority lets an urgent kernel through sooner") {
  const char *text = "pipeline p { stream bg priority low; stream fg priority high;"
                     " stage Wide on bg kernel 400us [blocks=1056, threads=1024];"
                     " stage Wait on fg kernel 5us;"
                     " stage Urgent on fg kernel 10us [blocks=132] depends_on(Wait); }";
  Ran with(text, Lowering::Streams, true);
  Ran without(text, Lowering::Streams, false);
  // Wide runs four waves of 100 us. With priorities Urgent takes the first
  // SMs the first wave frees; without, it waits behind all four waves.
  CHECK(with.end("Urgent") < without.end("Urgent") - 200);
  // Running blocks are never preempted: it cannot start before one ends.
  CHECK(with.start("Urgent") >= with.start("Wide") + 100 - 1e-9);
}

TEST_CASE("model: a graph beats streams on a chain of tiny kernels") {
  std::string text = "pipeline p { iterations 8; stream s;";
  for (int i = 0; i < 8; ++i)
    text += " stage K" + std::to_string(i) + " on s kernel 1us" +
            (i ? " depends_on(K" + std::to_string(i - 1) + ")" : "") + ";";
  text += " }";
  Ran streams(text, Lowering::Streams);
  Ran graph(text, Lowering::Graph);
  CHECK(graph.run.timings.replayMedian < streams.run.timings.replayMedian);
  CHECK(graph.run.timings.submitMedian < streams.run.timings.submitMedian);
  CHECK(graph.run.timings.instantiate > 0);
  CHECK(streams.run.timings.instantiate == 0);
}

TEST_CASE("model: host functions serialise with each other") {
  Ran r("pipeline p { stream a; stream b;"
        " stage X on a host 50us; stage Y on b host 50us; }");
  double firstEnd = std::min(r.end("X"), r.end("Y"));
  double secondStart = std::max(r.start("X"), r.start("Y"));
  CHECK(secondStart >= firstEnd - 1e-9);
}

TEST_CASE("model: more streams than hardware queues serialise falsely") {
  DeviceProfile one;
  one.hardwareQueues = 1;
  // B waits for A's event; C, on a third stream, is independent but sits
  // behind B in the only queue.
  const char *text = "pipeline p { stream a; stream b; stream c;"
                     " stage A on a kernel 100us;"
                     " stage B on b kernel 1us depends_on(A);"
                     " stage C on c kernel 1us; }";
  Ran shared(text, Lowering::Streams, true, one);
  CHECK(shared.start("C") >= shared.end("A"));
  Ran separate(text);
  CHECK(separate.start("C") < separate.end("A"));
}

TEST_CASE("model: cross-stream waits hold and cost their latency") {
  DeviceProfile profile;
  Ran r("pipeline p { stream a; stream b;"
        " stage A on a kernel 10us; stage B on b kernel 10us depends_on(A); }");
  CHECK(r.start("B") >= r.end("A") + profile.waitLatencyUs - 1e-9);
}

TEST_CASE("model: at most 128 kernels are resident at once") {
  DeviceProfile profile;
  profile.maxResidentKernels = 2;
  Ran r("pipeline p { stream a; stream b; stream c;"
        " stage A on a kernel 10us; stage B on b kernel 10us;"
        " stage C on c kernel 10us; }",
        Lowering::Streams, true, profile);
  CHECK(r.start("C") >= std::min(r.end("A"), r.end("B")) - 1e-9);
}

TEST_CASE("model: runs are deterministic, to the byte") {
  std::string a, b;
  for (std::string *out : {&a, &b}) {
    Ran r("pipeline p { iterations 3; stream s; stream t;"
          " stage A on s kernel 7us [blocks=300]; stage B on t copy h2d 3MB"
          " depends_on(A); stage C on s host 2us depends_on(B@prev); }");
    llvm::raw_string_ostream os(*out);
    auto backend = runtime::makeSimBackend(DeviceProfile());
    runtime::writeRunJSON({r.run}, *backend, os);
  }
  CHECK(a == b);
  CHECK(!a.empty());
}

TEST_CASE("model: no run is shorter than the analysis' lower bound") {
  for (const char *text :
       {"pipeline p { iterations 4; stream a; stream b;"
        " stage A on a kernel 10us; stage B on b kernel 20us depends_on(A); }",
        "pipeline p { stage A kernel 5us; stage B kernel 5us depends_on(A);"
        " stage C kernel 7us depends_on(A); stage D kernel 1us depends_on(B, C); }"})
    for (Lowering l : {Lowering::Streams, Lowering::Graph}) {
      Ran r(text, l);
      CHECK(r.run.makespanUs >= r.schedule->analysis.lowerBoundUs - 1e-9);
    }
}

TEST_CASE("model: violations are measured, not assumed") {
  FrontendRun front("pipeline p { stream a; stream b;"
                    " stage A on a kernel 10us; stage B on b kernel 10us"
                    " depends_on(A); }");
  Schedule s(front.program.pipelines[0], DeviceProfile(), ScheduleOptions());
  // A made-up timeline where B starts before A ends.
  CHECK(runtime::countViolations(s, {0, 5}, {10, 15}) == 1);
  CHECK(runtime::countViolations(s, {0, 10}, {10, 20}) == 0);
}

TEST_CASE("model: equal priorities dispatch the oldest launch first, in both lowerings") {
  // A is launched before B, but B's stream feeds hardware queue 0. When P
  // frees the SMs, A's blocks go first.
  const char *text = "pipeline p { stream a; stream b; stream c;"
                     " stage P on c kernel 10us [blocks=264, threads=1024];"
                     " stage A on b kernel 10us [blocks=264, threads=1024];"
                     " stage B on a kernel 10us [blocks=264, threads=1024]; }";
  for (Lowering l : {Lowering::Streams, Lowering::Graph}) {
    Ran r(text, l);
    CHECK(r.start("A") < r.start("B"));
  }
}

TEST_CASE("model: a grid of 2^31 - 1 blocks is simulated in bounded time, taking its T") {
  // Far more waves than the model simulates one by one: still T alone.
  Ran r("pipeline p { stream s; stage K on s kernel 100us [blocks=2147483647]; }");
  CHECK(r.run.makespanUs == doctest::Approx(100));
  CHECK(r.run.simulatedEvents < 200000);
}

TEST_CASE("model: incremental bookkeeping gives the traces of looking everywhere") {
  // The model looks at a hardware queue or the resident kernels only when
  // something that held them back changed. Against the obvious model that
  // looks at everything on every pump: random programs (every kind of stage,
  // grids of many shapes, priorities, @prev), a roomy and a tight device
  // (fewer queues than streams, two resident kernels), both lowerings.
  PIPEC_SEEDED(rng, 2024);
  DeviceProfile tight;
  tight.hardwareQueues = 3;
  tight.maxResidentKernels = 2;
  for (int round = 0; round < 120; ++round) {
    CAPTURE(round);
    std::string t = test::randomWorkload(rng);
    CAPTURE(t);
    FrontendRun front(t);
    REQUIRE_MESSAGE(front.errors == 0, t);
    for (const DeviceProfile &profile : {DeviceProfile(), tight}) {
      const bool isTight = profile.maxResidentKernels == tight.maxResidentKernels;
      CAPTURE(isTight);
      Schedule s(front.program.pipelines.at(0), profile, ScheduleOptions());
      for (Lowering l : {Lowering::Streams, Lowering::Graph}) {
        const bool graph = l == Lowering::Graph;
        CAPTURE(graph);
        sim::ModelOptions fast, slow;
        slow.lookEverywhere = true;
        sim::ReplayTrace a = sim::simulate(s, l, profile, fast);
        sim::ReplayTrace b = sim::simulate(s, l, profile, slow);
        CHECK(a.start == b.start);
        CHECK(a.end == b.end);
        CHECK(a.doneUs == b.doneUs);
        for (double e : a.end)
          CHECK(e >= 0); // every instance ran
      }
    }
  }
}

namespace {

/// `text` with `iterations N;` made `iterations count;`.
std::string withIterations(std::string text, unsigned count) {
  size_t at = text.find("iterations ");
  REQUIRE(at != std::string::npos);
  size_t end = text.find(';', at);
  return text.substr(0, at) + "iterations " + std::to_string(count) + text.substr(end);
}

/// The devices the skip-ahead is tested on: the default one; a tight one
/// (a short launch queue, few hardware queues and resident kernels, and
/// long gaps and latencies: a checkpoint often falls inside one); a small
/// one whose copy engines share their link (the SMs' and the engines' own
/// state differ between blocks where the rest does not: each component's
/// snapshot must hold its own); and one whose host calls cost nothing (it
/// issues many blocks at one time, and no block's start is seen alone).
std::vector<DeviceProfile> skipProfiles() {
  DeviceProfile tight;
  tight.hardwareQueues = 3;
  tight.maxResidentKernels = 2;
  tight.launchQueueDepth = 8;
  tight.streamGapUs = 7;
  tight.waitLatencyUs = 5;
  tight.syncLatencyUs = 9;
  DeviceProfile small = tight;
  small.sms = 2;
  small.copyEnginesH2D = small.copyEnginesD2H = 2;
  DeviceProfile freeHost;
  freeHost.launchUs = freeHost.recordUs = freeHost.waitUs = 0;
  return {DeviceProfile(), tight, small, freeHost};
}

/// Both runs, with and without skipping ahead; the skipped iterations.
uint64_t compareSkipping(const Schedule &s, Lowering l, const DeviceProfile &profile,
                         bool exact) {
  sim::ModelOptions full, skip;
  full.recordHost = skip.recordHost = false;
  skip.extrapolate = true;
  sim::ReplayTrace a = sim::simulate(s, l, profile, full);
  sim::ReplayTrace b = sim::simulate(s, l, profile, skip);
  // Rounding: each time is a sum of the same costs, added up in another
  // order; 2^-40 of the run's length is far above it and far below 1 ps.
  const double tolerance = exact ? 0 : (a.doneUs + 1) * 0x1p-40;
  auto near = [&](double x, double y) { return x == y || std::abs(x - y) <= tolerance; };
  size_t wrong = 0;
  for (size_t v = 0; v < a.start.size(); ++v)
    wrong += !near(a.start[v], b.start[v]) || !near(a.end[v], b.end[v]);
  CHECK(wrong == 0);
  CHECK(near(a.doneUs, b.doneUs));
  CHECK(near(a.submitUs, b.submitUs));
  CHECK(near(a.hostTime.cpu, b.hostTime.cpu));
  CHECK(near(a.hostTime.issue, b.hostTime.issue));
  CHECK(near(a.hostTime.api, b.hostTime.api));
  CHECK(near(a.hostTime.blocked, b.hostTime.blocked));
  CHECK(a.simulatedEvents == b.simulatedEvents);
  CHECK(a.extrapolatedIterations == 0);
  return b.extrapolatedIterations;
}

} // namespace

TEST_CASE("model: skipping ahead in a settled periodic replay gives the full run's times") {
  // Random programs of every kind of stage (cpu stages, issue=, @prev,
  // priorities) over 40 to 160 iterations, on skipProfiles()'s devices
  // (the free host's every fourth program), both lowerings: every start and
  // end, the host's time and the events counted equal the full
  // simulation's, up to rounding.
  PIPEC_SEEDED(rng, 31);
  uint64_t skippedRuns = 0, runs = 0;
  for (int round = 0; round < 160; ++round) {
    CAPTURE(round);
    std::string t =
        withIterations(test::randomWorkload(rng, round % 2 == 1), 40 + rng() % 120);
    CAPTURE(t);
    FrontendRun front(t);
    REQUIRE(front.errors == 0);
    std::vector<DeviceProfile> profiles = skipProfiles();
    if (round % 4 != 0)
      profiles.pop_back(); // the free host
    for (size_t which = 0; which < profiles.size(); ++which) {
      const DeviceProfile &profile = profiles[which];
      CAPTURE(which); // 0 the default profile, 1 the tight one, 2 the small, 3 the free host
      Schedule s(front.program.pipelines.at(0), profile, ScheduleOptions());
      for (Lowering l : {Lowering::Streams, Lowering::Graph}) {
        const bool graph = l == Lowering::Graph;
        CAPTURE(graph);
        ++runs;
        skippedRuns += compareSkipping(s, l, profile, false) > 0;
      }
    }
  }
  // Many runs settle and skip (a test that never skipped would prove
  // nothing); others have too few iterations to fill the launch queue.
  CHECK(skippedRuns * 3 > runs);
}

TEST_CASE("model: a checkpoint state equal to the last one's is followed by the same again") {
  // The premise of skipping ahead, checked at every block's checkpoint (not
  // only where the model has settled, and without its check that the last
  // block's times repeated): where the state at a block's start equals the
  // state a block before, shifted, the next block's start has the same
  // state again, the same time later, and everything that happened in
  // between happens again, shifted. A part of the state left out of the
  // snapshot (the host's, the SMs', an engine's) makes two different
  // states look equal, and what follows them differs.
  PIPEC_SEEDED(rng, 37);
  uint64_t triples = 0, equal = 0;
  for (int round = 0; round < 120; ++round) {
    CAPTURE(round);
    std::string t = withIterations(test::randomWorkload(rng, round % 2 == 1), 12 + rng() % 30);
    CAPTURE(t);
    FrontendRun front(t);
    REQUIRE(front.errors == 0);
    const std::vector<DeviceProfile> profiles = skipProfiles();
    for (size_t which = 0; which < profiles.size(); ++which) {
      CAPTURE(which); // 0 the default profile, 1 the tight one, 2 the small, 3 the free host
      Schedule s(front.program.pipelines.at(0), profiles[which], ScheduleOptions());
      for (Lowering l : {Lowering::Streams, Lowering::Graph}) {
        const bool graph = l == Lowering::Graph;
        CAPTURE(graph);
        std::vector<sim::Checkpoint> cps;
        sim::ModelOptions options;
        options.recordHost = false;
        options.extrapolate = true;
        options.checkpoints = &cps;
        sim::ReplayTrace r = sim::simulate(s, l, profiles[which], options);
        REQUIRE(r.extrapolatedIterations == 0);
        const double tolerance = (r.doneUs + 1) * 0x1p-40;
        auto near = [&](double x, double y) { return x == y || std::abs(x - y) <= tolerance; };
        auto same = [&](const sim::Checkpoint &x, const sim::Checkpoint &y) {
          if (x.state.size() != y.state.size())
            return false;
          for (size_t i = 0; i < x.state.size(); ++i)
            if (!near(x.state[i], y.state[i]))
              return false;
          return true;
        };
        const uint64_t n = r.end.size();
        for (size_t c = 2; c < cps.size(); ++c) {
          const sim::Checkpoint &a = cps[c - 2], &b = cps[c - 1], &next = cps[c];
          const uint64_t per = b.firstInstance - a.firstInstance;
          // Three blocks in a row, and whole blocks after them: the end of
          // the program is not periodic (nothing comes after the last).
          if (a.block + 1 != b.block || b.block + 1 != next.block ||
              next.firstInstance + 3 * per > n)
            continue;
          ++triples;
          if (!same(a, b))
            continue;
          ++equal;
          CAPTURE(a.block);
          CHECK(same(b, next));
          CHECK(near(next.clock - b.clock, b.clock - a.clock));
          // What the host did and the events counted: the same again.
          CHECK(near(next.hostTime.cpu - b.hostTime.cpu, b.hostTime.cpu - a.hostTime.cpu));
          CHECK(near(next.hostTime.issue - b.hostTime.issue,
                     b.hostTime.issue - a.hostTime.issue));
          CHECK(near(next.hostTime.api - b.hostTime.api, b.hostTime.api - a.hostTime.api));
          CHECK(near(next.hostTime.blocked - b.hostTime.blocked,
                     b.hostTime.blocked - a.hostTime.blocked));
          CHECK(next.events - b.events == b.events - a.events);
          const double shift = b.clock - a.clock;
          size_t wrong = 0;
          for (uint64_t v = 0; v + per < n; ++v) {
            if (!r.start.empty() && r.start[v] >= a.clock && r.start[v] < b.clock)
              wrong += !near(r.start[v + per], r.start[v] + shift);
            if (r.end[v] >= a.clock && r.end[v] < b.clock)
              wrong += !near(r.end[v + per], r.end[v] + shift);
          }
          CHECK(wrong == 0);
        }
      }
    }
  }
  // Many blocks begin in the state the last one began in (a test that never
  // saw one would prove nothing).
  CHECK(triples > 1000);
  CHECK(equal * 4 > triples);
  MESSAGE(triples << " blocks in a row, " << equal << " after an equal state");
}

TEST_CASE("model: with costs that add up exactly, skipping ahead is exact to the bit") {
  DeviceProfile dyadic;
  dyadic.launchUs = 2.5;
  dyadic.streamGapUs = 0.5;
  dyadic.copyLatencyUs = 1;
  for (const char *text : {"pipeline p { iterations 2000; stream a; stream b; buffer x[2] 1MB;"
                           " stage A on a kernel 8us [blocks=528, threads=256] writes(x);"
                           " stage B on b kernel 4us [blocks=64] reads(x) depends_on(A);"
                           " stage C on a copy d2h 2us depends_on(B); }",
                           "pipeline p { iterations 600; stream a; stream b priority high;"
                           " stage A on a kernel 16us [blocks=2000, threads=128];"
                           " stage S cpu 4us depends_on(A);"
                           " stage B on b kernel 2us depends_on(S, A@prev(2)); }"}) {
    CAPTURE(text);
    FrontendRun front(text);
    REQUIRE(front.errors == 0);
    Schedule s(front.program.pipelines.at(0), dyadic, ScheduleOptions());
    CHECK(compareSkipping(s, Lowering::Streams, dyadic, true) > 100);
    // A cpu stage cuts the graph into segments: the graph lowering then
    // runs whole.
    const bool segments = s.segments > 1;
    CHECK((compareSkipping(s, Lowering::Graph, dyadic, true) > 100) == !segments);
  }
}

TEST_CASE("model: each device has its own SMs and copy engines") {
  // Two kernels that each fill a device, and two H2D copies: on two devices
  // they run at once; on one they take turns.
  const char *two = R"(version 4;
pipeline p {
  device a; device b;
  stream x on a; stream y on b;
  stage K1 on x kernel 100us [blocks=1056, threads=1024];
  stage K2 on y kernel 100us [blocks=1056, threads=1024];
  stage C1 on x copy h2d 50us;
  stage C2 on y copy h2d 50us;
})";
  Ran r(two);
  CHECK(r.start("K2") < r.end("K1"));
  CHECK(r.start("C2") < r.end("C1"));
  Ran one(R"(pipeline p {
  stream x; stream y;
  stage K1 on x kernel 100us [blocks=1056, threads=1024];
  stage K2 on y kernel 100us [blocks=1056, threads=1024];
})");
  CHECK(one.start("K2") >= one.end("K1"));
  CHECK(r.run.makespanUs < one.run.makespanUs);
  REQUIRE(r.run.devices.size() == 2);
  CHECK(r.run.devices[0].name == "a");
  // (K2 then C2, one after the other on stream y.)
  CHECK(r.run.devices[1].busyUs ==
        doctest::Approx(r.end("K2") - r.start("K2") + r.end("C2") - r.start("C2")));
}

TEST_CASE("model: a collective's parts wait for each other and end together") {
  // The part on b is reached 300 us after a's: a's part holds its device
  // until then (the kernel waits for its peer), and both end one
  // collective's time after b's arrives.
  Ran r(R"(version 4;
pipeline p {
  device a; device b;
  stream x on a; stream y on b;
  stage Late on y kernel 300us;
  stage AR on (x, y) allreduce 64MB depends_on(Late);
  stage After on x kernel 10us depends_on(AR);
})");
  const double ends = r.end("AR:a");
  CHECK(r.end("AR:b") == ends);
  CHECK(r.start("AR:a") < r.end("Late"));
  CHECK(r.start("AR:b") >= r.end("Late"));
  const double duration =
      r.schedule->pipeline.stages[r.schedule->instances.stageOf(r.id("AR:a"))].durationUs;
  CHECK(ends == doctest::Approx(r.start("AR:b") + duration));
  CHECK(r.start("After") >= ends);
}

TEST_CASE("model: several devices, randomized: bounds hold, orderings kept, parts meet") {
  // Random programs on 2 to 4 devices with peer copies and collectives, on
  // random profiles: no run is shorter than any bound the analysis gives
  // (each device's SM area and engines are its own), no ordering is broken,
  // every instance runs, a collective's parts of one iteration end
  // together, and the incremental model gives the traces of the one that
  // looks everywhere.
  PIPEC_SEEDED(rng, 77);
  size_t meetings = 0, deadlocks = 0;
  for (int round = 0; round < 400; ++round) {
    const std::string text =
        test::randomProgram(rng, /*allowAuto=*/false, round % 3 == 0, 2 + rng() % 3);
    INFO(text);
    DeviceProfile profile;
    if (round % 2) {
      profile.sms = 1 + rng() % 140;
      profile.hardwareQueues = 1 + rng() % 8;
      profile.maxResidentKernels = 1 + rng() % 16;
      profile.streamGapUs = double(rng() % 3);
      profile.copyLatencyUs = double(rng() % 5);
    }
    FrontendRun front(text, 0, profile);
    REQUIRE(front.errors == 0);
    Schedule s(front.program.pipelines.at(0), profile, ScheduleOptions());
    auto backend = runtime::makeSimBackend(profile);
    runtime::RunOptions o;
    o.recordHost = false;
    auto r = backend->run(s, Lowering::Streams, o);
    if (!r) {
      // A deadlock, and the one it names: collectives' parts holding their
      // devices. With room for every part at once (queues, resident
      // kernels and SMs for every part's channels), the same program ends.
      const std::string message = llvm::toString(r.takeError());
      INFO(message);
      CHECK(message.find("deadlocks") != std::string::npos);
      CHECK(message.find("collective") != std::string::npos);
      DeviceProfile roomy = profile;
      roomy.hardwareQueues = 128;
      roomy.maxResidentKernels = 1u << 20;
      roomy.sms = 1024;
      Schedule again(front.program.pipelines.at(0), roomy, ScheduleOptions());
      auto ends = runtime::makeSimBackend(roomy)->run(again, Lowering::Streams, o);
      CHECK(static_cast<bool>(ends));
      if (!ends)
        llvm::consumeError(ends.takeError());
      ++deadlocks;
      continue;
    }
    CHECK(r->violations == 0);
    for (const Bound &b : s.analysis.bounds)
      CHECK(b.us <= r->makespanUs + 1e-6);
    for (double e : r->end)
      CHECK(e >= 0);
    for (uint32_t v = 0; v < s.instances.size(); ++v) {
      const program::Stage &st = s.instances.stage(v);
      if (program::collectiveParts(st) < 2 || s.instances.stageOf(v) != st.collective().group)
        continue;
      ++meetings;
      for (uint32_t k = 1; k < st.collective().parts; ++k)
        CHECK(
            r->end[s.instances.idOf(st.collective().group + k, s.instances.iterationOf(v))] ==
            r->end[v]);
    }
    sim::ModelOptions fast, slow;
    slow.lookEverywhere = true;
    sim::ReplayTrace a = sim::simulate(s, Lowering::Streams, profile, fast);
    sim::ReplayTrace b = sim::simulate(s, Lowering::Streams, profile, slow);
    CHECK(a.start == b.start);
    CHECK(a.end == b.end);
  }
  CHECK(meetings > 100);
  CHECK(deadlocks < 20); // of 400 rounds: most programs end
}

namespace {

/// Random kernels of many waves on random streams at random priorities,
/// some saying what bounds them (bytes= up to the device's bandwidth over
/// their time, bound=memory|compute), some depending on earlier ones.
std::string randomGrids(std::mt19937 &rng, bool attributes) {
  const uint32_t streams = 1 + rng() % 4, stages = 2 + rng() % 8;
  std::string t = "pipeline g {\n  iterations " + std::to_string(1 + rng() % 3) + ";\n";
  const char *priorities[] = {"", " priority high", " priority low"};
  for (uint32_t i = 0; i < streams; ++i)
    t += "  stream s" + std::to_string(i) + priorities[rng() % 3] + ";\n";
  static const unsigned threads[] = {128, 256, 512, 1024};
  for (uint32_t i = 0; i < stages; ++i) {
    const unsigned us = 5 + rng() % 400, th = threads[rng() % 4];
    const uint64_t perWave = 132ull * (2048 / th);
    const uint64_t blocks = rng() % 2 ? 1 + rng() % perWave : perWave * (1 + rng() % 200);
    t += "  stage K" + std::to_string(i) + " on s" + std::to_string(rng() % streams) +
         " kernel " + std::to_string(us) + "us [blocks=" + std::to_string(blocks) +
         ", threads=" + std::to_string(th);
    if (attributes)
      switch (rng() % 4) {
      case 0: // at most the device's 4800 GB/s over its time: 4.8 MB per us
        t += ", bytes=" + std::to_string(uint64_t(us) * 4800000 * (1 + rng() % 100) / 100);
        break;
      case 1:
        t += ", bound=memory";
        break;
      case 2:
        t += ", bound=compute";
        break;
      default:
        break;
      }
    t += "]";
    if (i && rng() % 3 == 0)
      t += " depends_on(K" + std::to_string(rng() % i) + ")";
    t += ";\n";
  }
  return t + "}\n";
}

/// The bytes= (or bound=memory: the bandwidth over its time) of each stage,
/// 0 where it says nothing of memory.
std::vector<double> bytesOf(const program::Pipeline &p, const DeviceProfile &profile) {
  std::vector<double> bytes;
  for (const program::Stage &st : p.stages) {
    const program::KernelWork &k = st.kernel();
    bytes.push_back(k.bound == program::KernelBound::Memory
                        ? st.durationUs * profile.memoryGBps * 1e3
                        : double(k.bytes));
  }
  return bytes;
}

} // namespace

TEST_CASE("model: grids run wave by wave or as closed-form batches give one trace") {
  // The closed form (a grid with the device to itself runs its waves as one
  // batch, cut back when a more urgent kernel comes) against the obvious
  // model that runs each wave as a batch: grids of up to 200 waves at random
  // priorities, with and without shared resources, both lowerings.
  PIPEC_SEEDED(rng, 58);
  for (int round = 0; round < 150; ++round) {
    CAPTURE(round);
    const std::string t = randomGrids(rng, round % 2);
    CAPTURE(t);
    FrontendRun front(t);
    REQUIRE_MESSAGE(front.errors == 0, t);
    const DeviceProfile profile;
    Schedule s(front.program.pipelines.at(0), profile, ScheduleOptions());
    for (Lowering l : {Lowering::Streams, Lowering::Graph})
      for (bool contend : {false, true}) {
        CAPTURE(contend);
        sim::ModelOptions closed, oneByOne;
        closed.contendUnsaid = oneByOne.contendUnsaid = contend;
        oneByOne.wavesOneByOne = true;
        sim::ReplayTrace a = sim::simulate(s, l, profile, closed);
        sim::ReplayTrace b = sim::simulate(s, l, profile, oneByOne);
        // A batch's end is one sum where waves one by one are many, each
        // rounded up to the picosecond grid: a few nanoseconds apart over
        // thousands of waves, where a wave taken wrongly is 0.5 us or more.
        size_t apart = 0;
        for (size_t v = 0; v < a.end.size(); ++v)
          apart +=
              std::abs(a.end[v] - b.end[v]) > 0.01 || std::abs(a.start[v] - b.start[v]) > 0.01;
        CHECK(apart == 0);
        CHECK(a.simulatedEvents <= b.simulatedEvents);
      }
  }
}

TEST_CASE("model: kernels that run together never move more than the device's bandwidth") {
  // Every pair of kernels that say what they move: their bytes together
  // over the span from the first's start to the last's end is at most the
  // device's memory bandwidth (each alone moves at most that). And kernels
  // whose asks add up to less than the device has run as if they asked
  // nothing.
  PIPEC_SEEDED(rng, 580);
  for (int round = 0; round < 150; ++round) {
    CAPTURE(round);
    const std::string t = randomGrids(rng, true);
    CAPTURE(t);
    FrontendRun front(t);
    REQUIRE_MESSAGE(front.errors == 0, t);
    const DeviceProfile profile;
    Schedule s(front.program.pipelines.at(0), profile, ScheduleOptions());
    const std::vector<double> bytes = bytesOf(s.pipeline, profile);
    sim::ReplayTrace r = sim::simulate(s, Lowering::Streams, profile, sim::ModelOptions());
    const double perUs = profile.memoryGBps * 1e3; // bytes per microsecond
    size_t over = 0;
    for (uint32_t v = 0; v < s.instances.size(); ++v)
      for (uint32_t w = v + 1; w < s.instances.size(); ++w) {
        const double bv = bytes[s.instances.stageOf(v)], bw = bytes[s.instances.stageOf(w)];
        if (!bv || !bw)
          continue;
        const double span = std::max(r.end[v], r.end[w]) - std::min(r.start[v], r.start[w]);
        over += bv + bw > perUs * span * (1 + 1e-9) + 1;
      }
    CHECK(over == 0);
  }
  // Small asks: a thousandth of the bandwidth each, never more than the
  // device together: the same trace as without them.
  for (int round = 0; round < 50; ++round) {
    CAPTURE(round);
    std::string t = randomGrids(rng, false);
    FrontendRun plain(t);
    REQUIRE(plain.errors == 0);
    std::string asked;
    for (size_t at = 0, next; at < t.size(); at = next) {
      next = t.find("threads=", at);
      if (next == std::string::npos) {
        asked += t.substr(at);
        break;
      }
      next = t.find(']', next);
      asked += t.substr(at, next - at) + ", bytes=1KB";
    }
    CAPTURE(asked);
    FrontendRun small(asked);
    REQUIRE(small.errors == 0);
    const DeviceProfile profile;
    Schedule a(plain.program.pipelines.at(0), profile, ScheduleOptions());
    Schedule b(small.program.pipelines.at(0), profile, ScheduleOptions());
    sim::ReplayTrace x = sim::simulate(a, Lowering::Streams, profile, sim::ModelOptions());
    sim::ReplayTrace y = sim::simulate(b, Lowering::Streams, profile, sim::ModelOptions());
    CHECK(x.end == y.end);
    CHECK(x.start == y.start);
  }
}
