// The GPU timing decisions and the calibration arithmetic, without a GPU:
// which method a run uses, which activity record belongs to which stage
// instance, and how raw timestamps become the model's parameters.

#include "runtime/timing/Timing.h"
#include "runtime/calibrate/CalibrationMath.h"

#include <doctest/doctest.h>

#include "Seed.h"

#include <random>

using namespace pipec::runtime;
using namespace pipec::runtime::calibration;

/// True when `e` is success; a failure's message is shown.
static bool succeeded(llvm::Error e) {
  if (!e)
    return true;
  MESSAGE(llvm::toString(std::move(e)));
  return false;
}

TEST_CASE("timing: CUPTI when usable, events otherwise, with the reason") {
  std::string note;
  CuptiStatus usable{true, "", "/x/libcupti.so"};
  CuptiStatus missing{false, "libcupti.so: cannot open shared object file", ""};
  CHECK(*chooseTiming(TimingRequest::Auto, usable, note) == TimingMethod::Cupti);
  CHECK(note.empty());
  CHECK(*chooseTiming(TimingRequest::Auto, missing, note) == TimingMethod::Events);
  CHECK(note.find("libcupti.so: cannot open") != std::string::npos);
  CHECK(*chooseTiming(TimingRequest::Events, usable, note) == TimingMethod::Events);
  auto forced = chooseTiming(TimingRequest::Cupti, missing, note);
  REQUIRE(!forced);
  CHECK(llvm::toString(forced.takeError()).find("CUPTI is not usable") != std::string::npos);
  CHECK(std::string(spelling(TimingMethod::Cupti)) == "cupti");
  CHECK(std::string(spelling(TimingMethod::Events)) == "events");
  CHECK(std::string(spelling(TimingMethod::Model)) == "model");
  // CUPTI chosen, its records unusable: asked for by name, an error; under
  // auto, events, saying why.
  auto failed = afterCuptiFailed(
      TimingRequest::Cupti,
      llvm::createStringError(llvm::inconvertibleErrorCode(), "3 records missing"), note);
  REQUIRE(!failed);
  CHECK(llvm::toString(failed.takeError()) ==
        "--timing=cupti: CUPTI's records could not be used: 3 records missing");
  auto fellBack = afterCuptiFailed(
      TimingRequest::Auto,
      llvm::createStringError(llvm::inconvertibleErrorCode(), "3 records missing"), note);
  REQUIRE(static_cast<bool>(fellBack));
  CHECK(*fellBack == TimingMethod::Events);
  CHECK(note ==
        "CUPTI's records could not be used (3 records missing); timed with CUDA events");
  TimingRequest r;
  CHECK(parseTimingRequest("events", r));
  CHECK(r == TimingRequest::Events);
  CHECK(!parseTimingRequest("stamps", r));
}

TEST_CASE("timing: stream records belong to a stream's operations in issue order") {
  // Two streams (CUPTI ids 7 and 9); instances 0, 2 on stream 7, 1, 3 on 9;
  // instance 4 is a host stage (no record). Records arrive shuffled, with a
  // foreign stream's record among them.
  std::vector<uint32_t> ids = {7, 9};
  std::vector<std::vector<uint32_t>> issued = {{0, 2}, {1, 3}};
  std::vector<DeviceRecord> records = {
      {9, 0, 300, 400}, {7, 0, 100, 150}, {5, 0, 0, 1000}, {7, 0, 160, 170}, {9, 0, 120, 290}};
  InstanceIntervals out{std::vector<uint64_t>(5, 0), std::vector<uint64_t>(5, 0)};
  REQUIRE(succeeded(matchStreamRecords(ids, issued, records, {}, out)));
  CHECK(out.start == std::vector<uint64_t>{100, 120, 160, 300, 0});
  CHECK(out.end == std::vector<uint64_t>{150, 290, 170, 400, 0});

  records.pop_back(); // stream 9 now has one record for two operations
  std::string why = llvm::toString(matchStreamRecords(ids, issued, records, {}, out));
  CHECK(why.find("stream 9") != std::string::npos);
}

TEST_CASE("timing: graph records belong to the node that launched them") {
  std::vector<uint64_t> nodes = {11, 0, 13}; // instance 1 is a host node
  std::vector<DeviceRecord> records = {{1, 13, 50, 60}, {1, 11, 10, 20}, {1, 0, 0, 5}};
  InstanceIntervals out{std::vector<uint64_t>(3, 0), std::vector<uint64_t>(3, 0)};
  REQUIRE(succeeded(matchGraphRecords(nodes, {}, records, {}, out)));
  CHECK(out.start == std::vector<uint64_t>{10, 0, 50});
  records.erase(records.begin());
  std::string why = llvm::toString(matchGraphRecords(nodes, {}, records, {}, out));
  CHECK(why.find("graph node 13") != std::string::npos);
}

TEST_CASE("timing: a launched graph's records carry its clones' ids") {
  // Template nodes 11 and 13 were cloned into 111 and 113 when the launched
  // executable graph was instantiated: its records name the clones. A
  // record of the template's id (another executable graph) is not this one.
  std::vector<uint64_t> nodes = {11, 0, 13};
  std::vector<NodeClone> clones = {{13, 113}, {11, 111}, {12, 112}};
  std::vector<DeviceRecord> records = {
      {1, 113, 50, 60}, {1, 111, 10, 20}, {1, 11, 1, 2}, {1, 0, 0, 5}};
  InstanceIntervals out{std::vector<uint64_t>(3, 0), std::vector<uint64_t>(3, 0)};
  REQUIRE(succeeded(matchGraphRecords(nodes, clones, records, {}, out)));
  CHECK(out.start == std::vector<uint64_t>{10, 0, 50});
  CHECK(out.end == std::vector<uint64_t>{20, 0, 60});
  // Without the clones, the clones' records belong to nothing: node 13 has
  // none, and the test would time the wrong graph's node 11.
  std::string why = llvm::toString(matchGraphRecords(nodes, {}, records, {}, out));
  CHECK(why.find("graph node 13") != std::string::npos);
  // The clone's record missing: named by the clone's id.
  records.erase(records.begin());
  why = llvm::toString(matchGraphRecords(nodes, clones, records, {}, out));
  CHECK(why.find("graph node 113") != std::string::npos);
}

TEST_CASE("timing: a record with no start, an end before its start, or outside the "
          "run is refused") {
  RecordWindow window{1000, 2000};
  CHECK(succeeded(checkRecord({1, 0, 1000, 2000}, window)));
  auto refused = [&](DeviceRecord r, const char *why) {
    std::string text = llvm::toString(checkRecord(r, window));
    CHECK(text.find(why) != std::string::npos);
  };
  refused({1, 0, 0, 1500}, "starts at 0");
  refused({1, 0, 1500, 1400}, "ends before it starts");
  refused({1, 0, 999, 1500}, "outside the run");
  refused({1, 0, 1500, 2001}, "outside the run");
  // Matching refuses them too, for streams and graphs alike.
  InstanceIntervals out{std::vector<uint64_t>(1, 0), std::vector<uint64_t>(1, 0)};
  CHECK(!succeeded(matchStreamRecords({7}, {{0}}, {{7, 0, 0, 10}}, window, out)));
  CHECK(!succeeded(matchGraphRecords({11}, {}, {{7, 11, 1500, 1400}}, window, out)));
  CHECK(succeeded(matchGraphRecords({11}, {}, {{7, 11, 1500, 1600}}, window, out)));
  // Another stream's junk is ignored, as before.
  CHECK(succeeded(
      matchStreamRecords({7}, {{0}}, {{7, 0, 1100, 1200}, {8, 0, 0, 0}}, window, out)));
}

TEST_CASE("timing: timestamps near 1.8e18 ns keep their nanoseconds") {
  const uint64_t origin = 1'800'000'000'000'000'123ull;
  InstanceIntervals iv{{origin + 1, origin + 2'000'000'007},
                       {origin + 1'001, origin + 2'000'001'009}};
  std::vector<double> start, end;
  intervalsToMicros(iv, origin, start, end);
  CHECK(start[0] == 0.001);
  CHECK(end[0] == 1.001);
  CHECK(start[1] == doctest::Approx(2'000'000.007).epsilon(1e-15));
  CHECK(end[1] - start[1] == doctest::Approx(1.002).epsilon(1e-9));
  // The arithmetic it replaces: converted first, 1 ns and 1,001 ns apart
  // come out a multiple of 256 ns apart.
  double naive = (double(origin + 1'001) - double(origin + 1)) / 1000;
  CHECK(naive != 1.0);
  // A time before the origin is negative, not 1.8e13 us.
  intervalsToMicros({{origin - 500}, {origin}}, origin, start, end);
  CHECK(start[0] == -0.5);
}

TEST_CASE("timing: a host stage between its stream's events is placed by how long it "
          "ran") {
  // Stream reached it at 1000, went past at 9000; it ran 5000 ns.
  CHECK(hostStageFromEvents(1000, 9000, 5000) ==
        std::make_pair<uint64_t, uint64_t>(4000, 9000));
  // A host clock that ran longer than the events allow starts it at `reached`.
  CHECK(hostStageFromEvents(1000, 9000, 20000) ==
        std::make_pair<uint64_t, uint64_t>(1000, 9000));
  CHECK(hostStageFromEvents(1000, 900, 50) == std::make_pair<uint64_t, uint64_t>(1000, 1000));
}

TEST_CASE("timing: the violation check's slack is the clocks' resolution") {
  CHECK(violationSlackUs(TimingMethod::Model, 0) == doctest::Approx(1e-3));
  CHECK(violationSlackUs(TimingMethod::Events, 32) == doctest::Approx(0.532));
  CHECK(violationSlackUs(TimingMethod::Cupti, 1000) == doctest::Approx(2.0));
}

TEST_CASE("calibration: gaps are measured between items of one round") {
  // Three back-to-back items with 0.8, 1.0 and 1.2 us between them.
  std::vector<Interval> items = {{0, 5}, {5.8, 9}, {10, 12}, {13.2, 20}};
  CHECK(medianGapUs(items) == doctest::Approx(1.0));
  // Overlapping items (no gap) never give a negative parameter.
  CHECK(medianGapUs({{0, 5}, {1, 6}, {2, 7}}) == 0);
  CHECK(medianGapUs({}) == 0);
}

TEST_CASE("calibration: the clock offset comes from the tightest round trip") {
  // The device clock runs 1000 us ahead of the host's.
  std::vector<ClockSample> samples = {{10, 1013, 30}, // round trip 20: device read at host 13
                                      {100, 1102, 104}, // round trip 4: the one to trust
                                      {200, 1250, 260}};
  ClockOffset o = clockOffset(samples);
  CHECK(o.deviceMinusHost == doctest::Approx(1000));
  CHECK(o.uncertainty == doctest::Approx(2));
  // Graph launch called at host 500, first node starts at device 1520: 20 us.
  CHECK(medianHostToDeviceUs({500, 600, 700}, {1520, 1619, 1722}, o) == doctest::Approx(20));
  // A kernel ends at device 2000; its host function runs at host 1045.
  CHECK(medianDeviceToHostUs({2000}, {1045}, o) == doctest::Approx(45));
}

TEST_CASE("calibration: copy latency and bandwidth from a line fit") {
  // 2 us latency, 50 GB/s = 50,000 bytes per us.
  std::vector<std::pair<double, double>> samples;
  for (double bytes : {4.0, 65536.0, 1048576.0, 16777216.0, 268435456.0})
    samples.push_back({bytes, 2 + bytes / 50000});
  CopyFit fit = fitCopies(samples);
  CHECK(fit.latencyUs == doctest::Approx(2).epsilon(1e-6));
  CHECK(fit.GBps == doctest::Approx(50).epsilon(1e-6));
  // With noise, still close; and never a negative latency.
  PIPEC_SEEDED(rng, 3);
  std::normal_distribution<double> noise(0, 0.05);
  for (auto &s : samples)
    s.second += noise(rng);
  fit = fitCopies(samples);
  CHECK(fit.GBps == doctest::Approx(50).epsilon(0.01));
  CHECK(fitCopies({{1e6, 10}, {2e6, 30}}).latencyUs == 0); // intercept -10
  CHECK(fitCopies({{1e6, 10}}).GBps == 0);                 // one size only
}

TEST_CASE("calibration: device readings are microseconds after a base, exactly") {
  const uint64_t base = 1'799'999'999'999'999'000ull;
  CHECK(deviceMicros(base + 1, base) == 0.001);
  CHECK(deviceMicros(base + 250, base) == 0.25);
  CHECK(deviceMicros(base - 3000, base) == -3);
}

TEST_CASE("calibration: keys measured from a kernel's end leave out the stream's gap") {
  // The model: end -> stream_gap_us -> the waiting stream or host function
  // -> wait_latency_us / host_func_latency_us.
  CHECK(afterStreamGapUs(5.0, 0.9) == doctest::Approx(4.1));
  CHECK(afterStreamGapUs(0.5, 0.9) == 0);
  // Call to first node: 15 us fixed + 16 nodes x 0.5 us.
  CHECK(graphLaunchFixedUs(23, 16, 0.5) == doctest::Approx(15));
  CHECK(graphLaunchFixedUs(5, 16, 0.5) == 0);
}

TEST_CASE("calibration: copy engines from small copies that did not wait") {
  // One large copy takes 5,000 us. With one engine the small copy ends after
  // it (negative); with two it ends ~5,000 us before the first large one, as
  // long as only one large one runs.
  CHECK(copyEngines({-10, -5000, -10000}, 5000) == 1);
  CHECK(copyEngines({4990, -2, -5000}, 5000) == 2);
  CHECK(copyEngines({4990, 9990, 14990}, 5000) == 4);
  CHECK(copyEngines({4990, 100, 9990}, 5000) == 2); // only the leading ones count
  CHECK(copyEngines({4990}, 0) == 1);               // no large time: no claim
}

TEST_CASE("calibration: the timer's resolution is its smallest step") {
  CHECK(timerResolution({1000, 1000, 1032, 1032, 1064, 1128}) == 32);
  CHECK(timerResolution({5, 5, 5}) == 0);
}
