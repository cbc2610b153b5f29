// Reading Kineto traces as PyTorch writes them, and recovering orderings.

#include "runtime/import/Step.h"
#include "runtime/import/Trace.h"

#include "llvm/Support/FormatVariadic.h"

#include <doctest/doctest.h>

using namespace pipec;
using namespace pipec::importer;

namespace {
std::string kernel(const char *cat, int stream, int corr, double ts, double dur,
                   int device = 0) {
  return llvm::formatv("{{\"ph\":\"X\",\"cat\":\"{0}\",\"name\":\"k{2}\",\"pid\":{5},"
                       "\"ts\":{3},\"dur\":{4},\"args\":{{\"stream\":{1},"
                       "\"correlation\":{2},\"device\":{5},\"grid\":[2,2,1],"
                       "\"block\":[64,2,1]}}",
                       cat, stream, corr, ts, dur, device)
      .str();
}
std::string runtime(const char *cat, const char *name, int corr, double ts) {
  return llvm::formatv("{{\"ph\":\"X\",\"cat\":\"{0}\",\"name\":\"{1}\",\"ts\":{3},"
                       "\"dur\":1,\"args\":{{\"correlation\":{2}}}",
                       cat, name, corr, ts)
      .str();
}
} // namespace

TEST_CASE("import: PyTorch 1.x categories read as 2.x ones; grid and block multiply") {
  std::string text = "{\"traceEvents\":[" + runtime("Runtime", "cudaLaunchKernel", 1, 10) +
                     "," + kernel("Kernel", 7, 1, 20, 5) + "]}";
  auto trace = parseTrace(text);
  REQUIRE(static_cast<bool>(trace));
  REQUIRE(trace->ops.size() == 1);
  CHECK(trace->ops[0].blocks == 4);
  CHECK(trace->ops[0].threads == 128);
  CHECK(trace->ops[0].launchTs == 10);
}

TEST_CASE("import: a multi-GPU trace keeps the busiest device") {
  std::string text = "{\"traceEvents\":[" + kernel("kernel", 7, 1, 0, 1, 0) + "," +
                     kernel("kernel", 7, 2, 0, 1, 1) + "," + kernel("kernel", 7, 3, 2, 1, 1) +
                     "]}";
  auto trace = parseTrace(text);
  REQUIRE(static_cast<bool>(trace));
  CHECK(trace->ops.size() == 2);
  CHECK(trace->otherDevices == 1);
  for (const GpuOp &op : trace->ops)
    CHECK(op.device == 1);
}

TEST_CASE("import: a stream wait depends on the last op before the record") {
  // Stream 1: A (corr 1), B (corr 3); record at corr 2 (after A, before B).
  // Stream 2: C (corr 5) after the wait (corr 4): C depends on A, not B.
  std::string events =
      runtime("cuda_runtime", "cudaLaunchKernel", 1, 1) + "," + kernel("kernel", 1, 1, 10, 5) +
      "," + runtime("cuda_runtime", "cudaEventRecord", 2, 2) + "," +
      runtime("cuda_runtime", "cudaLaunchKernel", 3, 3) + "," + kernel("kernel", 1, 3, 16, 5) +
      "," + runtime("cuda_runtime", "cudaStreamWaitEvent", 4, 4) + "," +
      "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Stream Wait Event\",\"ts\":15,"
      "\"dur\":0,\"args\":{\"cuda_sync_kind\":\"Stream Wait Event\",\"stream\":2,"
      "\"correlation\":4,\"wait_on_stream\":1,\"wait_on_cuda_event_record_corr_id\":2}}," +
      runtime("cuda_runtime", "cudaLaunchKernel", 5, 5) + "," + kernel("kernel", 2, 5, 16, 5);
  auto trace = parseTrace("{\"traceEvents\":[" + events + "]}");
  REQUIRE(static_cast<bool>(trace));
  auto step = selectStep(*trace, std::nullopt);
  REQUIRE(static_cast<bool>(step));
  REQUIRE(step->stages.size() == 3);
  CHECK(step->stages[2].deps == std::vector<uint32_t>{0});
  CHECK(step->waitsIssued == 1);
}

TEST_CASE("import: deep nesting is refused before JSON's parser recurses on it") {
  std::string deep = "{\"traceEvents\":[" + std::string(100000, '[') + "]}";
  auto trace = parseTrace(deep);
  REQUIRE(!trace);
  CHECK(llvm::toString(trace.takeError()).find("nests more than 64 levels") !=
        std::string::npos);
}

TEST_CASE("import: bad input is an error, never a crash") {
  for (const char *bad : {"", "[", "{", "{\"traceEvents\":", "{\"traceEvents\":[{",
                          "{\"traceEvents\":[{\"cat\":\"kernel\"", "{\"traceEvents\":[1,2]}",
                          "{\"traceEvents\":{}}", "{\"deviceProperties\":[{\"name\":3}"}) {
    auto trace = parseTrace(bad);
    CHECK(!trace);
    llvm::consumeError(trace.takeError());
  }
}
