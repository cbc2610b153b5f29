// The host thread (language version 3): cpu stages, host synchronisations,
// issue= dispatch, graph segments; against slow, obvious implementations
// and against the device model.

#include "FrontendHelpers.h"
#include "RandomPrograms.h"
#include "SlowReduction.h"

#include "compiler/schedule/Schedule.h"
#include "model/DeviceModel.h"
#include "model/SimBackend.h"
#include "runtime/Backend.h"

#include <doctest/doctest.h>

#include "Seed.h"

#include <map>
#include <random>
#include <set>

using namespace pipec;
using pipec::test::FrontendRun;
using test::Edge;

namespace {

/// Profiles that stress different resources, the host's too.
DeviceProfile randomProfile(std::mt19937 &rng) {
  DeviceProfile p;
  p.sms = 1 + rng() % 140;
  p.hardwareQueues = 1 + rng() % 8;
  p.hostFuncLatencyUs = double(rng() % 120);
  p.copyLatencyUs = double(rng() % 5);
  p.streamGapUs = double(rng() % 3);
  p.syncLatencyUs = double(rng() % 10);
  p.launchQueueDepth = 1 + rng() % 6;
  p.launchUs = double(rng() % 8);
  return p;
}

/// The stream lowering's happens-before, by brute force: dependencies,
/// stream order, and on each device's host thread the cpu stages' order
/// and a cpu stage before everything that thread issues after it.
std::set<Edge> happensBefore(const Schedule &s) {
  std::set<Edge> h;
  const size_t n = s.instances.size();
  std::map<uint32_t, uint32_t> lastOnStream;
  std::vector<uint32_t> cpus;
  for (uint32_t v = 0; v < n; ++v) {
    for (uint32_t u : s.instances.deps().row(v))
      h.insert({u, v});
    auto it = lastOnStream.find(s.streamOf(v));
    if (it != lastOnStream.end())
      h.insert({it->second, v});
    lastOnStream[s.streamOf(v)] = v;
    for (uint32_t c : cpus)
      if (s.threadOf(c) == s.threadOf(v))
        h.insert({c, v});
    if (s.onHost(v))
      cpus.push_back(v);
  }
  return h;
}

} // namespace

TEST_CASE("host: a cpu stage synchronises on exactly the device stages the reduction "
          "leaves it, none implied by an earlier one") {
  PIPEC_SEEDED(rng, 270);
  size_t syncs = 0, programs = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string text = test::randomWorkload(rng, /*hostThread=*/true, trial % 4 == 3);
    FrontendRun front(text);
    if (front.errors)
      continue;
    Schedule s(front.program.pipelines.at(0), DeviceProfile(), ScheduleOptions());
    if (s.instances.size() > test::kMaxVertices)
      continue;
    ++programs;
    // Slow: the reduction of the whole happens-before; a cpu stage's
    // device predecessors there.
    std::set<Edge> expected;
    for (auto [u, v] : test::slowReduction(s.instances.size(), happensBefore(s)))
      if (s.onHost(v) && !s.onHost(u))
        expected.insert({u, v});
    // Fast: the Sync ops, each before its cpu stage.
    std::set<Edge> got;
    std::vector<uint32_t> pending;
    for (const Op &op : s.ops) {
      if (op.kind == Op::Sync)
        pending.push_back(op.instance);
      if (op.kind == Op::Cpu) {
        for (uint32_t u : pending)
          got.insert({u, op.instance});
        pending.clear();
      }
      // A sync waits for a record made after its producer, already issued.
      if (op.kind == Op::Sync) {
        bool recorded = false;
        for (const Op &earlier : s.ops) {
          if (&earlier == &op)
            break;
          recorded |= earlier.kind == Op::Record && earlier.instance == op.instance &&
                      earlier.event == op.event;
        }
        CHECK(recorded);
      }
    }
    INFO(text);
    CHECK(got == expected);
    CHECK(s.syncs == got.size());
    syncs += got.size();
    // The waits too: a device stage waits for exactly the device stages of
    // other streams the reduction leaves it (a wait a sync already implies
    // is none).
    std::set<Edge> expectedWaits, gotWaits;
    for (auto [u, v] : test::slowReduction(s.instances.size(), happensBefore(s)))
      if (!s.onHost(u) && !s.onHost(v) && s.streamOf(u) != s.streamOf(v))
        expectedWaits.insert({u, v});
    for (const Op &op : s.ops)
      if (op.kind == Op::Wait)
        pending.push_back(op.instance);
      else if (op.kind == Op::Launch) {
        for (uint32_t u : pending)
          gotWaits.insert({u, op.instance});
        pending.clear();
      }
    CHECK(gotWaits == expectedWaits);
  }
  CHECK(programs > 200);
  CHECK(syncs > 100);
}

TEST_CASE("host: the critical path is the longest path through what every lowering "
          "keeps") {
  PIPEC_SEEDED(rng, 273);
  size_t anchored = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string text = test::randomWorkload(rng, true);
    FrontendRun front(text);
    if (front.errors)
      continue;
    Schedule s(front.program.pipelines.at(0), DeviceProfile(), ScheduleOptions());
    // Slow, by its definition: dependencies, stream order, the cpu stages
    // in turn, and a cpu stage before every device stage of a graph segment
    // launched after it (whose first stage is issued after it).
    const size_t n = s.instances.size();
    std::vector<double> finish(n, 0);
    double longest = 0;
    for (uint32_t v = 0; v < n; ++v) {
      double start = 0;
      for (uint32_t u : s.instances.deps().row(v))
        start = std::max(start, finish[u]);
      for (uint32_t u = 0; u < v; ++u) {
        bool sameChain = s.streamOf(u) == s.streamOf(v);
        bool beforeSegment = false;
        if (s.onHost(u) && !s.onHost(v)) {
          uint32_t first = v;
          for (uint32_t w = 0; w < v; ++w)
            if (!s.onHost(w) && s.segmentOf[w] == s.segmentOf[v]) {
              first = w;
              break;
            }
          beforeSegment = u < first;
          anchored += beforeSegment && !sameChain;
        }
        if (sameChain || beforeSegment)
          start = std::max(start, finish[u]);
      }
      finish[v] = start + s.instances.stage(v).durationUs;
      longest = std::max(longest, finish[v]);
    }
    INFO(text);
    CHECK(s.analysis.criticalPathUs == doctest::Approx(longest));
  }
  CHECK(anchored > 100);
}

TEST_CASE("host: a graph segment never holds a synchronisation") {
  PIPEC_SEEDED(rng, 271);
  size_t split = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string text = test::randomWorkload(rng, true);
    FrontendRun front(text);
    if (front.errors)
      continue;
    ScheduleOptions o;
    o.lowering = LoweringChoice::Graph;
    Schedule s(front.program.pipelines.at(0), DeviceProfile(), o);
    INFO(text);
    // A synchronising cpu stage (one with a Sync in the stream lowering's
    // ops) sits between segments: every device stage issued before it is in
    // an earlier segment than every one issued after it.
    Schedule streams(front.program.pipelines.at(0), DeviceProfile(), ScheduleOptions());
    std::set<uint32_t> syncing;
    bool synced = false;
    for (const Op &op : streams.ops) {
      if (op.kind == Op::Sync)
        synced = true;
      if (op.kind == Op::Cpu) {
        if (synced)
          syncing.insert(op.instance);
        synced = false;
      }
    }
    for (uint32_t c : syncing) {
      uint32_t before = 0, after = UINT32_MAX;
      for (uint32_t v = 0; v < s.instances.size(); ++v) {
        if (s.onHost(v))
          continue;
        if (v < c)
          before = std::max(before, s.segmentOf[v] + 1);
        else
          after = std::min(after, s.segmentOf[v]);
      }
      CHECK((after == UINT32_MAX || before <= after));
    }
    // Edges stay within segments, and the graph's host calls launch every
    // segment once, in order.
    for (auto [u, v] : s.graphEdges())
      CHECK(s.segmentOf[u] == s.segmentOf[v]);
    uint32_t launched = 0;
    for (const Op &op : s.graphOps)
      if (op.kind == Op::GraphLaunch)
        CHECK(op.event == launched++);
    CHECK(launched == s.segments);
    split += s.segments > 1;
  }
  CHECK(split > 20);
}

TEST_CASE("host: every bound holds in both lowerings, and the model keeps every "
          "ordering, with cpu stages, syncs and a bounded launch queue") {
  PIPEC_SEEDED(rng, 272);
  size_t checked = 0, blocked = 0;
  for (int trial = 0; trial < 500; ++trial) {
    DeviceProfile profile = trial % 3 ? randomProfile(rng) : DeviceProfile();
    std::string text = test::randomWorkload(rng, true);
    FrontendRun front(text, 0, profile);
    if (front.errors)
      continue;
    Schedule s(front.program.pipelines.at(0), profile, ScheduleOptions());
    auto model = runtime::makeSimBackend(profile);
    for (Lowering l : {Lowering::Streams, Lowering::Graph}) {
      runtime::RunOptions o;
      o.recordHost = false;
      auto r = model->run(s, l, o);
      REQUIRE(static_cast<bool>(r));
      INFO(text << "lowering " << spelling(l));
      CHECK(r->violations == 0);
      for (const Bound &b : s.analysis.bounds)
        CHECK(b.us <= r->makespanUs + 1e-6);
      // Host program order: in the stream lowering a cpu stage ends before
      // anything issued after it starts; in both, cpu stages in turn.
      uint32_t lastCpu = UINT32_MAX;
      for (uint32_t v = 0; v < s.instances.size(); ++v) {
        if (lastCpu != UINT32_MAX && (l == Lowering::Streams || s.onHost(v)))
          CHECK(r->start[v] >= r->end[lastCpu] - 1e-9);
        if (s.onHost(v))
          lastCpu = v;
      }
      // Where the host's time went adds up: nothing is counted twice.
      CHECK(r->hostUs.cpu + r->hostUs.issue + r->hostUs.api + r->hostUs.blocked <=
            r->timings.submitMedian + 1e-6);
      blocked += r->hostUs.blocked > 0;
      ++checked;
    }
  }
  CHECK(checked > 500);
  CHECK(blocked > 50);
}

TEST_CASE("host: graph segments keep every ordering between them with a wait, and "
          "nothing else holds a segment back but its launch stream's previous one") {
  PIPEC_SEEDED(rng, 274);
  size_t checked = 0, waits = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string text = test::randomWorkload(rng, true);
    FrontendRun front(text);
    if (front.errors)
      continue;
    DeviceProfile profile;
    Schedule s(front.program.pipelines.at(0), profile, ScheduleOptions());
    auto model = runtime::makeSimBackend(profile);
    runtime::RunOptions o;
    o.recordHost = false;
    auto graph = model->run(s, Lowering::Graph, o);
    REQUIRE(static_cast<bool>(graph));
    INFO(text);
    // Every kept ordering between device instances of two segments is a
    // wait, from an earlier segment, and holds in the run.
    for (uint32_t v = 0; v < s.instances.size(); ++v) {
      if (s.onHost(v))
        continue;
      std::set<uint32_t> waitsOf(s.graphWaits().row(v).begin(), s.graphWaits().row(v).end());
      for (uint32_t u : s.reduction.kept.row(v))
        if (!s.onHost(u) && s.segmentOf[u] != s.segmentOf[v])
          CHECK(waitsOf.count(u) == 1);
      for (uint32_t u : waitsOf) {
        CHECK(s.segmentOf[u] < s.segmentOf[v]);
        CHECK(graph->start[v] >= graph->end[u] + profile.waitLatencyUs - 1e-6);
        ++waits;
      }
    }
    // A segment's first node starts no sooner than the end of the segment
    // kGraphLaunchStreams before it (the same launch stream).
    std::vector<double> first(s.segments, 1e300), last(s.segments, -1);
    for (uint32_t v = 0; v < s.instances.size(); ++v)
      if (!s.onHost(v)) {
        first[s.segmentOf[v]] = std::min(first[s.segmentOf[v]], graph->start[v]);
        last[s.segmentOf[v]] = std::max(last[s.segmentOf[v]], graph->end[v]);
      }
    for (uint32_t g = kGraphLaunchStreams; g < s.segments; ++g)
      CHECK(first[g] >= last[g - kGraphLaunchStreams] - 1e-9);
    ++checked;
  }
  CHECK(checked > 300);
  CHECK(waits > 100);
}

TEST_CASE("host: a sync blocks the host until its producer ends, then wakes") {
  DeviceProfile p;
  p.launchUs = 1;
  p.recordUs = 0;
  p.syncLatencyUs = 3;
  FrontendRun front("pipeline p { stream s; stage K on s kernel 100us;"
                    " stage C cpu 10us depends_on(K); stage L on s kernel 5us; }",
                    0, p);
  REQUIRE(front.errors == 0);
  Schedule s(front.program.pipelines.at(0), p, ScheduleOptions());
  CHECK(s.syncs == 1);
  auto r = runtime::makeSimBackend(p)->run(s, Lowering::Streams, runtime::RunOptions());
  REQUIRE(static_cast<bool>(r));
  // K: launched at 1, runs 100 us; its record completes when the stream
  // moves on (stream_gap_us); C: after the wake-up.
  CHECK(r->start[1] == doctest::Approx(r->end[0] + p.streamGapUs + 3));
  CHECK(r->end[1] == doctest::Approx(r->start[1] + 10));
  // L is launched only after C: its launch call starts when C ends.
  CHECK(r->start[2] >= r->end[1] + 1 - 1e-9);
  CHECK(r->hostUs.cpu == doctest::Approx(10));
  CHECK(r->hostUs.blocked == doctest::Approx(r->start[1] - 1));
}

TEST_CASE("host: issue= is paid per launch by streams, not by a graph replay") {
  DeviceProfile p;
  FrontendRun front("pipeline p { iterations 4; stream s;"
                    " stage K on s kernel 1us [issue=50us]; }",
                    0, p);
  REQUIRE(front.errors == 0);
  Schedule s(front.program.pipelines.at(0), p, ScheduleOptions());
  auto model = runtime::makeSimBackend(p);
  auto streams = model->run(s, Lowering::Streams, runtime::RunOptions());
  auto graph = model->run(s, Lowering::Graph, runtime::RunOptions());
  REQUIRE(static_cast<bool>(streams));
  REQUIRE(static_cast<bool>(graph));
  CHECK(streams->hostUs.issue == doctest::Approx(200));
  CHECK(graph->hostUs.issue == 0);
  // The host is the bottleneck as streams: 4 x (50 + launch) at least.
  CHECK(streams->timings.replayMedian >= 4 * (50 + p.launchUs));
  CHECK(graph->timings.replayMedian < streams->timings.replayMedian);
}

TEST_CASE("host: the model without dispatch runs the program as if it had no issue=") {
  // import --report's "own launches" what-if is this mode of the model on
  // the recorded schedule; it must be the run of the program without its
  // issue= times, to the bit, in both lowerings.
  PIPEC_SEEDED(rng, 361);
  size_t compared = 0, differed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    DeviceProfile profile = trial % 2 ? randomProfile(rng) : DeviceProfile();
    const std::string text = test::randomWorkload(rng, true);
    std::string without = text;
    for (size_t at; (at = without.find(", issue=")) != std::string::npos;)
      without.erase(at, without.find(']', at) - at);
    FrontendRun front(text, 0, profile), plain(without, 0, profile);
    if (front.errors || plain.errors)
      continue;
    Schedule s(front.program.pipelines.at(0), profile, ScheduleOptions());
    Schedule t(plain.program.pipelines.at(0), profile, ScheduleOptions());
    bool sameStreams = true; // the assignment weighs issue= too
    for (uint32_t v = 0; v < s.instances.size(); ++v)
      sameStreams &= s.streamOf(v) == t.streamOf(v);
    if (!sameStreams)
      continue;
    INFO(text);
    for (Lowering l : {Lowering::Streams, Lowering::Graph}) {
      auto mode = runtime::makeSimBackend(profile, /*dispatch=*/false)->run(s, l, {});
      auto zeroed = runtime::makeSimBackend(profile)->run(t, l, {});
      auto paid = runtime::makeSimBackend(profile)->run(s, l, {});
      REQUIRE(static_cast<bool>(mode));
      REQUIRE(static_cast<bool>(zeroed));
      REQUIRE(static_cast<bool>(paid));
      CHECK(mode->start == zeroed->start);
      CHECK(mode->end == zeroed->end);
      CHECK(mode->hostUs.issue == 0);
      CHECK(mode->timings.submitMedian == zeroed->timings.submitMedian);
      differed += paid->end != mode->end;
    }
    ++compared;
  }
  CHECK(compared > 150);
  CHECK(differed > 20); // issue= mattered in enough of them to tell
}

TEST_CASE("host: a full launch queue blocks the host until a launch starts") {
  DeviceProfile p;
  p.launchQueueDepth = 2;
  p.launchUs = 1;
  FrontendRun front("pipeline p { iterations 10; stream s; stage K on s kernel 100us; }", 0,
                    p);
  REQUIRE(front.errors == 0);
  Schedule s(front.program.pipelines.at(0), p, ScheduleOptions());
  auto r = runtime::makeSimBackend(p)->run(s, Lowering::Streams, runtime::RunOptions());
  REQUIRE(static_cast<bool>(r));
  CHECK(r->hostUs.blocked > 500);
  // The device still runs back to back: the queue never ran dry.
  for (uint32_t v = 1; v < 10; ++v)
    CHECK(r->start[v] == doctest::Approx(r->end[v - 1] + p.streamGapUs));
  // The host's last call returns once the 8th launch has started.
  CHECK(r->timings.submitMedian >= r->start[7] - 1e-9);
}

TEST_CASE("host: each device's host thread: exactly the waits, syncs and joins the "
          "reduction leaves, and the model keeps every ordering") {
  // Programs of 2 to 4 devices with cpu stages on each device's thread,
  // against the slow happens-before (host order per thread). A cpu stage
  // before another thread's work is a join; before its own thread's, no
  // call at all. Each wait and sync binds to its producer's record. On the
  // model: no violation, every bound under the run, each thread's program
  // order kept, and cpu stages of two threads do overlap somewhere.
  PIPEC_SEEDED(rng, 273);
  size_t programs = 0, joins = 0, syncs = 0, overlapped = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const DeviceProfile profile = trial % 3 ? randomProfile(rng) : DeviceProfile();
    const std::string text = test::randomHostThreads(rng);
    INFO(text);
    FrontendRun front(text, 0, profile);
    REQUIRE(front.errors == 0);
    Schedule s(front.program.pipelines.at(0), profile, ScheduleOptions());
    const size_t n = s.instances.size();
    if (n > test::kMaxVertices)
      continue;
    ++programs;
    const std::set<Edge> reduced = test::slowReduction(n, happensBefore(s));
    std::set<Edge> kept, wantWaits, wantSyncs, wantJoins;
    for (uint32_t v = 0; v < n; ++v)
      for (uint32_t u : s.reduction.kept.row(v))
        kept.insert({u, v});
    CHECK(kept == reduced);
    for (auto [u, v] : reduced) {
      if (s.onHost(u) && s.threadOf(u) != s.threadOf(v))
        wantJoins.insert({u, v});
      else if (!s.onHost(u) && s.onHost(v))
        wantSyncs.insert({u, v});
      else if (!s.onHost(u) && s.streamOf(u) != s.streamOf(v))
        wantWaits.insert({u, v});
    }
    // The calls before each launch or cpu stage are its waits, syncs and
    // joins; a wait or sync binds to its event's latest record, made right
    // after its producer.
    std::set<Edge> gotWaits, gotSyncs, gotJoins;
    std::vector<const Op *> pending;
    std::map<uint32_t, uint32_t> recordOf; // event -> producer of its latest record
    for (const Op &op : s.ops) {
      switch (op.kind) {
      case Op::Record:
        recordOf[op.event] = op.instance;
        break;
      case Op::Wait:
      case Op::Sync:
        REQUIRE(recordOf.count(op.event));
        CHECK(recordOf[op.event] == op.instance);
        pending.push_back(&op);
        break;
      case Op::Join:
        pending.push_back(&op);
        break;
      case Op::Launch:
      case Op::Cpu:
        for (const Op *before : pending) {
          std::set<Edge> &into = before->kind == Op::Wait   ? gotWaits
                                 : before->kind == Op::Sync ? gotSyncs
                                                            : gotJoins;
          into.insert({before->instance, op.instance});
          if (before->kind == Op::Wait)
            CHECK(op.kind == Op::Launch);
          if (before->kind == Op::Sync)
            CHECK(op.kind == Op::Cpu);
        }
        pending.clear();
        break;
      case Op::GraphLaunch:
        FAIL("no graph launch in the stream lowering");
        break;
      }
    }
    CHECK(gotWaits == wantWaits);
    CHECK(gotSyncs == wantSyncs);
    CHECK(gotJoins == wantJoins);
    CHECK(s.joins == gotJoins.size());
    joins += gotJoins.size();
    syncs += gotSyncs.size();

    auto r =
        runtime::makeSimBackend(profile)->run(s, Lowering::Streams, runtime::RunOptions());
    REQUIRE(static_cast<bool>(r));
    CHECK(r->violations == 0);
    for (const Bound &b : s.analysis.bounds)
      CHECK(b.us <= r->makespanUs + 1e-6);
    for (auto [u, v] : happensBefore(s))
      CHECK(r->start[v] >= r->end[u] - 1e-9);
    // Each thread's time is its own: none past the replay's submit time,
    // and together they are the replay's.
    REQUIRE(r->hostThreadsUs.size() == s.pipeline.devices.size());
    runtime::HostTime sum;
    for (const runtime::HostTime &t : r->hostThreadsUs) {
      CHECK(t.cpu + t.issue + t.api + t.blocked <= r->timings.submitMedian + 1e-6);
      sum.cpu += t.cpu, sum.issue += t.issue, sum.api += t.api, sum.blocked += t.blocked;
    }
    CHECK(sum.cpu == doctest::Approx(r->hostUs.cpu));
    CHECK(sum.api == doctest::Approx(r->hostUs.api));
    CHECK(sum.blocked == doctest::Approx(r->hostUs.blocked));
    bool overlap = false;
    for (uint32_t u = 0; u < n; ++u)
      for (uint32_t v = u + 1; v < n; ++v)
        overlap |= s.onHost(u) && s.onHost(v) && s.threadOf(u) != s.threadOf(v) &&
                   r->start[v] < r->end[u] - 1e-9 && r->start[u] < r->end[v] - 1e-9;
    overlapped += overlap;
  }
  CHECK(programs > 500);
  CHECK(joins > 200);
  CHECK(syncs > 200);
  CHECK(overlapped > 50);
}
