//===- DeviceProfile.cpp --------------------------------------------------===//

#include "compiler/program/DeviceProfile.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>

using namespace pipec;

int DeviceProfile::priorityFor(program::PriorityClass cls) const {
  switch (cls) {
  case program::PriorityClass::High:
    return priorityGreatest;
  case program::PriorityClass::Low:
    return priorityLeast;
  default:
    // Integer division truncates towards zero, i.e. towards `least`.
    return priorityLeast + (priorityGreatest - priorityLeast) / 2;
  }
}

unsigned DeviceProfile::blocksPerSM(unsigned threads) const {
  unsigned byThreads = threads ? maxThreadsPerSM / threads : maxBlocksPerSM;
  return std::max(1u, std::min(maxBlocksPerSM, byThreads));
}

double DeviceProfile::copyTimeUs(program::CopyDirection dir,
                                 uint64_t bytes) const {
  double gbps = dir == program::CopyDirection::H2D   ? h2dGBps
                : dir == program::CopyDirection::D2H ? d2hGBps
                                                     : d2dGBps;
  // bytes / (GB/s * 1e9) seconds = bytes / (GB/s * 1e3) microseconds.
  return static_cast<double>(bytes) / (gbps * 1e3);
}

llvm::Expected<DeviceProfile> pipec::parseDeviceProfile(llvm::StringRef text) {
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(text);
  if (!parsed)
    return parsed.takeError();
  const llvm::json::Object *obj = parsed->getAsObject();
  if (!obj)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "a profile must be a JSON object");
  DeviceProfile p;
  std::string problem;
  auto number = [&](llvm::StringRef key, double &into, double min,
                    double max) {
    const llvm::json::Value *v = obj->get(key);
    if (!v || !problem.empty())
      return;
    llvm::Optional<double> d = v->getAsNumber();
    if (!d || !(*d >= min && *d <= max)) {
      problem = llvm::formatv("profile key '{0}' must be a number between "
                              "{1} and {2}",
                              key, llvm::format("%g", min),
                              llvm::format("%g", max));
      return;
    }
    into = *d;
  };
  if (const llvm::json::Value *v = obj->get("name"))
    if (auto s = v->getAsString())
      p.name = s->str();
  double least = p.priorityLeast, greatest = p.priorityGreatest;
  number("priority_least", least, -1000, 1000);
  number("priority_greatest", greatest, -1000, 1000);
  number("h2d_GBps", p.h2dGBps, 1e-3, 1e6);
  number("d2h_GBps", p.d2hGBps, 1e-3, 1e6);
  number("d2d_GBps", p.d2dGBps, 1e-3, 1e6);
  number("launch_us", p.launchUs, 0, 1e6);
  number("record_us", p.recordUs, 0, 1e6);
  number("wait_us", p.waitUs, 0, 1e6);
  number("graph_launch_us", p.graphLaunchUs, 0, 1e6);
  number("graph_node_us", p.graphNodeUs, 0, 1e6);
  number("upload_node_us", p.uploadNodeUs, 0, 1e6);
  number("instantiate_node_us", p.instantiateNodeUs, 0, 1e6);
  number("node_update_us", p.nodeUpdateUs, 0, 1e6);
  auto count = [&](llvm::StringRef key, unsigned &into, double min, double max) {
    double value = into;
    number(key, value, min, max);
    if (problem.empty() && value != static_cast<unsigned>(value))
      problem = llvm::formatv("profile key '{0}' must be a whole number", key);
    into = static_cast<unsigned>(value);
  };
  count("sms", p.sms, 1, 100000);
  count("max_threads_per_sm", p.maxThreadsPerSM, 1, 1 << 20);
  count("max_blocks_per_sm", p.maxBlocksPerSM, 1, 1 << 16);
  count("max_resident_kernels", p.maxResidentKernels, 1, 1 << 16);
  count("hardware_queues", p.hardwareQueues, 1, 1024);
  number("stream_gap_us", p.streamGapUs, 0, 1e6);
  number("graph_gap_us", p.graphGapUs, 0, 1e6);
  number("wait_latency_us", p.waitLatencyUs, 0, 1e6);
  number("host_func_latency_us", p.hostFuncLatencyUs, 0, 1e6);
  number("copy_latency_us", p.copyLatencyUs, 0, 1e6);
  if (problem.empty() && greatest > least)
    problem = "profile key 'priority_greatest' must be at most "
              "'priority_least'";
  if (!problem.empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(), problem);
  p.priorityLeast = static_cast<int>(least);
  p.priorityGreatest = static_cast<int>(greatest);
  return p;
}
