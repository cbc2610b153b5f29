//===- Calibrate.cpp - Measuring the device model's parameters ------------===//
//
// Each parameter is measured as docs/device-model.md says the model uses it,
// on a warmed-up GPU, repeated, the median kept. Device-side times come from
// %globaltimer stamps (reset before every round), copy times from timing
// events, host costs from the host clock; where a parameter spans the two
// (graph launch to first node, a kernel's end to the host function after
// it), the clocks are related first (CalibrationMath's clockOffset). The
// arithmetic lives in runtime/calibrate/CalibrationMath, tested without a GPU.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaBackend.h"

#include "runtime/calibrate/CalibrationMath.h"
#include "runtime/cuda/Check.h"
#include "runtime/cuda/Kernels.h"
#include "runtime/cuda/Owners.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <chrono>

using namespace pipec;
using namespace pipec::cuda;
using namespace pipec::runtime::calibration;

namespace {

double hostMicros() { return double(hostNanoseconds()) / 1000; }

/// A host function that reads the host clock into *userData (microseconds).
void CUDART_CB readHostClock(void *out) { *static_cast<double *>(out) = hostMicros(); }

struct Calibrator {
  Calibrator(const DeviceProfile &defaults, llvm::raw_ostream &log) : p(defaults), log(log) {}

  DeviceProfile p;
  llvm::raw_ostream &log;
  Stream a, b;
  DeviceMemory stampMemory;
  Stamp *stamps = nullptr;
  ClockOffset offset;
  /// Every %globaltimer reading is taken as microseconds after this one
  /// (deviceMicros), so that no figure loses precision to the ~1.8e18 ns.
  uint64_t deviceBase = 0;
  int asyncEngines = 0;
  static constexpr int kStamps = 1024;

  llvm::Error setUp() {
    int count = 0;
    cudaError_t status = cudaGetDeviceCount(&count);
    if (status != cudaSuccess || count == 0) {
      (void)cudaGetLastError();
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "no CUDA device: %s",
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
    p.sharedMemoryPerSM = static_cast<unsigned>(props.sharedMemPerMultiprocessor);
    p.sharedMemoryPerBlock = static_cast<unsigned>(props.sharedMemPerBlockOptin);
    p.registersPerSM = static_cast<unsigned>(props.regsPerMultiprocessor);
    asyncEngines = props.asyncEngineCount;
    PIPEC_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&p.priorityLeast, &p.priorityGreatest),
                   "device 0");
    PIPEC_CUDA_TRY(cudaStreamCreateWithFlags(a.out(), cudaStreamNonBlocking), "stream");
    PIPEC_CUDA_TRY(cudaStreamCreateWithFlags(b.out(), cudaStreamNonBlocking), "stream");
    PIPEC_CUDA_TRY(cudaMalloc(stampMemory.out(), sizeof(Stamp) * kStamps), "stamps");
    stamps = static_cast<Stamp *>(stampMemory.get());
    return llvm::Error::success();
  }

  llvm::Error resetStamps(int n) {
    PIPEC_CUDA_TRY(launchResetStamps(a.get(), stamps, n), "resetting stamps");
    PIPEC_CUDA_TRY(cudaStreamSynchronize(a.get()), "resetting stamps");
    return llvm::Error::success();
  }

  /// Stamps 0..n-1 as intervals in microseconds of the device clock.
  llvm::Expected<std::vector<Interval>> readStamps(int n) {
    std::vector<Stamp> host(n);
    PIPEC_CUDA_TRY(cudaMemcpy(host.data(), stamps, sizeof(Stamp) * n, cudaMemcpyDeviceToHost),
                   "stamps");
    std::vector<Interval> out(n);
    for (int i = 0; i < n; ++i)
      out[i] = {deviceMicros(host[i].start, deviceBase),
                deviceMicros(host[i].end, deviceBase)};
    return out;
  }

  void report(const char *what, double value, const char *unit) {
    log << llvm::formatv("  {0,-34} {1,10:f3} {2}\n", what, value, unit);
  }

  /// An idle H200 clocks down (345 MHz): a fifth of a second of work on
  /// every SM brings the clocks up before anything is measured.
  llvm::Error warmUp() {
    PIPEC_CUDA_TRY(launchSpinStamped(dim3(p.sms * 4), dim3(256), a.get(), 200'000'000, stamps),
                   "warm-up");
    PIPEC_CUDA_TRY(cudaStreamSynchronize(a.get()), "warm-up");
    log << "  warmed up: 200 ms on every SM\n";
    return llvm::Error::success();
  }

  /// %globaltimer's resolution, and its offset from the host clock.
  llvm::Error clocks() {
    constexpr unsigned n = 4096;
    DeviceMemory readings;
    PIPEC_CUDA_TRY(cudaMalloc(readings.out(), n * sizeof(unsigned long long)), "timer");
    PIPEC_CUDA_TRY(
        launchTimerReadings(a.get(), static_cast<unsigned long long *>(readings.get()), n),
        "timer");
    // The stream is non-blocking: a plain cudaMemcpy would not wait for it.
    PIPEC_CUDA_TRY(cudaStreamSynchronize(a.get()), "timer");
    std::vector<uint64_t> host(n);
    PIPEC_CUDA_TRY(
        cudaMemcpy(host.data(), readings.get(), n * sizeof(uint64_t), cudaMemcpyDeviceToHost),
        "timer");
    p.timerResolutionNs = double(timerResolution(host));
    deviceBase = host.front();
    if (llvm::Error e = clockOffsetProbe())
      return e;
    report("device timer resolution", p.timerResolutionNs, "ns");
    report("host/device clock uncertainty", offset.uncertainty, "us");
    return llvm::Error::success();
  }

  /// The host/device clock offset from round trips through mapped pinned
  /// memory: a resident one-thread kernel answers each of the host's
  /// requests with a %globaltimer reading; the host brackets each round trip
  /// (no launch, allocation or copy inside it) and the tightest one is kept.
  llvm::Error clockOffsetProbe() {
    constexpr unsigned samples = 200;
    struct Mailbox {
      unsigned request;
      unsigned answer;
      unsigned long long stamps[samples];
    };
    PinnedMemory memory;
    PIPEC_CUDA_TRY(cudaHostAlloc(memory.out(), sizeof(Mailbox), cudaHostAllocMapped),
                   "the clock probe");
    auto *box = static_cast<volatile Mailbox *>(memory.get());
    box->request = 0;
    box->answer = 0;
    void *device = nullptr;
    PIPEC_CUDA_TRY(cudaHostGetDevicePointer(&device, memory.get(), 0), "the clock probe");
    auto *onDevice = static_cast<volatile Mailbox *>(device);
    PIPEC_CUDA_TRY(launchClockProbe(a.get(), &onDevice->request, onDevice->stamps,
                                    &onDevice->answer, samples, 2'000'000'000ull),
                   "the clock probe");
    std::vector<ClockSample> taken;
    for (unsigned i = 0; i < samples; ++i) {
      double before = hostMicros();
      std::atomic_thread_fence(std::memory_order_seq_cst);
      box->request = i + 1;
      std::atomic_thread_fence(std::memory_order_seq_cst);
      auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
      while (box->answer != i + 1)
        if (std::chrono::steady_clock::now() > deadline) {
          (void)cudaStreamSynchronize(a.get());
          return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                         "the clock probe kernel did not answer");
        }
      double after = hostMicros();
      std::atomic_thread_fence(std::memory_order_seq_cst);
      taken.push_back({before, deviceMicros(box->stamps[i], deviceBase), after});
    }
    PIPEC_CUDA_TRY(cudaStreamSynchronize(a.get()), "the clock probe");
    offset = clockOffset(taken);
    return llvm::Error::success();
  }

  /// Host cost of launches, records and waits; the gap between kernels of
  /// one stream, from the previous one's end to the next one's start.
  llvm::Error streams() {
    constexpr int n = 256;
    std::vector<double> launch, record, wait, gaps;
    Event event;
    PIPEC_CUDA_TRY(cudaEventCreateWithFlags(event.out(), cudaEventDisableTiming), "event");
    for (int round = 0; round < 5; ++round) {
      if (llvm::Error e = resetStamps(n + 1))
        return e;
      // A long kernel first, so that the launches below queue up behind it.
      PIPEC_CUDA_TRY(launchSpinStamped(dim3(1), dim3(32), a.get(), 2'000'000, stamps + n),
                     "spin");
      double t = hostMicros();
      for (int i = 0; i < n; ++i)
        PIPEC_CUDA_TRY(launchSpinStamped(dim3(1), dim3(32), a.get(), 0, stamps + i), "spin");
      launch.push_back((hostMicros() - t) / n);
      t = hostMicros();
      for (int i = 0; i < n; ++i)
        PIPEC_CUDA_TRY(cudaEventRecord(event.get(), b.get()), "record");
      record.push_back((hostMicros() - t) / n);
      t = hostMicros();
      for (int i = 0; i < n; ++i)
        PIPEC_CUDA_TRY(cudaStreamWaitEvent(b.get(), event.get(), 0), "wait");
      wait.push_back((hostMicros() - t) / n);
      PIPEC_CUDA_TRY(cudaDeviceSynchronize(), "sync");
      auto items = readStamps(n);
      if (!items)
        return items.takeError();
      gaps.push_back(medianGapUs(*items));
    }
    p.launchUs = median(launch);
    p.recordUs = median(record);
    p.waitUs = median(wait);
    p.streamGapUs = median(gaps);
    report("kernel launch (host)", p.launchUs, "us");
    report("event record (host)", p.recordUs, "us");
    report("stream wait (host)", p.waitUs, "us");
    report("gap between kernels of a stream", p.streamGapUs, "us");
    return llvm::Error::success();
  }

  /// A wait resolving across streams: A's kernel ends, B's next one starts.
  llvm::Error waitLatency() {
    Event event;
    PIPEC_CUDA_TRY(cudaEventCreateWithFlags(event.out(), cudaEventDisableTiming), "event");
    std::vector<double> latency;
    for (int round = 0; round < 20; ++round) {
      if (llvm::Error e = resetStamps(2))
        return e;
      PIPEC_CUDA_TRY(launchSpinStamped(dim3(1), dim3(32), a.get(), 50'000, stamps + 0),
                     "spin");
      PIPEC_CUDA_TRY(cudaEventRecord(event.get(), a.get()), "record");
      PIPEC_CUDA_TRY(cudaStreamWaitEvent(b.get(), event.get(), 0), "wait");
      PIPEC_CUDA_TRY(launchSpinStamped(dim3(1), dim3(32), b.get(), 0, stamps + 1), "spin");
      PIPEC_CUDA_TRY(cudaDeviceSynchronize(), "sync");
      auto items = readStamps(2);
      if (!items)
        return items.takeError();
      latency.push_back(medianGapUs(*items));
    }
    // The model adds it after the producer's stream moved on (stream_gap_us).
    p.waitLatencyUs = afterStreamGapUs(median(latency), p.streamGapUs);
    report("cross-stream wait latency", p.waitLatencyUs, "us");
    return llvm::Error::success();
  }

  /// Straight-line graphs of 16 and 256 nodes: launch call to first node,
  /// host cost per node, instantiation and first upload per node, the gap
  /// between dependent nodes.
  llvm::Error graphs() {
    std::vector<double> callSmall, callLarge, toFirstNode, instantiate, upload, gaps;
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
        params.func = const_cast<void *>(spinStampedKernel());
        params.gridDim = dim3(1);
        params.blockDim = dim3(32);
        params.kernelParams = args;
        cudaGraphNode_t node;
        PIPEC_CUDA_TRY(cudaGraphAddKernelNode(&node, graph.get(),
                                              previous ? &previous : nullptr, previous ? 1 : 0,
                                              &params),
                       "graph node");
        previous = node;
      }
      GraphExec exec;
      double t = hostMicros();
      PIPEC_CUDA_TRY(cudaGraphInstantiate(exec.out(), graph.get(), 0), "instantiate");
      instantiate.push_back((hostMicros() - t) / nodes);
      t = hostMicros();
      PIPEC_CUDA_TRY(cudaGraphLaunch(exec.get(), a.get()), "launch");
      PIPEC_CUDA_TRY(cudaStreamSynchronize(a.get()), "sync");
      double first = hostMicros() - t;
      std::vector<double> replays, calls, firstStarts;
      for (int round = 0; round < 20; ++round) {
        if (llvm::Error e = resetStamps(nodes))
          return e;
        double call = hostMicros();
        PIPEC_CUDA_TRY(cudaGraphLaunch(exec.get(), a.get()), "launch");
        double returned = hostMicros();
        PIPEC_CUDA_TRY(cudaStreamSynchronize(a.get()), "sync");
        replays.push_back(hostMicros() - call);
        (nodes == 16 ? callSmall : callLarge).push_back(returned - call);
        auto items = readStamps(nodes);
        if (!items)
          return items.takeError();
        calls.push_back(call);
        firstStarts.push_back((*items)[0].start);
        if (nodes == 256)
          gaps.push_back(medianGapUs(*items));
      }
      if (nodes == 16)
        toFirstNode.push_back(medianHostToDeviceUs(calls, firstStarts, offset));
      upload.push_back(std::max(0.0, first - median(replays)) / nodes);
    }
    double small = median(callSmall), large = median(callLarge);
    p.graphNodeUs = std::max(0.0, (large - small) / (256 - 16));
    // As the docs define it: the host's cudaGraphLaunch call alone (its
    // fixed part, the per-node part being graph_node_us), not the call to
    // the first node's start, which adds the device's own latency.
    p.graphLaunchUs = graphLaunchFixedUs(small, 16, p.graphNodeUs);
    p.instantiateNodeUs = median(instantiate);
    p.uploadNodeUs = median(upload);
    p.graphGapUs = median(gaps);
    report("graph launch call (host, fixed part)", p.graphLaunchUs, "us");
    report("graph launch call to first node (not in the profile)", median(toFirstNode), "us");
    report("graph launch per node (host)", p.graphNodeUs, "us");
    report("instantiate per node", p.instantiateNodeUs, "us");
    report("first launch (upload) per node", p.uploadNodeUs, "us");
    report("gap between graph nodes", p.graphGapUs, "us");
    return llvm::Error::success();
  }

  /// Copy time against size, per direction, from timing events on one
  /// stream: the intercept is the engine's latency, the slope its bandwidth.
  llvm::Error copies() {
    constexpr size_t largest = size_t(256) << 20;
    DeviceMemory device, device2;
    PinnedMemory host, host2;
    PIPEC_CUDA_TRY(cudaMalloc(device.out(), largest), "copy buffers");
    PIPEC_CUDA_TRY(cudaMalloc(device2.out(), largest), "copy buffers");
    PIPEC_CUDA_TRY(cudaMallocHost(host.out(), largest), "copy buffers");
    PIPEC_CUDA_TRY(cudaMallocHost(host2.out(), largest), "copy buffers");
    Event begin, end;
    PIPEC_CUDA_TRY(cudaEventCreate(begin.out()), "copy events");
    PIPEC_CUDA_TRY(cudaEventCreate(end.out()), "copy events");
    struct Direction {
      const char *name;
      void *dst, *src;
      cudaMemcpyKind kind;
      double *gbps;
    } directions[] = {
        {"h2d", device.get(), host.get(), cudaMemcpyHostToDevice, &p.h2dGBps},
        {"d2h", host.get(), device.get(), cudaMemcpyDeviceToHost, &p.d2hGBps},
        {"d2d", device2.get(), device.get(), cudaMemcpyDeviceToDevice, &p.d2dGBps}};
    std::vector<double> latencies;
    for (Direction &d : directions) {
      std::vector<std::pair<double, double>> samples;
      for (size_t bytes :
           {size_t(4), size_t(64) << 10, size_t(1) << 20, size_t(16) << 20, largest}) {
        std::vector<double> times;
        for (int round = 0; round < 5; ++round) {
          PIPEC_CUDA_TRY(cudaEventRecord(begin.get(), a.get()), "copy");
          PIPEC_CUDA_TRY(cudaMemcpyAsync(d.dst, d.src, bytes, d.kind, a.get()), "copy");
          PIPEC_CUDA_TRY(cudaEventRecord(end.get(), a.get()), "copy");
          PIPEC_CUDA_TRY(cudaEventSynchronize(end.get()), "copy");
          float ms = 0;
          PIPEC_CUDA_TRY(cudaEventElapsedTime(&ms, begin.get(), end.get()), "copy");
          times.push_back(double(ms) * 1000);
        }
        samples.push_back({double(bytes), median(times)});
      }
      CopyFit fit = fitCopies(samples);
      if (fit.GBps > 0)
        *d.gbps = fit.GBps;
      latencies.push_back(fit.latencyUs);
      log << llvm::formatv("  {0,-34} {1,10:f3} GB/s, latency {2:f3} us\n",
                           std::string(d.name) + " copies", fit.GBps, fit.latencyUs);
    }
    p.copyLatencyUs = median(latencies);
    // Both directions at once, each on its own stream: do they share PCIe?
    double t = hostMicros();
    PIPEC_CUDA_TRY(
        cudaMemcpyAsync(device.get(), host.get(), largest, cudaMemcpyHostToDevice, a.get()),
        "h2d");
    PIPEC_CUDA_TRY(
        cudaMemcpyAsync(host2.get(), device2.get(), largest, cudaMemcpyDeviceToHost, b.get()),
        "d2h");
    PIPEC_CUDA_TRY(cudaDeviceSynchronize(), "copies");
    report("h2d + d2h at once, each", double(largest) / ((hostMicros() - t) * 1e3), "GB/s");
    report("copy engine latency", p.copyLatencyUs, "us");
    log << llvm::formatv("  {0,-34} {1,10}\n", "asyncEngineCount (device)", asyncEngines);
    PinnedMemory small;
    PIPEC_CUDA_TRY(cudaMallocHost(small.out(), 64), "copy buffers");
    struct Probe {
      const char *name;
      void *dst, *src, *smallDst, *smallSrc;
      cudaMemcpyKind kind;
      unsigned *engines;
    } probes[] = {{"h2d", device.get(), host.get(), device2.get(), small.get(),
                   cudaMemcpyHostToDevice, &p.copyEnginesH2D},
                  {"d2h", host.get(), device.get(), small.get(), device2.get(),
                   cudaMemcpyDeviceToHost, &p.copyEnginesD2H}};
    for (Probe &probe : probes) {
      llvm::Expected<unsigned> n = copyEngineProbe(probe.dst, probe.src, probe.smallDst,
                                                   probe.smallSrc, probe.kind, largest);
      if (!n)
        return n.takeError();
      *probe.engines = *n;
      log << llvm::formatv("  {0,-34} {1,10}\n", std::string(probe.name) + " copy engines",
                           *n);
    }
    return llvm::Error::success();
  }

  /// How many copies of one direction run at once: m large copies (each on
  /// its own stream), then a 4-byte copy on another stream, for m = 1..3;
  /// did the small one wait for a large one? (CalibrationMath's copyEngines.)
  llvm::Expected<unsigned> copyEngineProbe(void *dst, void *src, void *smallDst,
                                           void *smallSrc, cudaMemcpyKind kind, size_t bytes) {
    constexpr int kMostLarge = 3;
    Stream streams[kMostLarge + 1];
    for (Stream &st : streams)
      PIPEC_CUDA_TRY(cudaStreamCreateWithFlags(st.out(), cudaStreamNonBlocking), "probe");
    Event begin, largeDone, smallDone;
    PIPEC_CUDA_TRY(cudaEventCreate(begin.out()), "probe");
    PIPEC_CUDA_TRY(cudaEventCreate(largeDone.out()), "probe");
    PIPEC_CUDA_TRY(cudaEventCreate(smallDone.out()), "probe");
    std::vector<double> ahead;
    double largeUs = 0;
    for (int m = 1; m <= kMostLarge; ++m) {
      PIPEC_CUDA_TRY(cudaDeviceSynchronize(), "probe");
      PIPEC_CUDA_TRY(cudaEventRecord(begin.get(), streams[0].get()), "probe");
      for (int i = 0; i < m; ++i)
        PIPEC_CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, kind, streams[i].get()), "probe");
      PIPEC_CUDA_TRY(cudaEventRecord(largeDone.get(), streams[0].get()), "probe");
      PIPEC_CUDA_TRY(cudaMemcpyAsync(smallDst, smallSrc, 4, kind, streams[m].get()), "probe");
      PIPEC_CUDA_TRY(cudaEventRecord(smallDone.get(), streams[m].get()), "probe");
      PIPEC_CUDA_TRY(cudaDeviceSynchronize(), "probe");
      float gap = 0, large = 0;
      PIPEC_CUDA_TRY(cudaEventElapsedTime(&gap, smallDone.get(), largeDone.get()), "probe");
      PIPEC_CUDA_TRY(cudaEventElapsedTime(&large, begin.get(), largeDone.get()), "probe");
      ahead.push_back(double(gap) * 1000);
      if (m == 1)
        largeUs = double(large) * 1000;
    }
    return copyEngines(ahead, largeUs);
  }

  /// A host function's latency: the kernel before it on its stream ends,
  /// the host function starts.
  llvm::Error hostFunctions() {
    std::vector<double> ends, starts;
    for (int round = 0; round < 20; ++round) {
      if (llvm::Error e = resetStamps(1))
        return e;
      double started = 0;
      PIPEC_CUDA_TRY(launchSpinStamped(dim3(1), dim3(32), a.get(), 20'000, stamps), "spin");
      PIPEC_CUDA_TRY(cudaLaunchHostFunc(a.get(), readHostClock, &started), "host function");
      PIPEC_CUDA_TRY(cudaStreamSynchronize(a.get()), "sync");
      auto items = readStamps(1);
      if (!items)
        return items.takeError();
      ends.push_back((*items)[0].end);
      starts.push_back(started);
    }
    // The model starts a host function this long after the stream reached
    // it, i.e. after the kernel's end and the stream's gap.
    p.hostFuncLatencyUs =
        afterStreamGapUs(medianDeviceToHostUs(ends, starts, offset), p.streamGapUs);
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
  for (auto step : {&Calibrator::warmUp, &Calibrator::clocks, &Calibrator::streams,
                    &Calibrator::waitLatency, &Calibrator::graphs, &Calibrator::copies,
                    &Calibrator::hostFunctions})
    if (llvm::Error e = (c.*step)())
      return llvm::Error(std::move(e));
  c.p.markMeasured({"sms",
                    "max_threads_per_sm",
                    "max_blocks_per_sm",
                    "shared_memory_per_sm",
                    "shared_memory_per_block",
                    "registers_per_sm",
                    "priority_least",
                    "priority_greatest",
                    "timer_resolution_ns",
                    "launch_us",
                    "record_us",
                    "wait_us",
                    "stream_gap_us",
                    "wait_latency_us",
                    "graph_node_us",
                    "graph_launch_us",
                    "instantiate_node_us",
                    "upload_node_us",
                    "graph_gap_us",
                    "copy_latency_us",
                    "copy_engines_h2d",
                    "copy_engines_d2h",
                    "host_func_latency_us"});
  return c.p;
}
