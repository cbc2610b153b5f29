// Version 2's data rules, cross-checked against slow, obvious
// implementations on random programs with buffers: the dependencies
// `sync inferred` adds are exactly those the contract requires, instance by
// instance, and `sync declared` reports a race exactly when a conflicting
// pair of instances is unordered.

#include "FrontendHelpers.h"
#include "ProgramOrder.h"
#include "RandomPrograms.h"
#include "SlowHappensBefore.h"

#include "compiler/schedule/Races.h"
#include "compiler/schedule/Schedule.h"

#include <doctest/doctest.h>

#include "Seed.h"

#include <map>
#include <random>
#include <set>

using namespace pipec;
using pipec::test::FrontendRun;
using pipec::test::programOrder;
using pipec::test::Touch;

namespace {

/// The contract, literally and slowly: for each access, a read follows the
/// latest write of its slot before it in program order; a write follows the
/// latest write and every read since it (every earlier read, when the slot
/// was never written). As (stage, iteration) pairs, self pairs dropped.
std::set<std::pair<std::pair<uint32_t, uint32_t>, std::pair<uint32_t, uint32_t>>>
requiredPairs(const program::Pipeline &p) {
  std::vector<Touch> order = programOrder(p);
  std::set<std::pair<std::pair<uint32_t, uint32_t>, std::pair<uint32_t, uint32_t>>> out;
  for (size_t i = 0; i < order.size(); ++i) {
    const Touch &x = order[i];
    std::vector<size_t> before; // same slot, earlier in program order
    for (size_t j = 0; j < i; ++j)
      if (order[j].buffer == x.buffer && order[j].slot == x.slot)
        before.push_back(j);
    int64_t latestWrite = -1;
    for (size_t j : before)
      if (order[j].write)
        latestWrite = static_cast<int64_t>(j);
    auto add = [&](size_t j) {
      const Touch &y = order[j];
      if (y.stage == x.stage && y.iteration == x.iteration)
        return;
      out.insert({{y.stage, y.iteration}, {x.stage, x.iteration}});
    };
    if (latestWrite >= 0)
      add(static_cast<size_t>(latestWrite));
    if (x.write)
      for (size_t j : before)
        if (!order[j].write && int64_t(j) > latestWrite)
          add(j);
  }
  return out;
}

/// The slow check that `s` orders every conflicting pair of instances (two
/// touches of one slot, one a write) as program order does; how many pairs.
size_t checkConflictsOrdered(const Schedule &s) {
  auto reach = test::happensBefore(s);
  std::vector<Touch> order = programOrder(s.pipeline);
  size_t pairs = 0;
  for (size_t i = 0; i < order.size(); ++i)
    for (size_t j = i + 1; j < order.size(); ++j) {
      const Touch &a = order[i], &b = order[j];
      if (a.buffer != b.buffer || a.slot != b.slot || (!a.write && !b.write))
        continue;
      uint32_t u = s.instances.idOf(a.stage, a.iteration),
               v = s.instances.idOf(b.stage, b.iteration);
      if (u == v)
        continue;
      CHECK(reach[u][v]);
      ++pairs;
    }
  return pairs;
}

} // namespace

TEST_CASE("data: inferred dependencies are exactly those the contract requires") {
  PIPEC_SEEDED(rng, 41);
  size_t programs = 0, edges = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::string text = test::randomData(rng, /*declared=*/false);
    FrontendRun front(text);
    if (front.errors)
      continue; // a declared dependency that makes a cycle with the data's
    ++programs;
    const program::Pipeline &p = front.program.pipelines[0];
    Schedule s(p, DeviceProfile(), ScheduleOptions());
    const Instances &inst = s.instances;
    // Instance-level edges: declared ones, and inferred ones.
    std::set<std::pair<uint32_t, uint32_t>> declared, inferred;
    for (uint32_t v = 0; v < inst.size(); ++v) {
      uint64_t base = inst.deps().begin[v];
      llvm::ArrayRef<uint32_t> row = inst.deps().row(v);
      for (size_t i = 0; i < row.size(); ++i)
        (inst.inferredFrom(base + i) < 0 ? declared : inferred).insert({row[i], v});
    }
    // What the contract requires, minus what is declared, is what was added.
    std::set<std::pair<uint32_t, uint32_t>> expected;
    for (const auto &[from, to] : requiredPairs(p)) {
      std::pair<uint32_t, uint32_t> e{inst.idOf(from.first, from.second),
                                      inst.idOf(to.first, to.second)};
      if (!declared.count(e))
        expected.insert(e);
    }
    INFO(text);
    CHECK(inferred == expected);
    edges += inferred.size();
  }
  CHECK(programs > 200);
  CHECK(edges > 500);
}

namespace {
/// `sync declared` against the slow check, on `trials` random programs
/// (of several devices, with peer copies and collectives, with `devices`).
void racesAgainstSlowCheck(std::mt19937 &rng, int trials, bool conditional,
                           bool devices = false) {
  size_t racy = 0, clean = 0, cpu = 0;
  for (int trial = 0; trial < trials; ++trial) {
    // Half of them with cpu stages: host program order orders too.
    std::string text = devices ? test::randomDeviceData(rng, /*declared=*/true)
                               : test::randomData(rng, /*declared=*/true,
                                                  /*host=*/trial % 2 == 1, conditional);
    FrontendRun front(text);
    if (front.errors)
      continue;
    const program::Pipeline &p = front.program.pipelines[0];
    Schedule s(p, DeviceProfile(), ScheduleOptions());
    const Instances &inst = s.instances;
    auto reach = test::happensBefore(s);
    // Slow: every pair of conflicting instances, either way.
    std::set<std::pair<uint32_t, uint32_t>> unorderedStages;
    std::vector<Touch> order = programOrder(p);
    for (size_t i = 0; i < order.size(); ++i)
      for (size_t j = i + 1; j < order.size(); ++j) {
        const Touch &a = order[i], &b = order[j];
        if (a.buffer != b.buffer || a.slot != b.slot || (!a.write && !b.write))
          continue;
        uint32_t u = inst.idOf(a.stage, a.iteration), v = inst.idOf(b.stage, b.iteration);
        if (u == v || reach[u][v] || reach[v][u])
          continue;
        unorderedStages.insert({std::min(a.stage, b.stage), std::max(a.stage, b.stage)});
      }
    std::set<std::pair<uint32_t, uint32_t>> reported;
    for (const Race &r : findRaces(s)) {
      uint32_t a = inst.stageOf(r.first), b = inst.stageOf(r.second);
      reported.insert({std::min(a, b), std::max(a, b)});
      // Each reported pair really is unordered and conflicting.
      CHECK(!reach[r.first][r.second]);
      CHECK(!reach[r.second][r.first]);
      CHECK((r.firstWrites || r.secondWrites));
    }
    INFO(text);
    CHECK(reported == unorderedStages);
    (reported.empty() ? clean : racy) += 1;
    cpu += s.hasHostStages();
    // With a cap, the first races of the same search, and no more.
    std::vector<Race> all = findRaces(s);
    for (size_t cap : {size_t(0), size_t(1), size_t(3)}) {
      std::vector<Race> some = findRaces(s, cap);
      REQUIRE(some.size() == std::min(cap, all.size()));
      for (size_t i = 0; i < some.size(); ++i)
        CHECK((some[i].first == all[i].first && some[i].second == all[i].second));
    }
  }
  CHECK(racy > size_t(trials / 8));
  CHECK(clean > size_t(trials / 8));
  if (!devices)
    CHECK(cpu > size_t(trials / 4));
}
} // namespace

TEST_CASE("data: sync declared reports a race exactly when a conflicting pair is unordered") {
  PIPEC_SEEDED(rng, 42);
  racesAgainstSlowCheck(rng, 800, /*conditional=*/false);
}

TEST_CASE("data: the same with stages that run only in some iterations") {
  PIPEC_SEEDED(rng, 44);
  racesAgainstSlowCheck(rng, 800, /*conditional=*/true);
}

TEST_CASE("data: inferred dependencies leave no race") {
  // The same programs in sync inferred: whatever the streams, the added
  // dependencies order every conflicting pair.
  PIPEC_SEEDED(rng, 43);
  for (int trial = 0; trial < 400; ++trial) {
    std::string text = test::randomData(rng, /*declared=*/false, /*host=*/trial % 2 == 1);
    FrontendRun front(text);
    if (front.errors)
      continue;
    Schedule s(front.program.pipelines[0], DeviceProfile(), ScheduleOptions());
    INFO(text);
    CHECK(findRaces(s).empty());
  }
}

TEST_CASE("data: inferred dependencies leave no race when stages skip iterations") {
  // A dependency on a stage that skips an iteration is on its latest
  // instance: whatever ran, every conflicting pair is ordered.
  PIPEC_SEEDED(rng, 45);
  size_t conditional = 0;
  for (int trial = 0; trial < 600; ++trial) {
    std::string text = test::randomData(rng, /*declared=*/false, /*host=*/trial % 2 == 1,
                                        /*conditional=*/true);
    FrontendRun front(text);
    if (front.errors)
      continue;
    Schedule s(front.program.pipelines[0], DeviceProfile(), ScheduleOptions());
    conditional += s.instances.hasConditionalStages();
    INFO(text);
    CHECK(findRaces(s).empty());
    // And the slow check agrees: every conflicting pair is ordered.
    checkConflictsOrdered(s);
  }
  CHECK(conditional > 300);
}

TEST_CASE("data: several devices, peer copies and collectives: races exactly when unordered") {
  // A collective's part touches its own device's buffers: the race check
  // against the slow one, pair by pair of instances.
  PIPEC_SEEDED(rng, 46);
  racesAgainstSlowCheck(rng, 600, /*conditional=*/false, /*devices=*/true);
}

TEST_CASE("data: several devices: inferred dependencies leave no race, by the slow check") {
  PIPEC_SEEDED(rng, 47);
  size_t parts = 0, checked = 0;
  for (int trial = 0; trial < 500; ++trial) {
    std::string text = test::randomDeviceData(rng, /*declared=*/false);
    FrontendRun front(text);
    INFO(text);
    REQUIRE(front.errors == 0);
    Schedule s(front.program.pipelines[0], DeviceProfile(), ScheduleOptions());
    CHECK(findRaces(s).empty());
    checked += checkConflictsOrdered(s);
    for (const program::Stage &st : s.pipeline.stages)
      parts += program::collectiveParts(st) > 1 && !st.accesses.empty();
  }
  CHECK(parts > 300);
  CHECK(checked > 2000);
}
