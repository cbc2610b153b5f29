//===- ProfileWriter.cpp - A device profile as JSON -----------------------===//

#include "runtime/cuda/CudaBackend.h"

#include "compiler/emit/Emitters.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace pipec;

void runtime::writeProfile(const DeviceProfile &p, llvm::raw_ostream &os) {
  llvm::json::OStream j(os, 2);
  auto number = [&](llvm::StringRef key, double value) {
    j.attributeBegin(key);
    j.rawValue([&](llvm::raw_ostream &out) { writeNumber(out, value); });
    j.attributeEnd();
  };
  j.object([&] {
    j.attribute("name", p.name);
    j.attribute("priority_least", p.priorityLeast);
    j.attribute("priority_greatest", p.priorityGreatest);
    number("h2d_GBps", p.h2dGBps);
    number("d2h_GBps", p.d2hGBps);
    number("d2d_GBps", p.d2dGBps);
    number("launch_us", p.launchUs);
    number("record_us", p.recordUs);
    number("wait_us", p.waitUs);
    number("graph_launch_us", p.graphLaunchUs);
    number("graph_node_us", p.graphNodeUs);
    number("upload_node_us", p.uploadNodeUs);
    number("instantiate_node_us", p.instantiateNodeUs);
    number("node_update_us", p.nodeUpdateUs);
    j.attribute("sms", int64_t(p.sms));
    j.attribute("max_threads_per_sm", int64_t(p.maxThreadsPerSM));
    j.attribute("max_blocks_per_sm", int64_t(p.maxBlocksPerSM));
    j.attribute("max_resident_kernels", int64_t(p.maxResidentKernels));
    j.attribute("hardware_queues", int64_t(p.hardwareQueues));
    number("stream_gap_us", p.streamGapUs);
    number("graph_gap_us", p.graphGapUs);
    number("wait_latency_us", p.waitLatencyUs);
    number("host_func_latency_us", p.hostFuncLatencyUs);
    number("copy_latency_us", p.copyLatencyUs);
  });
  os << '\n';
}
