//===- CudaBackend.cpp - Streams, events, capture and graphs on a GPU -----===//
//
// A kernel stage is a spin kernel with the stage's blocks and threads whose
// blocks busy-wait the stage's time on %globaltimer and stamp their start
// and end into a device buffer. Copies move the stage's bytes between pinned
// host buffers and device buffers, allocated once, outside the timed region;
// host stages are cudaLaunchHostFunc calls that spin on the host. Copies and
// host stages cannot stamp themselves: a one-thread kernel on the same stream
// stamps before and after them, so no synchronisation is added between
// streams. The timeline comes from those stamps.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaBackend.h"

#include "runtime/cuda/Check.h"
#include "runtime/cuda/Kernels.h"
#include "runtime/cuda/Owners.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <bitset>
#include <chrono>
#include <map>

using namespace pipec;
using namespace pipec::cuda;
using namespace pipec::runtime;

bool runtime::cudaBuilt() { return true; }

namespace {

using Clock = std::chrono::steady_clock;
double microsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

llvm::Error noDevice(const std::string &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "no CUDA device: " + why);
}

/// Device 0, or why there is none.
llvm::Error findDevice() {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();
    return noDevice(cudaGetErrorString(status));
  }
  if (count == 0)
    return noDevice("the CUDA runtime sees no GPU");
  return check(cudaSetDevice(0), "cudaSetDevice", "device 0");
}

/// Everything a run allocates, outside the timed region.
struct Resources {
  std::vector<Stream> streams;
  std::vector<Event> events;
  Stream setup; ///< resets stamps, launches graphs
  DeviceMemory stampMemory;
  Stamp *stamps = nullptr;
  std::vector<DeviceMemory> deviceBuffers; ///< per stage: source side
  std::vector<DeviceMemory> deviceBuffers2; ///< per stage: d2d destination
  std::vector<PinnedMemory> pinnedBuffers; ///< per stage
  std::vector<size_t> bytes;               ///< per stage
  std::vector<double> hostMicros;          ///< per stage, for hostSpin
  std::vector<unsigned long long> spinNanos; ///< per stage
};

class CudaBackend : public Backend {
public:
  CudaBackend(const DeviceProfile &profile) : profile(profile) {}

  llvm::Error init() {
    if (llvm::Error e = findDevice())
      return e;
    PIPEC_CUDA_TRY(cudaGetDeviceProperties(&props, 0), "device 0");
    PIPEC_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest),
                   "device 0");
    int driver = 0;
    (void)cudaDriverGetVersion(&driver);
    deviceName = llvm::formatv("{0} ({1} SMs, driver {2}.{3})", props.name,
                               props.multiProcessorCount, driver / 1000,
                               (driver % 1000) / 10);
    return llvm::Error::success();
  }

  const char *name() const override { return "cuda"; }
  std::string device() const override { return deviceName; }

  llvm::Expected<LoweringRun> run(const Schedule &s, Lowering lowering,
                                  const RunOptions &options) override {
    Resources res;
    if (llvm::Error e = allocate(s, options, res))
      return llvm::Error(std::move(e));
    LoweringRun r;
    r.schedule = &s;
    r.lowering = lowering;
    r.replays = options.replays;
    llvm::Error e = lowering == Lowering::Streams ? runStreams(s, res, options, r)
                                                  : runGraph(s, res, options, r);
    if (e)
      return llvm::Error(std::move(e));
    summarise(r);
    return r;
  }

private:
  /// The CUDA priority for a stream, on this device's range.
  int priorityOf(const program::Stream &st) const {
    switch (st.priorityClass) {
    case program::PriorityClass::High:
      return greatest;
    case program::PriorityClass::Low:
      return least;
    case program::PriorityClass::Normal:
      return least + (greatest - least) / 2;
    case program::PriorityClass::Raw:
      return static_cast<int>(std::clamp<int64_t>(st.rawPriority, greatest, least));
    }
    return least;
  }

  llvm::Error allocate(const Schedule &s, const RunOptions &options,
                       Resources &res) {
    for (const program::Stream &st : s.streamPlan.streams) {
      res.streams.emplace_back();
      int priority = options.priorities ? priorityOf(st) : least;
      PIPEC_CUDA_TRY(cudaStreamCreateWithPriority(res.streams.back().out(),
                                                  cudaStreamNonBlocking, priority),
                     "stream '" + st.name + "'");
    }
    PIPEC_CUDA_TRY(cudaStreamCreateWithFlags(res.setup.out(), cudaStreamNonBlocking),
                   "the setup stream");
    for (uint32_t e = 0; e < std::max(1u, s.eventObjects); ++e) {
      res.events.emplace_back();
      PIPEC_CUDA_TRY(cudaEventCreateWithFlags(res.events.back().out(),
                                              cudaEventDisableTiming),
                     "event e" + std::to_string(e));
    }
    const size_t n = s.instances.size();
    PIPEC_CUDA_TRY(cudaMalloc(res.stampMemory.out(), sizeof(Stamp) * std::max<size_t>(n, 1)),
                   "the timeline's stamps");
    res.stamps = static_cast<Stamp *>(res.stampMemory.get());
    const auto &stages = s.pipeline.stages;
    res.deviceBuffers.resize(stages.size());
    res.deviceBuffers2.resize(stages.size());
    res.pinnedBuffers.resize(stages.size());
    res.bytes.assign(stages.size(), 0);
    res.hostMicros.assign(stages.size(), 0);
    res.spinNanos.assign(stages.size(), 0);
    for (size_t k = 0; k < stages.size(); ++k) {
      const program::Stage &st = stages[k];
      std::string what = "stage '" + st.name + "'";
      res.spinNanos[k] = static_cast<unsigned long long>(st.durationUs * 1000);
      res.hostMicros[k] = st.durationUs;
      if (st.kind != StageKind::Copy)
        continue;
      double gbps = st.direction == CopyDirection::H2D   ? profile.h2dGBps
                    : st.direction == CopyDirection::D2H ? profile.d2hGBps
                                                         : profile.d2dGBps;
      size_t bytes = st.bytes ? *st.bytes
                              : static_cast<size_t>(st.durationUs * gbps * 1e3);
      bytes = std::max<size_t>(bytes, 1);
      res.bytes[k] = bytes;
      PIPEC_CUDA_TRY(cudaMalloc(res.deviceBuffers[k].out(), bytes), what);
      if (st.direction == CopyDirection::D2D)
        PIPEC_CUDA_TRY(cudaMalloc(res.deviceBuffers2[k].out(), bytes), what);
      else
        PIPEC_CUDA_TRY(cudaMallocHost(res.pinnedBuffers[k].out(), bytes), what);
    }
    PIPEC_CUDA_TRY(cudaDeviceSynchronize(), "allocation");
    return llvm::Error::success();
  }

  /// Issues instance v's work on `stream`: the calls of one launch op.
  llvm::Error launch(const Schedule &s, Resources &res, uint32_t v,
                     cudaStream_t stream) {
    const uint32_t k = s.instances.stageOf(v);
    const program::Stage &st = s.pipeline.stages[k];
    Stamp *stamp = res.stamps + v;
    std::string what = "stage '" + s.instances.name(v) + "'";
    switch (st.kind) {
    case StageKind::Kernel:
      PIPEC_CUDA_TRY(launchSpin(dim3(st.blocks), dim3(st.threads), stream,
                                res.spinNanos[k], stamp),
                     what);
      return llvm::Error::success();
    case StageKind::Copy: {
      PIPEC_CUDA_TRY(launchStampStart(stream, stamp), what);
      void *device = res.deviceBuffers[k].get();
      void *dst, *src;
      cudaMemcpyKind kind;
      if (st.direction == CopyDirection::H2D) {
        dst = device, src = res.pinnedBuffers[k].get(), kind = cudaMemcpyHostToDevice;
      } else if (st.direction == CopyDirection::D2H) {
        dst = res.pinnedBuffers[k].get(), src = device, kind = cudaMemcpyDeviceToHost;
      } else {
        dst = res.deviceBuffers2[k].get(), src = device, kind = cudaMemcpyDeviceToDevice;
      }
      PIPEC_CUDA_TRY(cudaMemcpyAsync(dst, src, res.bytes[k], kind, stream), what);
      PIPEC_CUDA_TRY(launchStampEnd(stream, stamp), what);
      return llvm::Error::success();
    }
    case StageKind::Host:
      PIPEC_CUDA_TRY(launchStampStart(stream, stamp), what);
      PIPEC_CUDA_TRY(cudaLaunchHostFunc(stream, hostSpin, &res.hostMicros[k]), what);
      PIPEC_CUDA_TRY(launchStampEnd(stream, stamp), what);
      return llvm::Error::success();
    }
    return llvm::Error::success();
  }

  /// The schedule's host calls, exactly as emitted.
  llvm::Error issue(const Schedule &s, Resources &res) {
    for (const Op &op : s.ops) {
      cudaStream_t stream = res.streams[op.stream].get();
      switch (op.kind) {
      case Op::Launch:
        if (llvm::Error e = launch(s, res, op.instance, stream))
          return e;
        break;
      case Op::Record:
        PIPEC_CUDA_TRY(cudaEventRecord(res.events[op.event].get(), stream),
                       "event e" + std::to_string(op.event));
        break;
      case Op::Wait:
        PIPEC_CUDA_TRY(cudaStreamWaitEvent(stream, res.events[op.event].get(), 0),
                       "event e" + std::to_string(op.event));
        break;
      }
    }
    return llvm::Error::success();
  }

  llvm::Error resetStamps(const Schedule &s, Resources &res) {
    PIPEC_CUDA_TRY(launchResetStamps(res.setup.get(), res.stamps,
                                     s.instances.size()),
                   "resetting the stamps");
    PIPEC_CUDA_TRY(cudaStreamSynchronize(res.setup.get()), "resetting the stamps");
    return llvm::Error::success();
  }

  /// Reads the stamps into r.start/r.end, in microseconds from `hostStart`,
  /// given that %globaltimer read `timer` when the host clock read `atTimer`.
  llvm::Error readStamps(const Schedule &s, Resources &res,
                         unsigned long long timer, Clock::time_point atTimer,
                         Clock::time_point hostStart, LoweringRun &r) {
    std::vector<Stamp> host(s.instances.size());
    PIPEC_CUDA_TRY(cudaMemcpy(host.data(), res.stamps, sizeof(Stamp) * host.size(),
                              cudaMemcpyDeviceToHost),
                   "reading the timeline");
    double shift = std::chrono::duration<double, std::micro>(hostStart - atTimer).count();
    r.start.resize(host.size());
    r.end.resize(host.size());
    for (size_t v = 0; v < host.size(); ++v) {
      r.start[v] = (double(host[v].start) - double(timer)) / 1000 - shift;
      r.end[v] = (double(host[v].end) - double(timer)) / 1000 - shift;
    }
    return llvm::Error::success();
  }

  /// Replays `options.replays` times after one untimed first launch (which
  /// warms up, or uploads a graph): `launch` issues a replay, `finish` waits
  /// for it. The last replay's stamps make the timeline.
  template <typename Launch, typename Finish>
  llvm::Error timeReplays(const Schedule &s, Resources &res,
                          const RunOptions &options, LoweringRun &r,
                          Launch launch, Finish finish) {
    std::vector<double> replay, submit;
    for (unsigned i = 0; i <= options.replays; ++i) {
      if (llvm::Error e = resetStamps(s, res))
        return e;
      unsigned long long timer = 0;
      PIPEC_CUDA_TRY(readGlobalTimer(&timer), "reading %globaltimer");
      Clock::time_point atTimer = Clock::now();
      Clock::time_point start = Clock::now();
      if (llvm::Error e = launch())
        return e;
      double issued = microsSince(start);
      if (llvm::Error e = finish())
        return e;
      double done = microsSince(start);
      if (i == 0) {
        r.timings.firstLaunch = done;
        continue;
      }
      replay.push_back(done);
      submit.push_back(issued);
      if (i == options.replays) {
        if (r.lowering == Lowering::Graph)
          r.host.push_back({0, issued, "graph launch", UINT32_MAX});
        if (llvm::Error e = readStamps(s, res, timer, atTimer, start, r))
          return e;
      }
    }
    std::tie(r.timings.replayMedian, r.timings.replayP95) = medianAndP95(replay);
    r.timings.submitMedian = medianAndP95(submit).first;
    return llvm::Error::success();
  }

  llvm::Error runStreams(const Schedule &s, Resources &res,
                         const RunOptions &options, LoweringRun &r) {
    return timeReplays(
        s, res, options, r, [&] { return issue(s, res); },
        [&]() -> llvm::Error {
          PIPEC_CUDA_TRY(cudaDeviceSynchronize(), "the replay");
          return llvm::Error::success();
        });
  }

  /// The graph by stream capture of the stream lowering.
  llvm::Expected<Graph> capture(const Schedule &s, Resources &res) {
    Graph graph;
    cudaStream_t origin = res.streams[0].get();
    std::vector<Event> fork(1), joins(res.streams.size());
    PIPEC_CUDA_TRY(cudaEventCreateWithFlags(fork[0].out(), cudaEventDisableTiming), "capture");
    PIPEC_CUDA_TRY(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal), "capture");
    PIPEC_CUDA_TRY(cudaEventRecord(fork[0].get(), origin), "capture");
    for (size_t i = 1; i < res.streams.size(); ++i)
      PIPEC_CUDA_TRY(cudaStreamWaitEvent(res.streams[i].get(), fork[0].get(), 0), "capture");
    if (llvm::Error e = issue(s, res)) {
      cudaGraph_t broken = nullptr;
      (void)cudaStreamEndCapture(origin, &broken);
      if (broken)
        cudaGraphDestroy(broken);
      return llvm::Error(std::move(e));
    }
    for (size_t i = 1; i < res.streams.size(); ++i) {
      PIPEC_CUDA_TRY(cudaEventCreateWithFlags(joins[i].out(), cudaEventDisableTiming), "capture");
      PIPEC_CUDA_TRY(cudaEventRecord(joins[i].get(), res.streams[i].get()), "capture");
      PIPEC_CUDA_TRY(cudaStreamWaitEvent(origin, joins[i].get(), 0), "capture");
    }
    PIPEC_CUDA_TRY(cudaStreamEndCapture(origin, graph.out()), "capture");
    return llvm::Expected<Graph>(std::move(graph));
  }

  /// The graph built node by node, with exactly the schedule's edges.
  llvm::Expected<Graph> build(const Schedule &s, Resources &res) {
    Graph graph;
    PIPEC_CUDA_TRY(cudaGraphCreate(graph.out(), 0), "the explicit graph");
    const size_t n = s.instances.size();
    std::vector<cudaGraphNode_t> entry(n), exit(n);
    std::vector<cudaGraphNode_t> deps;
    for (uint32_t v = 0; v < n; ++v) {
      const uint32_t k = s.instances.stageOf(v);
      const program::Stage &st = s.pipeline.stages[k];
      std::string what = "stage '" + s.instances.name(v) + "'";
      deps.clear();
      for (uint32_t u : s.reduction.kept.row(v))
        deps.push_back(exit[u]);
      Stamp *stamp = res.stamps + v;
      cudaKernelNodeAttrValue priority{};
      priority.priority = priorityOf(s.stream(s.streamOf(v)));
      auto kernelNode = [&](const void *func, dim3 grid, dim3 block, void **args,
                            const cudaGraphNode_t *after, size_t count,
                            cudaGraphNode_t &node) -> llvm::Error {
        cudaKernelNodeParams p{};
        p.func = const_cast<void *>(func);
        p.gridDim = grid;
        p.blockDim = block;
        p.kernelParams = args;
        PIPEC_CUDA_TRY(cudaGraphAddKernelNode(&node, graph.get(), after, count, &p), what);
        PIPEC_CUDA_TRY(cudaGraphKernelNodeSetAttribute(node, cudaLaunchAttributePriority,
                                                       &priority),
                       what);
        return llvm::Error::success();
      };
      if (st.kind == StageKind::Kernel) {
        void *args[] = {&res.spinNanos[k], &stamp};
        if (llvm::Error e = kernelNode(spinKernel(), dim3(st.blocks), dim3(st.threads),
                                       args, deps.data(), deps.size(), entry[v]))
          return llvm::Error(std::move(e));
        exit[v] = entry[v];
        continue;
      }
      void *stampArgs[] = {&stamp};
      if (llvm::Error e = kernelNode(stampStartKernel(), dim3(1), dim3(1), stampArgs,
                                     deps.data(), deps.size(), entry[v]))
        return llvm::Error(std::move(e));
      cudaGraphNode_t work;
      if (st.kind == StageKind::Copy) {
        void *device = res.deviceBuffers[k].get();
        void *dst = device, *src = res.pinnedBuffers[k].get();
        cudaMemcpyKind kind = cudaMemcpyHostToDevice;
        if (st.direction == CopyDirection::D2H)
          dst = res.pinnedBuffers[k].get(), src = device, kind = cudaMemcpyDeviceToHost;
        else if (st.direction == CopyDirection::D2D)
          dst = res.deviceBuffers2[k].get(), src = device, kind = cudaMemcpyDeviceToDevice;
        PIPEC_CUDA_TRY(cudaGraphAddMemcpyNode1D(&work, graph.get(), &entry[v], 1, dst,
                                                src, res.bytes[k], kind),
                       what);
      } else {
        cudaHostNodeParams p{};
        p.fn = hostSpin;
        p.userData = &res.hostMicros[k];
        PIPEC_CUDA_TRY(cudaGraphAddHostNode(&work, graph.get(), &entry[v], 1, &p), what);
      }
      if (llvm::Error e = kernelNode(stampEndKernel(), dim3(1), dim3(1), stampArgs,
                                     &work, 1, exit[v]))
        return llvm::Error(std::move(e));
    }
    return llvm::Expected<Graph>(std::move(graph));
  }

  /// Checks that the captured graph orders the stage instances exactly as
  /// the schedule does (same transitive closure), for up to 4096 instances.
  llvm::Error verifyCapture(const Schedule &s, Resources &res, cudaGraph_t graph) {
    const size_t n = s.instances.size();
    if (n > 4096)
      return llvm::Error::success();
    size_t numNodes = 0, numEdges = 0;
    PIPEC_CUDA_TRY(cudaGraphGetNodes(graph, nullptr, &numNodes), "reading the captured graph");
    std::vector<cudaGraphNode_t> nodes(numNodes);
    PIPEC_CUDA_TRY(cudaGraphGetNodes(graph, nodes.data(), &numNodes), "reading the captured graph");
    PIPEC_CUDA_TRY(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &numEdges),
                   "reading the captured graph");
    std::vector<cudaGraphNode_t> from(numEdges), to(numEdges);
    PIPEC_CUDA_TRY(cudaGraphGetEdges(graph, from.data(), to.data(), nullptr, &numEdges),
                   "reading the captured graph");
    // Which instance each kernel node stands for, and whether it begins or
    // ends it; copies and host nodes lie between their instance's stamps.
    std::map<cudaGraphNode_t, size_t> index;
    for (size_t i = 0; i < numNodes; ++i)
      index[nodes[i]] = i;
    std::vector<int64_t> beginsInstance(numNodes, -1), endsInstance(numNodes, -1);
    for (size_t i = 0; i < numNodes; ++i) {
      cudaGraphNodeType type;
      PIPEC_CUDA_TRY(cudaGraphNodeGetType(nodes[i], &type), "reading the captured graph");
      if (type != cudaGraphNodeTypeKernel)
        continue;
      cudaKernelNodeParams p{};
      PIPEC_CUDA_TRY(cudaGraphKernelNodeGetParams(nodes[i], &p), "reading the captured graph");
      int argument = p.func == spinKernel() ? 1 : 0;
      Stamp *stamp = *static_cast<Stamp **>(p.kernelParams[argument]);
      int64_t v = stamp - res.stamps;
      if (v < 0 || size_t(v) >= n)
        continue;
      if (p.func == spinKernel() || p.func == stampStartKernel())
        beginsInstance[i] = v;
      if (p.func == spinKernel() || p.func == stampEndKernel())
        endsInstance[i] = v;
    }
    // Reachability over the captured graph, node by node (small graphs).
    std::vector<std::vector<size_t>> succ(numNodes);
    for (size_t e = 0; e < numEdges; ++e)
      succ[index[from[e]]].push_back(index[to[e]]);
    std::vector<std::vector<uint8_t>> captured(n, std::vector<uint8_t>(n, 0));
    for (size_t i = 0; i < numNodes; ++i) {
      if (endsInstance[i] < 0)
        continue;
      std::vector<uint8_t> seen(numNodes, 0);
      std::vector<size_t> stack(succ[i].begin(), succ[i].end());
      while (!stack.empty()) {
        size_t x = stack.back();
        stack.pop_back();
        if (seen[x])
          continue;
        seen[x] = 1;
        if (beginsInstance[x] >= 0)
          captured[endsInstance[i]][beginsInstance[x]] = 1;
        stack.insert(stack.end(), succ[x].begin(), succ[x].end());
      }
    }
    // The schedule's closure, from its reduced edges: ancestors of each
    // instance as bitsets, in issue order.
    const size_t words = (n + 63) / 64;
    std::vector<std::vector<uint64_t>> ancestors(n, std::vector<uint64_t>(words, 0));
    for (uint32_t v = 0; v < n; ++v)
      for (uint32_t u : s.reduction.kept.row(v)) {
        for (size_t w = 0; w < words; ++w)
          ancestors[v][w] |= ancestors[u][w];
        ancestors[v][u / 64] |= uint64_t(1) << (u % 64);
      }
    auto plannedBefore = [&](uint32_t u, uint32_t v) {
      return (ancestors[v][u / 64] >> (u % 64)) & 1;
    };
    for (uint32_t u = 0; u < n; ++u)
      for (uint32_t v = 0; v < n; ++v)
        if (bool(captured[u][v]) != bool(plannedBefore(u, v)))
          return llvm::createStringError(
              llvm::inconvertibleErrorCode(),
              "the captured graph %s '%s' before '%s', the schedule %s",
              captured[u][v] ? "orders" : "does not order",
              s.instances.name(u).c_str(), s.instances.name(v).c_str(),
              plannedBefore(u, v) ? "does" : "does not");
    return llvm::Error::success();
  }

  llvm::Error runGraph(const Schedule &s, Resources &res,
                       const RunOptions &options, LoweringRun &r) {
    // Capture, timed; its graph is checked against the schedule.
    Clock::time_point t = Clock::now();
    llvm::Expected<Graph> captured = capture(s, res);
    if (!captured)
      return captured.takeError();
    r.timings.capture = microsSince(t);
    if (llvm::Error e = verifyCapture(s, res, captured->get()))
      return e;
    GraphExec capturedExec;
    t = Clock::now();
    PIPEC_CUDA_TRY(cudaGraphInstantiate(capturedExec.out(), captured->get(),
                                        cudaGraphInstantiateFlagUseNodePriority),
                   "the captured graph");
    r.timings.instantiate = microsSince(t);

    // The explicit graph, with exactly the schedule's edges: it is replayed.
    t = Clock::now();
    llvm::Expected<Graph> built = build(s, res);
    if (!built)
      return built.takeError();
    r.explicitBuildUs = microsSince(t);
    GraphExec exec;
    t = Clock::now();
    PIPEC_CUDA_TRY(cudaGraphInstantiate(exec.out(), built->get(),
                                        cudaGraphInstantiateFlagUseNodePriority),
                   "the explicit graph");
    r.explicitInstantiateUs = microsSince(t);

    return timeReplays(
        s, res, options, r,
        [&]() -> llvm::Error {
          PIPEC_CUDA_TRY(cudaGraphLaunch(exec.get(), res.setup.get()),
                         "cudaGraphLaunch");
          return llvm::Error::success();
        },
        [&]() -> llvm::Error {
          PIPEC_CUDA_TRY(cudaStreamSynchronize(res.setup.get()), "the replay");
          return llvm::Error::success();
        });
  }

  DeviceProfile profile;
  cudaDeviceProp props{};
  int least = 0, greatest = 0;
  std::string deviceName;
};

} // namespace

llvm::Expected<std::unique_ptr<Backend>>
runtime::makeCudaBackend(const DeviceProfile &profile) {
  auto backend = std::make_unique<CudaBackend>(profile);
  if (llvm::Error e = backend->init())
    return llvm::Error(std::move(e));
  return std::unique_ptr<Backend>(std::move(backend));
}
