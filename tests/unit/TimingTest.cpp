// The GPU timing decisions and the calibration arithmetic, without a GPU:
// which method a run uses, which activity record belongs to which stage
// instance, and how raw timestamps become the model's parameters.

#include "runtime/calibrate/CalibrationMath.h"
#include "runtime/timing/Timing.h"

#include <doctest/doctest.h>

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
  CuptiStatus usable{true, ""};
  CuptiStatus missing{false, "libcupti.so: cannot open shared object file"};
  CHECK(*chooseTiming(TimingRequest::Auto, usable, note) == TimingMethod::Cupti);
  CHECK(note.empty());
  CHECK(*chooseTiming(TimingRequest::Auto, missing, note) == TimingMethod::Events);
  CHECK(note.find("libcupti.so: cannot open") != std::string::npos);
  CHECK(*chooseTiming(TimingRequest::Events, usable, note) == TimingMethod::Events);
  auto forced = chooseTiming(TimingRequest::Cupti, missing, note);
  REQUIRE(!forced);
  CHECK(llvm::toString(forced.takeError()).find("CUPTI is not usable") !=
        std::string::npos);
  CHECK(std::string(spelling(TimingMethod::Cupti)) == "cupti");
  CHECK(std::string(spelling(TimingMethod::Events)) == "events");
  CHECK(std::string(spelling(TimingMethod::Model)) == "model");
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
      {9, 0, 300, 400}, {7, 0, 100, 150}, {5, 0, 0, 1000},
      {7, 0, 160, 170}, {9, 0, 120, 290}};
  InstanceIntervals out{std::vector<uint64_t>(5, 0), std::vector<uint64_t>(5, 0)};
  REQUIRE(succeeded(matchStreamRecords(ids, issued, records, out)));
  CHECK(out.start == std::vector<uint64_t>{100, 120, 160, 300, 0});
  CHECK(out.end == std::vector<uint64_t>{150, 290, 170, 400, 0});

  records.pop_back(); // stream 9 now has one record for two operations
  std::string why = llvm::toString(matchStreamRecords(ids, issued, records, out));
  CHECK(why.find("stream 9") != std::string::npos);
}

TEST_CASE("timing: graph records belong to the node that launched them") {
  std::vector<uint64_t> nodes = {11, 0, 13}; // instance 1 is a host node
  std::vector<DeviceRecord> records = {{1, 13, 50, 60}, {1, 11, 10, 20}, {1, 0, 0, 5}};
  InstanceIntervals out{std::vector<uint64_t>(3, 0), std::vector<uint64_t>(3, 0)};
  REQUIRE(succeeded(matchGraphRecords(nodes, records, out)));
  CHECK(out.start == std::vector<uint64_t>{10, 0, 50});
  records.erase(records.begin());
  std::string why = llvm::toString(matchGraphRecords(nodes, records, out));
  CHECK(why.find("graph node 13") != std::string::npos);
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
  std::vector<ClockSample> samples = {
      {10, 1013, 30},   // round trip 20: device read at host 13
      {100, 1102, 104}, // round trip 4: the one to trust
      {200, 1250, 260}};
  ClockOffset o = clockOffset(samples);
  CHECK(o.deviceMinusHost == doctest::Approx(1000));
  CHECK(o.uncertainty == doctest::Approx(2));
  // Graph launch called at host 500, first node starts at device 1520: 20 us.
  CHECK(medianHostToDeviceUs({500, 600, 700}, {1520, 1619, 1722}, o) ==
        doctest::Approx(20));
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
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0, 0.05);
  for (auto &s : samples)
    s.second += noise(rng);
  fit = fitCopies(samples);
  CHECK(fit.GBps == doctest::Approx(50).epsilon(0.01));
  CHECK(fitCopies({{1e6, 10}, {2e6, 30}}).latencyUs == 0); // intercept -10
  CHECK(fitCopies({{1e6, 10}}).GBps == 0);                  // one size only
}

TEST_CASE("calibration: the timer's resolution is its smallest step") {
  CHECK(timerResolution({1000, 1000, 1032, 1032, 1064, 1128}) == 32);
  CHECK(timerResolution({5, 5, 5}) == 0);
}
