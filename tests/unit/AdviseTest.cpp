// Advice you can apply and trust: every suggestion, applied as the file
// `--apply` writes, gives the objective it announced and computes what the
// program computed — every ordering the file states kept, every read seeing
// the same write, no race — checked against a slow, obvious implementation
// on random programs (streams, buffers, rings, @prev(k), cpu stages). The
// fast check (compiler/schedule/Meaning) answers as the slow one does, and
// deliberate mutations (a ring on state, a dropped stream order) fail both.

#include "FrontendHelpers.h"
#include "ProgramOrder.h"
#include "RandomPrograms.h"
#include "SlowHappensBefore.h"

#include "compiler/format/Edit.h"
#include "compiler/schedule/Meaning.h"
#include "compiler/schedule/Schedule.h"
#include "model/DeviceModel.h"
#include "model/Model.h"
#include "model/SimBackend.h"
#include "runtime/advise/Advisor.h"

#include "llvm/ADT/StringMap.h"

#include <doctest/doctest.h>

#include "Seed.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>

using namespace pipec;
using pipec::test::FrontendRun;

namespace {

/// The slow, obvious verdict: why `after` computes something else than
/// `before`, or "" when it computes the same.
std::string slowVerdict(const Schedule &before, const Schedule &after) {
  const program::Pipeline &p = before.pipeline, &q = after.pipeline;
  if (p.iterations != q.iterations)
    return "stages";
  llvm::StringMap<uint32_t> inAfter;
  for (uint32_t k = 0; k < q.stages.size(); ++k)
    inAfter[q.stages[k].name] = k;
  // A pinned copy's wait (the host's, inside a pageable copy's call) is
  // gone; every other stage is there, by name.
  size_t gone = 0;
  for (const program::Stage &st : p.stages)
    if (!inAfter.count(st.name)) {
      if (!program::isPageableWait(st))
        return "stages";
      ++gone;
    }
  if (p.stages.size() - gone != q.stages.size())
    return "stages";
  const Instances &bi = before.instances, &ai = after.instances;
  auto kept = [&](uint32_t v) { return inAfter.count(bi.stage(v).name) > 0; };
  auto map = [&](uint32_t v) { return ai.idOf(inAfter[bi.stage(v).name], bi.iterationOf(v)); };
  // Happens-before in `after`: closure of dependencies, stream order and
  // host order, by brute force.
  std::vector<std::vector<uint8_t>> reach = test::happensBefore(after);
  // Every declared dependency and every stream order of stages whose data
  // is not declared, kept.
  std::vector<int64_t> lastOn(before.hostChain() + 1, -1);
  for (uint32_t v = 0; v < bi.size(); ++v) {
    llvm::ArrayRef<uint32_t> deps = bi.deps().row(v);
    for (size_t e = 0; e < deps.size(); ++e)
      if (bi.inferredFrom(bi.deps().begin[v] + e) < 0 && kept(deps[e]) && kept(v) &&
          !reach[map(deps[e])][map(v)])
        return "dependency " + bi.name(deps[e]) + " -> " + bi.name(v);
    if (before.onHost(v))
      continue;
    int64_t &prev = lastOn[before.streamOf(v)];
    if (prev >= 0 &&
        (bi.stage(uint32_t(prev)).accesses.empty() || bi.stage(v).accesses.empty()) &&
        !reach[map(uint32_t(prev))][map(v)])
      return "stream order " + bi.name(uint32_t(prev)) + " -> " + bi.name(v);
    prev = v;
  }
  // Which write each read sees: scan back in program order.
  // (By the writer's name: a pinned copy's wait, gone, moves the indices.)
  auto writers = [&](const program::Pipeline &x) {
    std::vector<test::Touch> t = test::programOrder(x);
    std::vector<std::pair<std::string, int64_t>> out;
    for (size_t i = 0; i < t.size(); ++i) {
      if (t[i].write)
        continue;
      std::pair<std::string, int64_t> w{"", -1};
      for (size_t j = i; j-- > 0;)
        if (t[j].write && t[j].buffer == t[i].buffer && t[j].slot == t[i].slot) {
          w = {x.stages[t[j].stage].name, t[j].iteration};
          break;
        }
      out.push_back(w);
    }
    return out;
  };
  if (writers(p) != writers(q))
    return "a read sees another write";
  // No race in `after`: every two accesses of one slot, one a write, ordered.
  std::vector<test::Touch> t = test::programOrder(q);
  for (size_t i = 0; i < t.size(); ++i)
    for (size_t j = i + 1; j < t.size(); ++j) {
      const test::Touch &x = t[i], &y = t[j];
      if (x.buffer != y.buffer || x.slot != y.slot || (!x.write && !y.write))
        continue;
      uint32_t u = ai.idOf(x.stage, x.iteration), v = ai.idOf(y.stage, y.iteration);
      if (u != v && !reach[u][v] && !reach[v][u])
        return "race";
    }
  return "";
}

/// The program of a suggestion, compiled again from the text --apply writes.
struct Applied {
  explicit Applied(const std::string &text) : front(text) {}
  FrontendRun front;
};

/// What advise needs, on the default profile's model: the backend, the
/// costs, options of 10 replays.
struct AdviseSetup {
  AdviseSetup()
      : deviceModel(DeviceProfile()), profile(deviceModel.profile()),
        backend(deviceModel.backend()) {
    options.replays = 10;
    options.schedule.replays = 10;
    deviceModel.answerFor(options.schedule);
  }
  const model::Model deviceModel;
  const DeviceProfile &profile;
  std::unique_ptr<runtime::Backend> backend;
  runtime::AdviseOptions options;
};

} // namespace

TEST_CASE("advise: every suggestion, applied, gives what it announced and computes the same") {
  PIPEC_SEEDED(rng, 28);
  size_t suggestions = 0, kinds[5] = {0, 0, 0, 0, 0};
  for (int trial = 0; trial < 160; ++trial) {
    // Streams and kernels (with cpu stages and issue= half the time), or
    // buffers, rings and @prev(k).
    // A fifth with stages that skip iterations.
    const bool skips = trial % 5 == 4;
    std::string text = trial % 3 == 2 ? test::randomData(rng, trial % 2, trial % 4 == 1, skips)
                                      : test::randomWorkload(rng, trial % 2 == 1, skips);
    // First, an upload of pageable memory that pinning speeds up (and
    // frees the host of), whatever the seed.
    if (trial == 0)
      text = "pipeline p {\n  stream s;\n  buffer h 20MB host;\n  buffer d 20MB;\n"
             "  stage F on s kernel 500us [issue=10us];\n"
             "  stage U on s copy h2d [pageable] reads(h) writes(d);\n"
             "  stage N on s kernel 300us [issue=10us] reads(d);\n}\n";
    FrontendRun front(text);
    if (front.errors)
      continue;
    AdviseSetup setup;
    const DeviceProfile &profile = setup.profile;
    runtime::Backend &backend = *setup.backend;
    runtime::AdviseOptions &options = setup.options;
    if (trial % 5 == 4 && !front.program.pipelines[0].stages.empty())
      options.objective = {runtime::Objective::StageEnd,
                           front.program.pipelines[0].stages.back().name, trial % 2 == 1};
    const program::Pipeline &p = front.program.pipelines[0];
    Schedule compiled(p, profile, options.schedule);
    auto advice =
        runtime::advise({&front.file, text}, compiled, setup.deviceModel, backend, options);
    REQUIRE(static_cast<bool>(advice));
    for (const runtime::Suggestion &s : advice->suggestions) {
      INFO(text << s.change);
      CHECK(s.beforeUs - s.afterUs >= options.minGainUs);
      CHECK(s.afterUs <= (1 - options.minGainFraction) * s.beforeUs + 1e-9);
      if (s.graph)
        continue;
      ++suggestions;
      kinds[s.change.rfind("move", 0) == 0     ? 0
            : s.change.rfind("raise", 0) == 0  ? 1
            : s.change.rfind("deepen", 0) == 0 ? 2
            : s.change.rfind("pin", 0) == 0    ? 4
                                               : 3] += 1;
      // The file --apply writes checks clean, without a warning the
      // original had not.
      Applied applied(s.text);
      INFO(s.text);
      REQUIRE(applied.front.errors == 0);
      for (const test::Captured &w : applied.front.all) {
        INFO(w.message);
        CHECK(front.has(w.message));
      }
      const program::Pipeline &q = applied.front.program.pipelines.at(0);
      Schedule after(q, profile, options.schedule);
      // It gives the objective announced.
      auto again = runtime::measure(after, backend, 10, Lowering::Streams, options.objective);
      REQUIRE(static_cast<bool>(again));
      CHECK(*again == doctest::Approx(s.afterUs).epsilon(1e-9));
      // It computes what the program computed.
      CHECK(slowVerdict(compiled, after) == "");
      CHECK(!changedMeaning(compiled, after));
      // A cpu stage stays on the host thread.
      for (const program::Stage &st : q.stages)
        if (st.kind() == StageKind::Cpu)
          CHECK(st.stream == program::kNoStream);
    }
  }
  CHECK(suggestions > 20);
  CHECK(kinds[0] > 3); // moves
  CHECK(kinds[1] > 3); // priorities
  MESSAGE(kinds[4] << " pinned copies");
  CHECK(kinds[4] > 0); // pageable copies pinned
}

TEST_CASE("advise: on several devices, each suggestion keeps every stage on its device") {
  // Random programs on 2 to 4 devices (streams, peer copies, collectives;
  // half with buffers on each device): every suggestion, applied, checks
  // clean, runs each stage on the device it ran on, gives what it announced
  // on the same model and computes the same.
  PIPEC_SEEDED(rng, 31);
  size_t suggestions = 0;
  for (int trial = 0; trial < 60; ++trial) {
    // First, one where B, held back on s1 behind A, gains from a stream of
    // its own: declared on g1, B's device (the first, g0, cannot touch b1).
    std::string text = trial == 0  ? "version 4;\npipeline p {\n  device g0;\n  device g1;\n"
                                     "  stream s0 on g0;\n  stream s1 on g1;\n"
                                     "  buffer a1 1MB on g1;\n  buffer b1 1MB on g1;\n"
                                     "  stage A on s1 kernel 500us writes(a1);\n"
                                     "  stage B on s1 kernel 400us writes(b1);\n"
                                     "  stage C on s0 kernel 10us;\n}\n"
                       : trial % 2 ? test::randomDeviceData(rng, /*declared=*/false)
                                   : test::randomProgram(rng, /*allowAuto=*/false,
                                                         /*conditional=*/false, 2 + rng() % 3);
    FrontendRun front(text);
    INFO(text);
    REQUIRE(front.errors == 0);
    AdviseSetup setup;
    const DeviceProfile &profile = setup.profile;
    runtime::Backend &backend = *setup.backend;
    runtime::AdviseOptions &options = setup.options;
    // A lower bar than a user's, so that suggestions come often enough.
    options.minGainFraction = 0.002;
    const program::Pipeline &p = front.program.pipelines[0];
    Schedule compiled(p, profile, options.schedule);
    auto advice =
        runtime::advise({&front.file, text}, compiled, setup.deviceModel, backend, options);
    REQUIRE(static_cast<bool>(advice));
    CHECK(!advice->graph.evaluated); // the answer compile gives
    if (trial == 0)
      REQUIRE(advice->suggestions.size() == 1);
    std::map<std::string, uint32_t> deviceOf;
    for (const program::Stage &st : p.stages)
      deviceOf[st.name] = p.streams[st.stream].device;
    for (const runtime::Suggestion &s : advice->suggestions) {
      INFO(s.change);
      CHECK(!s.graph);
      CHECK(s.afterUs <= (1 - options.minGainFraction) * s.beforeUs + 1e-9);
      ++suggestions;
      Applied applied(s.text);
      INFO(s.text);
      REQUIRE(applied.front.errors == 0);
      const program::Pipeline &q = applied.front.program.pipelines.at(0);
      REQUIRE(q.devices.size() == p.devices.size());
      for (const program::Stage &st : q.stages) {
        REQUIRE(deviceOf.count(st.name));
        CHECK(q.devices[q.streams[st.stream].device].name ==
              p.devices[deviceOf[st.name]].name);
      }
      Schedule after(q, profile, options.schedule);
      auto again = runtime::measure(after, backend, 10, Lowering::Streams, options.objective);
      REQUIRE(static_cast<bool>(again));
      CHECK(*again == doctest::Approx(s.afterUs).epsilon(1e-9));
      CHECK(slowVerdict(compiled, after) == "");
      CHECK(!changedMeaning(compiled, after));
    }
  }
  CHECK(suggestions > 10);
}

TEST_CASE("meaning: the fast check answers as the slow one on random changes") {
  // Random programs, and random edits of them: a stage moved, a stream's
  // priority, a ring deepened (state too), dependencies added.
  PIPEC_SEEDED(rng, 128);
  size_t same = 0, changed = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const bool skips = trial % 5 == 4;
    std::string text = trial % 2 ? test::randomData(rng, trial % 4 == 1, trial % 3 == 0, skips)
                                 : test::randomWorkload(rng, trial % 4 == 0, skips);
    FrontendRun front(text);
    if (front.errors)
      continue;
    const program::Pipeline &p = front.program.pipelines[0];
    std::vector<Edit> edits;
    for (int e = 1 + int(rng() % 3); e-- > 0;) {
      const program::Stage &st = p.stages[rng() % p.stages.size()];
      switch (rng() % 3) {
      case 0:
        if (st.kind() != StageKind::Cpu && !p.streams.empty())
          edits.push_back(Edit::setStream(st.name, p.streams[rng() % p.streams.size()].name));
        break;
      case 1:
        if (!p.buffers.empty()) {
          const program::Buffer &b = p.buffers[rng() % p.buffers.size()];
          if (!b.stateDeclared)
            edits.push_back(Edit::setSlots(b.name, b.slots + 1 + uint32_t(rng() % 2)));
        }
        break;
      default:
        if (!p.streams.empty())
          edits.push_back(Edit::setPriority(p.streams[rng() % p.streams.size()].name,
                                            rng() % 2 ? "high" : "low"));
      }
    }
    auto changedText = applyEdits(front.file, text, p.name, edits);
    REQUIRE(static_cast<bool>(changedText));
    FrontendRun other(*changedText);
    if (other.errors)
      continue;
    Schedule before(p, DeviceProfile(), ScheduleOptions());
    Schedule after(other.program.pipelines[0], DeviceProfile(), ScheduleOptions());
    INFO(text << *changedText);
    std::string slow = slowVerdict(before, after);
    std::optional<std::string> fast = changedMeaning(before, after);
    CHECK(slow.empty() == !fast);
    (slow.empty() ? same : changed) += 1;
  }
  CHECK(same > 50);
  CHECK(changed > 50);
}

TEST_CASE("meaning: a ring on state and a dropped stream order are caught") {
  // h is read before it is written in each iteration: state. A second slot
  // would make iteration t read what t-2 wrote.
  std::string text = "pipeline p {\n  iterations 4;\n  buffer h 1MB;\n  stream s;\n"
                     "  stage Step on s kernel 10us reads(h) writes(h);\n}\n";
  FrontendRun front(text);
  REQUIRE(front.errors == 0);
  CHECK(front.program.pipelines[0].buffers[0].state);
  auto ringed = applyEdits(front.file, text, "p", {Edit::setSlots("h", 2)});
  REQUIRE(static_cast<bool>(ringed));
  FrontendRun mutated(*ringed);
  REQUIRE(mutated.errors == 0);
  Schedule before(front.program.pipelines[0], DeviceProfile(), ScheduleOptions());
  Schedule after(mutated.program.pipelines[0], DeviceProfile(), ScheduleOptions());
  CHECK(slowVerdict(before, after) == "a read sees another write");
  REQUIRE(changedMeaning(before, after));
  CHECK(*changedMeaning(before, after) ==
        "'Step' of iteration 1 would read 'h' as written by no stage (its value before the "
        "pipeline), not by 'Step' of iteration 0");

  // Two kernels on one stream, no data declared: moving one away drops the
  // only thing that orders them.
  std::string streams = "pipeline q {\n  stream a;\n  stream b;\n"
                        "  stage A on a kernel 10us;\n  stage B on a kernel 10us;\n"
                        "  stage C on b kernel 1us;\n}\n";
  FrontendRun two(streams);
  REQUIRE(two.errors == 0);
  auto moved = applyEdits(two.file, streams, "q", {Edit::setStream("B", "b")});
  REQUIRE(static_cast<bool>(moved));
  FrontendRun movedRun(*moved);
  Schedule x(two.program.pipelines[0], DeviceProfile(), ScheduleOptions());
  Schedule y(movedRun.program.pipelines[0], DeviceProfile(), ScheduleOptions());
  CHECK(slowVerdict(x, y) == "stream order A -> B");
  REQUIRE(changedMeaning(x, y));
  CHECK(changedMeaning(x, y)->find("'B' would no longer follow 'A'") != std::string::npos);
  // Kept as a dependency, the move computes the same.
  auto kept = applyEdits(two.file, streams, "q",
                         {Edit::setStream("B", "b"), Edit::addDependency("B", "A")});
  REQUIRE(static_cast<bool>(kept));
  FrontendRun keptRun(*kept);
  Schedule z(keptRun.program.pipelines[0], DeviceProfile(), ScheduleOptions());
  CHECK(slowVerdict(x, z) == "");
  CHECK(!changedMeaning(x, z));
}

TEST_CASE("gap: each cause is what taking it away alone saves; all at once and what remains "
          "add up to the gap") {
  // Each line against its own run on the backend (another path than the
  // gap's): the profile with that cost alone taken away.
  struct Alone {
    const char *cause;
    void (*takeAway)(DeviceProfile &);
  };
  const Alone alone[] = {
      {"cross-stream waits resolving", [](DeviceProfile &p) { p.waitLatencyUs = 0; }},
      {"host-function latency", [](DeviceProfile &p) { p.hostFuncLatencyUs = 0; }},
      {"copy engines starting transfers", [](DeviceProfile &p) { p.copyLatencyUs = 0; }},
      {"gaps between back-to-back stages of a stream",
       [](DeviceProfile &p) { p.streamGapUs = 0; }},
  };
  PIPEC_SEEDED(rng, 29);
  size_t explained = 0, checkedAlone = 0;
  for (int trial = 0; trial < 120; ++trial) {
    std::string text = test::randomWorkload(rng, trial % 2 == 1, trial % 5 == 4);
    FrontendRun front(text);
    if (front.errors)
      continue;
    INFO(text);
    DeviceProfile profile;
    Schedule s(front.program.pipelines[0], profile, ScheduleOptions());
    runtime::RunOptions options;
    options.replays = 1;
    auto run = runtime::makeSimBackend(profile)->run(s, Lowering::Streams, options);
    REQUIRE(static_cast<bool>(run));
    const double bound = s.analysis.lowerBoundUs;
    std::vector<runtime::GapPart> gap = runtime::explainGap(s, profile);
    REQUIRE(gap.size() >= 3);
    const runtime::GapPart &all = gap[gap.size() - 2], &rest = gap.back();
    CHECK(all.cause == runtime::kAllAtOnce);
    CHECK(rest.cause == runtime::kWhatRemains);
    // Each part is rounded to the picosecond.
    CHECK(std::fabs(all.us + rest.us - (run->makespanUs - bound)) <= 1e-5);
    CHECK(rest.us >= 0);
    for (const Alone &a : alone) {
      DeviceProfile without = profile;
      a.takeAway(without);
      auto fixed = runtime::makeSimBackend(without)->run(s, Lowering::Streams, options);
      REQUIRE(static_cast<bool>(fixed));
      const double saved =
          std::max(bound, run->makespanUs) - std::max(bound, fixed->makespanUs);
      const runtime::GapPart *part = nullptr;
      for (const runtime::GapPart &g : gap)
        if (g.cause.rfind(a.cause, 0) == 0)
          part = &g;
      REQUIRE(part != nullptr);
      INFO(a.cause);
      CHECK(std::fabs(part->us - saved) <= 1e-5);
      CHECK((part->us < 0) == (part->cause.find("slower without it") != std::string::npos));
      checkedAlone += saved != 0;
    }
    explained += all.us > 1;
  }
  CHECK(explained > 30);
  CHECK(checkedAlone > 30); // the removals changed something often enough to tell
}

TEST_CASE("gap: each cause's share is its Shapley value, the mean over every order of "
          "taking the causes away; the shares add up to all of them at once") {
  // The slow, obvious game: every one of the 8! orders of taking the
  // causes away, each cause credited what its removal saves then.
  using Change = void (*)(DeviceProfile &, sim::ModelOptions &);
  const Change change[] = {
      [](DeviceProfile &p, sim::ModelOptions &m) {
        p.launchUs = p.recordUs = p.waitUs = 0;
        m.dispatch = false;
      },
      [](DeviceProfile &p, sim::ModelOptions &) {
        p.syncLatencyUs = 0;
        p.launchQueueDepth = std::numeric_limits<unsigned>::max();
      },
      [](DeviceProfile &p, sim::ModelOptions &) { p.waitLatencyUs = 0; },
      [](DeviceProfile &p, sim::ModelOptions &) { p.hostFuncLatencyUs = 0; },
      [](DeviceProfile &p, sim::ModelOptions &) { p.copyLatencyUs = 0; },
      [](DeviceProfile &p, sim::ModelOptions &) { p.streamGapUs = 0; },
      [](DeviceProfile &, sim::ModelOptions &m) { m.queuePerStream = true; },
      [](DeviceProfile &, sim::ModelOptions &m) { m.smsPerKernel = true; },
  };
  constexpr size_t n = sizeof change / sizeof change[0];
  PIPEC_SEEDED(rng, 63);
  size_t games = 0, interacting = 0, sampled = 0;
  for (int trial = 0; trial < 40; ++trial) {
    std::string text = test::randomWorkload(rng, trial % 2 == 1, trial % 5 == 4);
    FrontendRun front(text);
    if (front.errors)
      continue;
    INFO(text);
    DeviceProfile profile;
    Schedule s(front.program.pipelines[0], profile, ScheduleOptions());
    const double bound = s.analysis.lowerBoundUs;
    std::map<uint32_t, double> memo;
    auto makespan = [&](uint32_t mask) {
      auto [it, added] = memo.try_emplace(mask, 0.0);
      if (added) {
        DeviceProfile p = profile;
        sim::ModelOptions m;
        m.recordHost = false;
        m.extrapolate = true;
        for (size_t i = 0; i < n; ++i)
          if (mask >> i & 1)
            change[i](p, m);
        sim::ReplayTrace t = sim::simulate(s, Lowering::Streams, p, m);
        it->second = std::max(bound, *std::max_element(t.end.begin(), t.end.end()) -
                                         *std::min_element(t.start.begin(), t.start.end()));
      }
      return it->second;
    };
    std::vector<double> slow(n, 0.0);
    std::vector<size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    double orders = 0;
    do {
      uint32_t mask = 0;
      for (size_t i : order) {
        const double before = makespan(mask);
        mask |= 1u << i;
        slow[i] += before - makespan(mask);
      }
      ++orders;
    } while (std::next_permutation(order.begin(), order.end()));
    std::vector<runtime::GapPart> gap = runtime::explainGap(s, profile);
    REQUIRE(gap.size() == n + 2);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) {
      INFO(gap[i].cause);
      CHECK(std::fabs(gap[i].shareUs - slow[i] / orders) <= 1e-5);
      sum += gap[i].shareUs;
      interacting += std::fabs(gap[i].shareUs - gap[i].us) > 0.01;
    }
    CHECK(std::fabs(sum - gap[n].us) <= 1e-5 * n);
    // Past its budget, over a few orders: estimates, which add up as
    // exactly, and say so.
    std::vector<runtime::GapPart> rough = runtime::explainGap(s, profile, 1);
    double roughSum = 0;
    for (size_t i = 0; i < n; ++i) {
      roughSum += rough[i].shareUs;
      CHECK(rough[i].us == gap[i].us);
    }
    CHECK(std::fabs(roughSum - rough[n].us) <= 1e-5 * n);
    sampled += rough[n].cause.find("estimated over") != std::string::npos;
    ++games;
  }
  CHECK(games > 25);
  CHECK(sampled > 5);
  CHECK(interacting > 5); // causes whose share is not what they save alone
}

TEST_CASE("gap: with no SM sharing (a mode of the model), every kernel takes its time alone") {
  // The "kernels sharing the SMs" what-if: each kernel has its device's SMs
  // to itself, so once resident it runs as it would alone: its declared
  // time, from its first block to its last; and no run of it is slower
  // than the run with sharing.
  PIPEC_SEEDED(rng, 31);
  size_t kernels = 0, shared = 0;
  for (int trial = 0; trial < 150; ++trial) {
    std::string text = test::randomWorkload(rng, trial % 2 == 1, trial % 5 == 4);
    FrontendRun front(text);
    if (front.errors)
      continue;
    INFO(text);
    DeviceProfile profile;
    profile.sms = 2 + rng() % 8; // few SMs: kernels contend for them
    Schedule s(front.program.pipelines[0], profile, ScheduleOptions());
    sim::ModelOptions alone;
    alone.smsPerKernel = true;
    sim::ReplayTrace t = sim::simulate(s, Lowering::Streams, profile, alone);
    sim::ReplayTrace sharing =
        sim::simulate(s, Lowering::Streams, profile, sim::ModelOptions());
    REQUIRE(t.end.size() == s.instances.size());
    for (uint32_t v = 0; v < s.instances.size(); ++v) {
      const program::Stage &st = s.instances.stage(v);
      if (st.kind() != StageKind::Kernel)
        continue;
      ++kernels;
      // (Times are on a picosecond grid, each wave's end rounded up.)
      CHECK(std::fabs(t.end[v] - t.start[v] - st.durationUs) <= 1e-3);
      shared += sharing.end[v] - sharing.start[v] > st.durationUs + 1e-6;
    }
  }
  CHECK(kernels > 200);
  CHECK(shared > 20); // with sharing, kernels did run longer than alone
}
