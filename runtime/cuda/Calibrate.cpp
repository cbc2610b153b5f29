//===- Calibrate.cpp - Measuring the device model's parameters ------------===//
//
// Each measurement is small and repeated; the median is kept. Device-side
// gaps come from %globaltimer stamps; host-side costs from the host clock.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaBackend.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/Kernels.h"
#include "runtime/cuda/Owners.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace pipec;
using namespace pipec::cuda;

namespace {

using Clock = std::chrono::steady_clock;
double microsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void CUDART_CB nothing(void *) {}

struct Calibrator {
  Calibrator(const DeviceProfile &defaults, llvm::raw_ostream &log)
      : p(defaults), log(log) {}

  DeviceProfile p;
  llvm::raw_ostream &log;
  Stream a, b;
  DeviceMemory stampMemory;
  Stamp *stamps = nullptr;
  static constexpr int kStamps = 1024;

  llvm::Error setUp() {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
      (void)cudaGetLastError();
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(), "no CUDA device: %s",
          status != cudaSuccess ? cudaGetErrorString(status)
                                : "the CUDA runtime sees no GPU");
    }
    PIPEC_CUDA_TRY(cudaSetDevice(0), "device 0");
    cudaDeviceProp props{};
    PIPEC_CUDA_TRY(cudaGetDeviceProperties(&props, 0), "device 0");
    p.name = std::string("calibrated on ") + props.name;
    p.sms = props.multiProcessorCount;
    p.maxThreadsPerSM = props.maxThreadsPerMultiProcessor;
    p.maxBlocksPerSM = props.maxBlocksPerMultiProcessor;
    PIPEC_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&p.priorityLeast, &p.priorityGreatest),
                   "device 0");
    PIPEC_CUDA_TRY(cudaStreamCreateWithFlags(a.out(), cudaStreamNonBlocking), "stream");
    PIPEC_CUDA_TRY(cudaStreamCreateWithFlags(b.out(), cudaStreamNonBlocking), "stream");
    PIPEC_CUDA_TRY(cudaMalloc(stampMemory.out(), sizeof(Stamp) * kStamps), "stamps");
    stamps = static_cast<Stamp *>(stampMemory.get());
    return llvm::Error::success();
  }

  llvm::Expected<std::vector<Stamp>> readStamps(int n) {
    std::vector<Stamp> host(n);
    PIPEC_CUDA_TRY(cudaMemcpy(host.data(), stamps, sizeof(Stamp) * n,
                              cudaMemcpyDeviceToHost),
                   "stamps");
    return host;
  }

  void report(const char *what, double value, const char *unit) {
    log << llvm::formatv("  {0,-28} {1,10:f3} {2}\n", what, value, unit);
  }

  /// Host cost of launches, records and waits; the gap between kernels.
  llvm::Error streams() {
    constexpr int n = 256;
    std::vector<double> launch, record, wait;
    Event event;
    PIPEC_CUDA_TRY(cudaEventCreateWithFlags(event.out(), cudaEventDisableTiming), "event");
    for (int round = 0; round < 5; ++round) {
      // A long kernel first, so that the launches below queue up behind it.
      PIPEC_CUDA_TRY(launchSpin(dim3(1), dim3(32), a.get(), 2'000'000, stamps + n), "spin");
      Clock::time_point t = Clock::now();
      for (int i = 0; i < n; ++i)
        PIPEC_CUDA_TRY(launchSpin(dim3(1), dim3(32), a.get(), 0, stamps + i), "spin");
      launch.push_back(microsSince(t) / n);
      t = Clock::now();
      for (int i = 0; i < n; ++i)
        PIPEC_CUDA_TRY(cudaEventRecord(event.get(), b.get()), "record");
      record.push_back(microsSince(t) / n);
      t = Clock::now();
      for (int i = 0; i < n; ++i)
        PIPEC_CUDA_TRY(cudaStreamWaitEvent(b.get(), event.get(), 0), "wait");
      wait.push_back(microsSince(t) / n);
      PIPEC_CUDA_TRY(cudaDeviceSynchronize(), "sync");
    }
    p.launchUs = median(launch);
    p.recordUs = median(record);
    p.waitUs = median(wait);
    auto host = readStamps(n);
    if (!host)
      return host.takeError();
    std::vector<double> gaps;
    for (int i = 1; i < n; ++i)
      gaps.push_back((double((*host)[i].start) - double((*host)[i - 1].end)) / 1000);
    p.streamGapUs = std::max(0.0, median(gaps));
    report("kernel launch (host)", p.launchUs, "us");
    report("event record (host)", p.recordUs, "us");
    report("stream wait (host)", p.waitUs, "us");
    report("gap between kernels", p.streamGapUs, "us");
    return llvm::Error::success();
  }

  /// A wait resolving across streams: A ends, B's next kernel starts.
  llvm::Error waitLatency() {
    Event event;
    PIPEC_CUDA_TRY(cudaEventCreateWithFlags(event.out(), cudaEventDisableTiming), "event");
    std::vector<double> latency;
    for (int round = 0; round < 20; ++round) {
      PIPEC_CUDA_TRY(launchSpin(dim3(1), dim3(32), a.get(), 50'000, stamps + 0), "spin");
      PIPEC_CUDA_TRY(cudaEventRecord(event.get(), a.get()), "record");
      PIPEC_CUDA_TRY(cudaStreamWaitEvent(b.get(), event.get(), 0), "wait");
      PIPEC_CUDA_TRY(launchStampStart(b.get(), stamps + 1), "stamp");
      PIPEC_CUDA_TRY(cudaDeviceSynchronize(), "sync");
      auto host = readStamps(2);
      if (!host)
        return host.takeError();
      latency.push_back((double((*host)[1].start) - double((*host)[0].end)) / 1000);
    }
    p.waitLatencyUs = std::max(0.0, median(latency));
    report("cross-stream wait latency", p.waitLatencyUs, "us");
    return llvm::Error::success();
  }

  /// Straight-line graphs of 16 and 256 nodes: launch, per node, instantiate.
  llvm::Error graphs() {
    std::vector<double> launchSmall, launchLarge, instantiate, gaps;
    for (int nodes : {16, 256}) {
      Graph graph;
      PIPEC_CUDA_TRY(cudaGraphCreate(graph.out(), 0), "graph");
      cudaGraphNode_t previous = nullptr;
      unsigned long long zero = 0;
      std::vector<Stamp *> slots(nodes);
      for (int i = 0; i < nodes; ++i) {
        slots[i] = stamps + i;
        void *args[] = {&zero, &slots[i]};
        cudaKernelNodeParams params{};
        params.func = const_cast<void *>(spinKernel());
        params.gridDim = dim3(1);
        params.blockDim = dim3(32);
        params.kernelParams = args;
        cudaGraphNode_t node;
        PIPEC_CUDA_TRY(cudaGraphAddKernelNode(&node, graph.get(), previous ? &previous : nullptr,
                                              previous ? 1 : 0, &params),
                       "graph node");
        previous = node;
      }
      GraphExec exec;
      Clock::time_point t = Clock::now();
      PIPEC_CUDA_TRY(cudaGraphInstantiate(exec.out(), graph.get(), 0), "instantiate");
      if (nodes == 256)
        instantiate.push_back(microsSince(t) / nodes);
      PIPEC_CUDA_TRY(cudaGraphLaunch(exec.get(), a.get()), "launch");
      PIPEC_CUDA_TRY(cudaStreamSynchronize(a.get()), "sync");
      for (int round = 0; round < 20; ++round) {
        t = Clock::now();
        PIPEC_CUDA_TRY(cudaGraphLaunch(exec.get(), a.get()), "launch");
        double call = microsSince(t);
        PIPEC_CUDA_TRY(cudaStreamSynchronize(a.get()), "sync");
        (nodes == 16 ? launchSmall : launchLarge).push_back(call);
      }
      if (nodes == 256) {
        auto host = readStamps(nodes);
        if (!host)
          return host.takeError();
        for (int i = 1; i < nodes; ++i)
          gaps.push_back((double((*host)[i].start) - double((*host)[i - 1].end)) / 1000);
      }
    }
    double small = median(launchSmall), large = median(launchLarge);
    p.graphNodeUs = std::max(0.0, (large - small) / (256 - 16));
    p.graphLaunchUs = std::max(0.0, small - 16 * p.graphNodeUs);
    p.instantiateNodeUs = median(instantiate);
    p.graphGapUs = std::max(0.0, median(gaps));
    report("graph launch (host)", p.graphLaunchUs, "us");
    report("graph launch per node", p.graphNodeUs, "us");
    report("instantiate per node", p.instantiateNodeUs, "us");
    report("gap between graph nodes", p.graphGapUs, "us");
    return llvm::Error::success();
  }

  /// Pinned copy bandwidth per direction, alone and both at once.
  llvm::Error copies() {
    constexpr size_t bytes = size_t(256) << 20;
    DeviceMemory device, device2;
    PinnedMemory host, host2;
    PIPEC_CUDA_TRY(cudaMalloc(device.out(), bytes), "copy buffers");
    PIPEC_CUDA_TRY(cudaMalloc(device2.out(), bytes), "copy buffers");
    PIPEC_CUDA_TRY(cudaMallocHost(host.out(), bytes), "copy buffers");
    PIPEC_CUDA_TRY(cudaMallocHost(host2.out(), bytes), "copy buffers");
    auto time = [&](auto issue) -> llvm::Expected<double> {
      std::vector<double> t;
      for (int round = 0; round < 5; ++round) {
        Clock::time_point start = Clock::now();
        if (llvm::Error e = issue())
          return llvm::Error(std::move(e));
        PIPEC_CUDA_TRY(cudaDeviceSynchronize(), "copy");
        t.push_back(microsSince(start));
      }
      return median(t);
    };
    auto h2d = time([&]() -> llvm::Error {
      PIPEC_CUDA_TRY(cudaMemcpyAsync(device.get(), host.get(), bytes, cudaMemcpyHostToDevice, a.get()), "h2d");
      return llvm::Error::success();
    });
    if (!h2d)
      return h2d.takeError();
    auto d2h = time([&]() -> llvm::Error {
      PIPEC_CUDA_TRY(cudaMemcpyAsync(host.get(), device.get(), bytes, cudaMemcpyDeviceToHost, a.get()), "d2h");
      return llvm::Error::success();
    });
    if (!d2h)
      return d2h.takeError();
    auto d2d = time([&]() -> llvm::Error {
      PIPEC_CUDA_TRY(cudaMemcpyAsync(device2.get(), device.get(), bytes, cudaMemcpyDeviceToDevice, a.get()), "d2d");
      return llvm::Error::success();
    });
    if (!d2d)
      return d2d.takeError();
    auto both = time([&]() -> llvm::Error {
      PIPEC_CUDA_TRY(cudaMemcpyAsync(device.get(), host.get(), bytes, cudaMemcpyHostToDevice, a.get()), "h2d");
      PIPEC_CUDA_TRY(cudaMemcpyAsync(host2.get(), device2.get(), bytes, cudaMemcpyDeviceToHost, b.get()), "d2h");
      return llvm::Error::success();
    });
    if (!both)
      return both.takeError();
    auto small = time([&]() -> llvm::Error {
      PIPEC_CUDA_TRY(cudaMemcpyAsync(device.get(), host.get(), 4, cudaMemcpyHostToDevice, a.get()), "h2d");
      return llvm::Error::success();
    });
    if (!small)
      return small.takeError();
    p.h2dGBps = double(bytes) / (*h2d * 1e3);
    p.d2hGBps = double(bytes) / (*d2h * 1e3);
    p.d2dGBps = double(bytes) / (*d2d * 1e3);
    p.copyLatencyUs = std::max(0.0, *small - p.launchUs);
    report("h2d bandwidth", p.h2dGBps, "GB/s");
    report("d2h bandwidth", p.d2hGBps, "GB/s");
    report("d2d bandwidth", p.d2dGBps, "GB/s");
    report("h2d + d2h at once, each", double(bytes) / (*both * 1e3), "GB/s");
    report("small copy latency", p.copyLatencyUs, "us");
    return llvm::Error::success();
  }

  /// Back-to-back empty host functions: the latency of each.
  llvm::Error hostFunctions() {
    constexpr int n = 64;
    std::vector<double> each;
    for (int round = 0; round < 5; ++round) {
      Clock::time_point t = Clock::now();
      for (int i = 0; i < n; ++i)
        PIPEC_CUDA_TRY(cudaLaunchHostFunc(a.get(), nothing, nullptr), "host function");
      PIPEC_CUDA_TRY(cudaStreamSynchronize(a.get()), "sync");
      each.push_back(microsSince(t) / n);
    }
    p.hostFuncLatencyUs = median(each);
    report("host function latency", p.hostFuncLatencyUs, "us");
    return llvm::Error::success();
  }
};

} // namespace

llvm::Expected<DeviceProfile> runtime::calibrate(const DeviceProfile &defaults,
                                                 llvm::raw_ostream &log) {
  Calibrator c(defaults, log);
  if (llvm::Error e = c.setUp())
    return llvm::Error(std::move(e));
  log << "calibrating on device 0 (" << c.p.name << ", " << c.p.sms << " SMs):\n";
  for (auto step : {&Calibrator::streams, &Calibrator::waitLatency,
                    &Calibrator::graphs, &Calibrator::copies,
                    &Calibrator::hostFunctions})
    if (llvm::Error e = (c.*step)())
      return llvm::Error(std::move(e));
  return c.p;
}
