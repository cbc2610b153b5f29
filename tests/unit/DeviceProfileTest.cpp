#include "compiler/program/DeviceProfile.h"

#include "llvm/Support/raw_ostream.h"

#include <doctest/doctest.h>

using namespace pipec;

TEST_CASE("profile: every key written is read back (calibrate -> --profile)") {
  DeviceProfile p;
  p.name = "calibrated on a test";
  p.priorityLeast = 1;
  p.priorityGreatest = -3;
  double x = 1.25;
  for (double *d : {&p.h2dGBps, &p.d2hGBps, &p.d2dGBps, &p.launchUs, &p.recordUs, &p.waitUs,
                    &p.graphLaunchUs, &p.graphNodeUs, &p.uploadNodeUs, &p.instantiateNodeUs,
                    &p.nodeUpdateUs, &p.streamGapUs, &p.graphGapUs, &p.waitLatencyUs,
                    &p.hostFuncLatencyUs, &p.copyLatencyUs})
    *d = (x += 1.5);
  unsigned u = 31; // every count within its range (max_threads_per_sm >= 32)
  for (unsigned *c : {&p.sms, &p.maxThreadsPerSM, &p.maxBlocksPerSM, &p.maxResidentKernels,
                      &p.hardwareQueues})
    *c = (u += 3);
  std::string text;
  llvm::raw_string_ostream os(text);
  writeDeviceProfile(p, os);
  os.flush();
  llvm::Expected<DeviceProfile> q = parseDeviceProfile(text);
  REQUIRE(static_cast<bool>(q));
  CHECK(q->name == p.name);
  CHECK(q->priorityLeast == 1);
  CHECK(q->priorityGreatest == -3);
  CHECK(q->h2dGBps == p.h2dGBps);
  CHECK(q->copyLatencyUs == p.copyLatencyUs);
  CHECK(q->hostFuncLatencyUs == p.hostFuncLatencyUs);
  CHECK(q->graphNodeUs == p.graphNodeUs);
  CHECK(q->uploadNodeUs == p.uploadNodeUs);
  CHECK(q->sms == p.sms);
  CHECK(q->hardwareQueues == p.hardwareQueues);
  CHECK(q->maxResidentKernels == p.maxResidentKernels);
}

TEST_CASE("profile: bad values are refused with the key named") {
  auto bad = [](const char *json) {
    llvm::Expected<DeviceProfile> p = parseDeviceProfile(json);
    REQUIRE_FALSE(static_cast<bool>(p));
    return llvm::toString(p.takeError());
  };
  CHECK(bad(R"({"sms": 1.5})") == "profile key 'sms' must be a whole number");
  CHECK(bad(R"({"h2d_GBps": 0})").find("'h2d_GBps' must be a number") != std::string::npos);
  CHECK(bad(R"({"priority_least": -5, "priority_greatest": 0})").find("must be at most") !=
        std::string::npos);
  CHECK(bad("[1]") == "a profile must be a JSON object");
}

TEST_CASE("profile: a collective's bytes for a time are the formula's inverse") {
  // For each collective, rank count and time past its fixed cost, the
  // bytes collectiveBytes gives take that time by collectiveTimeUs (to a
  // byte's time); at or below the fixed cost, one byte.
  DeviceProfile p;
  using program::CollectiveOp;
  for (CollectiveOp op : {CollectiveOp::AllReduce, CollectiveOp::AllGather,
                          CollectiveOp::ReduceScatter, CollectiveOp::Broadcast})
    for (uint32_t ranks : {1u, 2u, 4u, 8u}) {
      const double fixed = p.collectiveTimeUs(op, 0, ranks);
      CHECK(p.collectiveBytes(op, fixed, ranks) == 1);
      CHECK(p.collectiveBytes(op, fixed / 2, ranks) == 1);
      for (double extra : {1.0, 37.5, 310.0, 12000.0}) {
        const uint64_t bytes = p.collectiveBytes(op, fixed + extra, ranks);
        CHECK(bytes > 1);
        CHECK(p.collectiveTimeUs(op, bytes, ranks) ==
              doctest::Approx(fixed + extra).epsilon(1e-6));
      }
    }
}
