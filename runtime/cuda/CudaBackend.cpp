//===- CudaBackend.cpp - Streams, events, capture and graphs on a GPU -----===//
//
// A kernel stage is a spin kernel with the stage's blocks and threads whose
// blocks busy-wait the stage's time over its waves on %globaltimer, launched
// with its shared memory (SpinShape.inc, shared with the emitted programs).
// Copies move the stage's bytes between pinned host buffers and device
// buffers, allocated once, outside the timed region; host stages are
// cudaLaunchHostFunc calls (host nodes) that spin on the host. The GPU's
// clocks are warmed up once, when the backend starts.
//
// Every lowering's replays are timed first, on the host, exactly as issued:
// nothing is added to them, and CUPTI is not loaded yet. One more replay per
// lowering, the representative one, then gives the timeline: CUPTI records
// its kernels and copies (host stages read CUPTI's clock; a graph's records
// carry the ids of the executable graph's clones of its nodes), or, where
// CUPTI cannot be used, timing events are recorded on each stage's own
// stream before and after it (event record nodes in a copy of a graph),
// host stages too, so that the whole timeline is on one clock.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaBackend.h"

#include "compiler/emit/SpinShape.inc"
#include "compiler/lower/CallPlan.h"
#include "runtime/calibrate/CalibrationMath.h"
#include "runtime/cuda/Check.h"
#include "runtime/cuda/Cupti.h"
#include "runtime/cuda/Kernels.h"
#include "runtime/cuda/Owners.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <optional>

using namespace pipec;
using namespace pipec::cuda;
using namespace pipec::runtime;
namespace calibration = pipec::runtime::calibration;

bool runtime::cudaBuilt() { return true; }

namespace {

using Clock = std::chrono::steady_clock;
double microsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

llvm::Error noDevice(const std::string &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "no CUDA device: " + why);
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

/// What a failing call was for; built only when a call fails.
std::string stageContext(const Schedule &s, uint32_t v) {
  return "stage '" + s.instances.name(v) + "'";
}

/// Everything a run allocates, outside the timed region.
struct Resources {
  std::vector<Stream> streams;
  std::vector<Event> events;
  Stream setup;  ///< launches graphs, records the timeline's origin
  Stream marker; ///< idle: timing events that place host work on the events' clock
  /// The graph lowering: its plan, the streams segments are launched on
  /// (segment g on launchStreams[g % plan->launchStreams]), and one event
  /// per event-record node (plan->eventOf).
  std::unique_ptr<lower::GraphPlan> plan;
  std::vector<Stream> launchStreams;
  std::vector<Event> graphEvents;
  /// The stream lowering's recorded graph launches (graph=N): the plan, and
  /// per shape its graph and executable graph, built once by allocate.
  std::unique_ptr<lower::RecordedGraphs> recorded;
  std::vector<Graph> recordedGraphs;
  std::vector<GraphExec> recordedExecs;
  std::vector<DeviceMemory> deviceBuffers;   ///< per stage: source side
  std::vector<DeviceMemory> deviceBuffers2;  ///< per stage: d2d destination
  std::vector<PinnedMemory> pinnedBuffers;   ///< per stage
  std::vector<size_t> bytes;                 ///< per stage
  std::vector<unsigned long long> spinNanos; ///< per stage: each block's spin
  std::vector<size_t> spinSmem;              ///< per stage: dynamic shared memory
  std::vector<HostWork> hostWork;            ///< per instance
  std::vector<unsigned long long> tags;      ///< per instance
  /// The declared buffers (version 2), every slot: device or pinned host.
  std::vector<std::vector<DeviceMemory>> declaredDevice;
  std::vector<std::vector<PinnedMemory>> declaredHost;
  std::vector<unsigned char *> touch; ///< per instance: what its kernel writes

  /// Slot `slot` of declared buffer `b`.
  void *declared(const program::Pipeline &p, uint32_t b, uint32_t slot) const {
    return p.buffers[b].host ? declaredHost[b][slot].get() : declaredDevice[b][slot].get();
  }
  /// The memory a plan's place names, for stage k.
  void *at(const program::Pipeline &p, uint32_t k, const lower::Place &place) const {
    switch (place.kind) {
    case lower::Place::Declared:
      return declared(p, place.buffer, place.slot);
    case lower::Place::Device:
      return deviceBuffers[k].get();
    case lower::Place::Device2:
      return deviceBuffers2[k].get();
    case lower::Place::Host:
      return pinnedBuffers[k].get();
    case lower::Place::Nothing:
      break;
    }
    return nullptr;
  }
};

struct CopyArgs {
  void *dst, *src;
  size_t bytes;
  cudaMemcpyKind kind;
};

/// Instance v's copy, where the plan puts it.
CopyArgs copyArgs(const Schedule &s, Resources &res, uint32_t v) {
  const uint32_t k = s.instances.stageOf(v);
  const lower::CopyPlaces places = lower::copyPlaces(s, v);
  const CopyDirection direction = s.pipeline.stages[k].copy().direction;
  return {res.at(s.pipeline, k, places.dst), res.at(s.pipeline, k, places.src), res.bytes[k],
          direction == CopyDirection::H2D   ? cudaMemcpyHostToDevice
          : direction == CopyDirection::D2H ? cudaMemcpyDeviceToHost
                                            : cudaMemcpyDeviceToDevice};
}

/// Instance v's memset, where the plan puts it.
struct MemsetArgs {
  void *dst;
  size_t bytes;
};
MemsetArgs memsetArgs(const Schedule &s, Resources &res, uint32_t v) {
  const uint32_t k = s.instances.stageOf(v);
  return {res.at(s.pipeline, k, lower::memsetPlace(s, v)), res.bytes[k]};
}

cudaMemsetParams memsetParams(const MemsetArgs &m) {
  cudaMemsetParams p{};
  p.dst = m.dst;
  p.value = 0;
  p.elementSize = 1;
  p.width = m.bytes;
  p.height = 1;
  p.pitch = 0;
  return p;
}

/// The timing events of one timeline replay: an origin recorded as the
/// replay's first call, and one before and one after each stage.
struct TimingEvents {
  Event origin;
  std::vector<Event> start, end;
};

/// An open stream capture, ended (and its graph destroyed) on every path
/// that does not end it itself.
class CaptureGuard {
public:
  explicit CaptureGuard(cudaStream_t origin) : origin(origin) {}
  ~CaptureGuard() {
    if (!origin)
      return;
    cudaGraph_t broken = nullptr;
    (void)cudaStreamEndCapture(origin, &broken);
    if (broken)
      (void)cudaGraphDestroy(broken);
    (void)cudaGetLastError();
  }
  llvm::Error end(Graph &graph) {
    cudaStream_t stream = std::exchange(origin, nullptr);
    PIPEC_CUDA_TRY(cudaStreamEndCapture(stream, graph.out()), "capture");
    return llvm::Error::success();
  }

private:
  cudaStream_t origin;
};

/// The graph lowering's graphs, one per segment, with each device
/// instance's node, and the node parameters a `dynamic` stage sets again
/// before every launch.
struct BuiltGraph {
  std::vector<Graph> graphs; ///< per segment
  std::vector<cudaGraphNode_t> node;
  std::vector<std::array<void *, 3>> kernelArgs; ///< per instance
};

/// One executable graph per segment.
using Executables = std::vector<GraphExec>;

/// What one lowering keeps between its replays and its timeline.
struct LoweringState {
  LoweringRun run;
  BuiltGraph built; ///< the graph lowering: the explicit graphs, replayed
  Executables execs;
};

class CudaBackend : public Backend {
public:
  CudaBackend(const DeviceProfile &profile) : profile(profile) {}

  llvm::Error init() {
    if (llvm::Error e = findDevice())
      return e;
    PIPEC_CUDA_TRY(cudaGetDeviceProperties(&props, 0), "device 0");
    PIPEC_CUDA_TRY(cudaDeviceGetStreamPriorityRange(&least, &greatest), "device 0");
    PIPEC_CUDA_TRY(prepareSpinKernel(int(props.sharedMemPerBlockOptin)), "the spin kernel");
    if (llvm::Error e = warmUp())
      return e;
    if (llvm::Error e = measureTimer())
      return e;
    int driver = 0;
    (void)cudaDriverGetVersion(&driver);
    deviceName = llvm::formatv("{0} ({1} SMs, driver {2}.{3}; clocks warmed up for "
                               "200 ms, timer resolution {4} ns)",
                               props.name, props.multiProcessorCount, driver / 1000,
                               (driver % 1000) / 10, timerResolutionNs);
    return llvm::Error::success();
  }

  const char *name() const override { return "cuda"; }
  std::string device() const override { return deviceName; }

  llvm::Expected<LoweringRun> run(const Schedule &s, Lowering lowering,
                                  const RunOptions &options) override {
    llvm::Expected<std::vector<LoweringRun>> runs = runAll(s, {lowering}, options);
    if (!runs)
      return runs.takeError();
    return std::move(runs->front());
  }

  /// Every lowering's replays first, timed on the host with nothing added;
  /// then each lowering's timeline, CUPTI loaded only now.
  llvm::Expected<std::vector<LoweringRun>> runAll(const Schedule &s,
                                                  llvm::ArrayRef<Lowering> lowerings,
                                                  const RunOptions &options) override {
    Resources res;
    std::vector<std::string> stageNotes;
    if (llvm::Error e = allocate(s, options, res, stageNotes))
      return llvm::Error(std::move(e));
    std::vector<LoweringState> states(lowerings.size());
    for (size_t i = 0; i < lowerings.size(); ++i) {
      auto clock = Clock::now();
      LoweringRun &r = states[i].run;
      r.schedule = &s;
      r.lowering = lowerings[i];
      r.replays = options.replays;
      r.notes = stageNotes;
      llvm::Error e = r.lowering == Lowering::Streams
                          ? replayStreams(s, res, options, r)
                          : replayGraph(s, res, options, states[i]);
      if (e)
        return llvm::Error(std::move(e));
      r.runSeconds = microsSince(clock) / 1e6;
    }
    std::vector<LoweringRun> runs;
    for (LoweringState &state : states) {
      auto clock = Clock::now();
      LoweringRun &r = state.run;
      // CUPTI is loaded only when it may be used, and only now.
      CuptiStatus notAsked{false, "--timing=events", ""};
      llvm::Expected<TimingMethod> method = chooseTiming(
          options.timing, options.timing == TimingRequest::Events ? notAsked : cuptiStatus(),
          r.timingNote);
      if (!method)
        return method.takeError();
      r.timing = *method;
      llvm::Error e = timeline(s, res, options, state);
      if (e)
        return llvm::Error(std::move(e));
      if (r.lowering == Lowering::Streams && !res.recorded->launches.empty())
        r.notes.push_back(llvm::formatv("the replays launched the {0} recorded graph "
                                        "launch(es) as {1} graph(s); the timeline, which "
                                        "times every node, launched their nodes one by one",
                                        res.recorded->launches.size(),
                                        res.recorded->shapes.size()));
      r.violationSlackUs = violationSlackUs(r.timing, timerResolutionNs);
      summarise(r);
      r.runSeconds += microsSince(clock) / 1e6;
      runs.push_back(std::move(r));
    }
    return runs;
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
  /// The priority a stream (or its graph nodes) runs at in this run.
  int priorityFor(const program::Stream &st, const RunOptions &options) const {
    return options.priorities ? priorityOf(st) : least;
  }

  /// An idle H200 sits at 345 MHz: a fifth of a second of work on every SM
  /// brings its clocks up before anything is timed.
  llvm::Error warmUp() {
    Stream stream;
    PIPEC_CUDA_TRY(cudaStreamCreateWithFlags(stream.out(), cudaStreamNonBlocking), "warm-up");
    PIPEC_CUDA_TRY(launchSpin(dim3(props.multiProcessorCount * 4), dim3(256), 0, stream.get(),
                              200'000'000, 0, nullptr),
                   "warm-up");
    PIPEC_CUDA_TRY(cudaStreamSynchronize(stream.get()), "warm-up");
    return llvm::Error::success();
  }

  /// %globaltimer's resolution: what the spin kernels can time.
  llvm::Error measureTimer() {
    constexpr unsigned n = 4096;
    Stream stream;
    DeviceMemory readings;
    PIPEC_CUDA_TRY(cudaStreamCreateWithFlags(stream.out(), cudaStreamNonBlocking), "timer");
    PIPEC_CUDA_TRY(cudaMalloc(readings.out(), n * sizeof(unsigned long long)), "timer");
    PIPEC_CUDA_TRY(launchTimerReadings(stream.get(),
                                       static_cast<unsigned long long *>(readings.get()), n),
                   "timer");
    PIPEC_CUDA_TRY(cudaStreamSynchronize(stream.get()), "timer");
    std::vector<uint64_t> host(n);
    PIPEC_CUDA_TRY(
        cudaMemcpy(host.data(), readings.get(), n * sizeof(uint64_t), cudaMemcpyDeviceToHost),
        "timer");
    timerResolutionNs = double(calibration::timerResolution(host));
    return llvm::Error::success();
  }

  /// Kernel stage k's spin: its dynamic shared memory (regs= as padding)
  /// and its per-block time from the waves this GPU runs it in
  /// (SpinShape.inc, as the emitted programs do). What a reader should know
  /// about it goes into `notes`.
  llvm::Error shapeKernel(const program::Stage &st, Resources &res, size_t k,
                          std::vector<std::string> &notes) {
    cudaError_t failed = cudaSuccess;
    auto occupancy = [&](unsigned long long bytes) {
      int blocks = 0;
      cudaError_t status = spinOccupancy(&blocks, st.kernel().threads, bytes);
      if (status != cudaSuccess && failed == cudaSuccess)
        failed = status;
      return static_cast<unsigned>(std::max(blocks, 0));
    };
    const unsigned model =
        profile.blocksPerSM(st.kernel().threads, st.kernel().smemBytes, st.kernel().regs);
    bool exact = true;
    res.spinSmem[k] = pipec_spin::spinSharedMemory(
        model, st.kernel().smemBytes, props.sharedMemPerBlockOptin, occupancy, &exact);
    const unsigned perSM = occupancy(res.spinSmem[k]);
    PIPEC_CUDA_TRY(failed, "stage '" + st.name + "' (occupancy)");
    const unsigned long long waves =
        pipec_spin::spinWaves(st.kernel().blocks, perSM, props.multiProcessorCount);
    res.spinNanos[k] = pipec_spin::spinBlockNanoseconds(st.durationUs, waves);
    if (!exact)
      notes.push_back(llvm::formatv("kernel stage '{0}' fits {1} block(s) per SM on "
                                    "this GPU, {2} in the device model: its blocks "
                                    "run in other waves than the model's",
                                    st.name, perSM, model));
    if (timerResolutionNs > 0 && double(res.spinNanos[k]) < 10 * timerResolutionNs)
      notes.push_back(llvm::formatv("kernel stage '{0}' spins {1} ns per block, under "
                                    "10 ticks of the device timer ({2} ns): its time "
                                    "on the GPU is coarse",
                                    st.name, res.spinNanos[k], timerResolutionNs));
    return llvm::Error::success();
  }

  llvm::Error allocate(const Schedule &s, const RunOptions &options, Resources &res,
                       std::vector<std::string> &notes) {
    for (const program::Stream &st : s.streamPlan.streams) {
      res.streams.emplace_back();
      PIPEC_CUDA_TRY(cudaStreamCreateWithPriority(res.streams.back().out(),
                                                  cudaStreamNonBlocking,
                                                  priorityFor(st, options)),
                     "stream '" + st.name + "'");
    }
    PIPEC_CUDA_TRY(cudaStreamCreateWithFlags(res.setup.out(), cudaStreamNonBlocking),
                   "the setup stream");
    PIPEC_CUDA_TRY(cudaStreamCreateWithFlags(res.marker.out(), cudaStreamNonBlocking),
                   "the marker stream");
    res.plan = std::make_unique<lower::GraphPlan>(s);
    for (uint32_t e = 0; e < res.plan->events; ++e) {
      res.graphEvents.emplace_back();
      PIPEC_CUDA_TRY(
          cudaEventCreateWithFlags(res.graphEvents.back().out(), cudaEventDisableTiming),
          "the graph lowering's events");
    }
    for (uint32_t i = 0; i < res.plan->launchStreams; ++i) {
      res.launchStreams.emplace_back();
      PIPEC_CUDA_TRY(
          cudaStreamCreateWithFlags(res.launchStreams.back().out(), cudaStreamNonBlocking),
          "the graph lowering's launch streams");
    }
    res.recorded = std::make_unique<lower::RecordedGraphs>(s);
    for (uint32_t e = 0; e < std::max(1u, res.recorded->events()); ++e) {
      res.events.emplace_back();
      PIPEC_CUDA_TRY(cudaEventCreateWithFlags(res.events.back().out(), cudaEventDisableTiming),
                     "event e" + std::to_string(e));
    }
    const auto &stages = s.pipeline.stages;
    res.deviceBuffers.resize(stages.size());
    res.deviceBuffers2.resize(stages.size());
    res.pinnedBuffers.resize(stages.size());
    res.bytes.assign(stages.size(), 0);
    res.spinNanos.assign(stages.size(), 0);
    res.spinSmem.assign(stages.size(), 0);
    if (s.pipeline.deviceCount() > 1)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "pipeline '%s' declares %zu devices: 'pipec run' runs one device on the GPU for "
          "now (--backend=sim runs them all on the model; 'pipec compile --emit=cuda' "
          "writes a program that drives them all)",
          s.pipeline.name.c_str(), s.pipeline.deviceCount());
    for (size_t k = 0; k < stages.size(); ++k) {
      const program::Stage &st = stages[k];
      if (st.kind() == StageKind::Collective)
        return llvm::createStringError(
            llvm::inconvertibleErrorCode(),
            "collective '%s': 'pipec run' does not run collectives on the GPU yet; "
            "'pipec compile --emit=cuda' writes them as NCCL calls",
            st.name.c_str());
      if (st.kind() == StageKind::Kernel)
        if (llvm::Error e = shapeKernel(st, res, k, notes))
          return e;
      // Its own buffers, as the plan decides them (the emitted program's too).
      const lower::StageBuffers own = lower::stageBuffers(st, profile);
      res.bytes[k] = own.bytes;
      if (own.device)
        PIPEC_CUDA_TRY(cudaMalloc(res.deviceBuffers[k].out(), own.bytes),
                       "stage '" + st.name + "'");
      if (own.device2)
        PIPEC_CUDA_TRY(cudaMalloc(res.deviceBuffers2[k].out(), own.bytes),
                       "stage '" + st.name + "'");
      if (own.pinned)
        PIPEC_CUDA_TRY(cudaMallocHost(res.pinnedBuffers[k].out(), own.bytes),
                       "stage '" + st.name + "'");
    }
    // The declared buffers, every slot, allocated once.
    const program::Pipeline &p = s.pipeline;
    res.declaredDevice.resize(p.buffers.size());
    res.declaredHost.resize(p.buffers.size());
    for (uint32_t b = 0; b < p.buffers.size(); ++b)
      for (uint32_t slot = 0; slot < p.buffers[b].slots; ++slot) {
        if (p.buffers[b].host) {
          res.declaredHost[b].emplace_back();
          PIPEC_CUDA_TRY(cudaMallocHost(res.declaredHost[b].back().out(), p.buffers[b].bytes),
                         "buffer '" + p.buffers[b].name + "'");
        } else {
          res.declaredDevice[b].emplace_back();
          PIPEC_CUDA_TRY(cudaMalloc(res.declaredDevice[b].back().out(), p.buffers[b].bytes),
                         "buffer '" + p.buffers[b].name + "'");
        }
      }
    const size_t n = s.instances.size();
    res.touch.assign(n, nullptr);
    for (uint32_t v = 0; v < n; ++v)
      if (s.instances.stage(v).kind() == StageKind::Kernel)
        res.touch[v] = static_cast<unsigned char *>(
            res.at(p, s.instances.stageOf(v), lower::kernelPlace(s, v)));
    res.hostWork.assign(n, HostWork{});
    res.tags.resize(n);
    for (uint32_t v = 0; v < n; ++v) {
      res.hostWork[v].us = s.instances.stage(v).durationUs;
      res.hostWork[v].clock = hostNanoseconds;
      res.tags[v] = tagFor(v);
    }
    if (llvm::Error e = buildRecorded(s, res, options))
      return e;
    PIPEC_CUDA_TRY(cudaDeviceSynchronize(), "allocation");
    return llvm::Error::success();
  }

  /// Issues instance v's work on `stream`: a launch call of the plan.
  llvm::Error launch(const Schedule &s, Resources &res, const lower::Call &c,
                     cudaStream_t stream) {
    const uint32_t v = c.instance;
    const uint32_t k = s.instances.stageOf(v);
    const program::Stage &st = s.pipeline.stages[k];
    switch (c.work) {
    case lower::Work::Kernel:
      PIPEC_CUDA_TRY(launchSpin(dim3(st.kernel().blocks), dim3(st.kernel().threads),
                                res.spinSmem[k], stream, res.spinNanos[k], res.tags[v],
                                res.touch[v]),
                     stageContext(s, v));
      return llvm::Error::success();
    case lower::Work::Copy: {
      CopyArgs a = copyArgs(s, res, v);
      PIPEC_CUDA_TRY(cudaMemcpyAsync(a.dst, a.src, a.bytes, a.kind, stream),
                     stageContext(s, v));
      return llvm::Error::success();
    }
    case lower::Work::HostFunc:
      PIPEC_CUDA_TRY(cudaLaunchHostFunc(stream, hostSpin, &res.hostWork[v]),
                     stageContext(s, v));
      return llvm::Error::success();
    case lower::Work::Memset: {
      MemsetArgs m = memsetArgs(s, res, v);
      PIPEC_CUDA_TRY(cudaMemsetAsync(m.dst, 0, m.bytes, stream), stageContext(s, v));
      return llvm::Error::success();
    }
    case lower::Work::PeerCopy:   // several devices,
    case lower::Work::Collective: // and collectives: refused when the resources are made
    case lower::Work::HostThread: // a Cpu call, never a launch
      break;
    }
    return unsupported(s, c);
  }

  /// A call this backend does not make (allocate refuses the programs that
  /// need them): an error, never a silent skip.
  static llvm::Error unsupported(const Schedule &s, const lower::Call &c) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "stage '%s': a call 'pipec run' does not make on the GPU",
                                   s.instances.name(c.instance).c_str());
  }

  /// Runs `visit` (a plan's walk) with `step` on each of its items, up to
  /// the first that fails.
  template <typename Visit, typename Step> static llvm::Error each(Visit visit, Step step) {
    std::optional<llvm::Error> failed;
    visit([&](const auto &item) {
      if (llvm::Error e = step(item)) {
        failed.emplace(std::move(e));
        return false;
      }
      return true;
    });
    return failed ? std::move(*failed) : llvm::Error::success();
  }

  /// A cpu stage: spins on this (the issuing) thread; with `timed`, events
  /// on the idle marker stream place it on the events' clock.
  llvm::Error runCpu(const Schedule &s, Resources &res, uint32_t v, TimingEvents *timed) {
    if (timed)
      PIPEC_CUDA_TRY(cudaEventRecord(timed->start[v].get(), res.marker.get()),
                     stageContext(s, v));
    hostSpin(&res.hostWork[v]);
    if (timed)
      PIPEC_CUDA_TRY(cudaEventRecord(timed->end[v].get(), res.marker.get()),
                     stageContext(s, v));
    return llvm::Error::success();
  }

  /// Spins `us` microseconds on the issuing thread: `issue=` dispatch.
  static void dispatch(double us) {
    if (us <= 0)
      return;
    auto until = Clock::now() + std::chrono::nanoseconds(static_cast<long long>(us * 1000));
    while (Clock::now() < until) {
    }
  }

  /// The recorded graph launches' graphs (lower::RecordedGraphs), one per
  /// shape, built and instantiated before anything is timed.
  llvm::Error buildRecorded(const Schedule &s, Resources &res, const RunOptions &options) {
    const lower::RecordedGraphs &r = *res.recorded;
    BuiltGraph built;
    built.node.assign(s.instances.size(), nullptr);
    built.kernelArgs.assign(s.instances.size(), {nullptr, nullptr, nullptr});
    std::vector<cudaGraphNode_t> deps;
    for (uint32_t shape = 0; shape < r.shapes.size(); ++shape) {
      res.recordedGraphs.emplace_back();
      PIPEC_CUDA_TRY(cudaGraphCreate(res.recordedGraphs.back().out(), 0),
                     "a recorded graph launch");
      cudaGraph_t graph = res.recordedGraphs.back().get();
      auto visit = [&](auto f) { return r.forEachNode(r.shapes[shape], f); };
      if (llvm::Error e = each(visit, [&](const lower::Node &planned) -> llvm::Error {
            deps.clear();
            for (uint32_t u : planned.after)
              deps.push_back(built.node[u]);
            return addNode(s, res, options, planned, graph, deps, built);
          }))
        return e;
      res.recordedExecs.emplace_back();
      PIPEC_CUDA_TRY(cudaGraphInstantiate(res.recordedExecs.back().out(), graph,
                                          cudaGraphInstantiateFlagUseNodePriority),
                     "a recorded graph launch");
    }
    // The kernel nodes' arguments are read when a node is added: `built`
    // may go.
    return llvm::Error::success();
  }

  /// The schedule's host calls, exactly as emitted (the plan's stream
  /// calls); with `timed`, a timing event is recorded on each stage's own
  /// stream before and after it. `asGraphs`: each recorded graph launch is
  /// one graph launch (the replays); else its nodes are launched one by
  /// one (a capture, and the timeline, which times each node).
  llvm::Error issue(const Schedule &s, Resources &res, TimingEvents *timed,
                    bool asGraphs = false) {
    const lower::RecordedGraphs *recorded = asGraphs ? res.recorded.get() : nullptr;
    auto visit = [&](auto f) { return lower::forEachStreamCall(s, recorded, f); };
    return each(visit, [&](const lower::Call &c) -> llvm::Error {
      cudaStream_t stream = c.stream == kHostStream ? nullptr : res.streams[c.stream].get();
      switch (c.kind) {
      case lower::Call::Dispatch:
        dispatch(s.instances.stage(c.instance).issueUs);
        return llvm::Error::success();
      case lower::Call::Launch: {
        const uint32_t v = c.instance;
        if (timed)
          PIPEC_CUDA_TRY(cudaEventRecord(timed->start[v].get(), stream), stageContext(s, v));
        if (llvm::Error e = launch(s, res, c, stream))
          return e;
        if (timed)
          PIPEC_CUDA_TRY(cudaEventRecord(timed->end[v].get(), stream), stageContext(s, v));
        return llvm::Error::success();
      }
      case lower::Call::Record:
        PIPEC_CUDA_TRY(cudaEventRecord(res.events[c.event].get(), stream),
                       "event e" + std::to_string(c.event));
        return llvm::Error::success();
      case lower::Call::Wait:
        PIPEC_CUDA_TRY(cudaStreamWaitEvent(stream, res.events[c.event].get(), 0),
                       "event e" + std::to_string(c.event));
        return llvm::Error::success();
      case lower::Call::Sync:
        PIPEC_CUDA_TRY(cudaEventSynchronize(res.events[c.event].get()),
                       "event e" + std::to_string(c.event));
        return llvm::Error::success();
      case lower::Call::Cpu:
        return runCpu(s, res, c.instance, timed);
      case lower::Call::RecordedLaunch:
        PIPEC_CUDA_TRY(cudaGraphLaunch(res.recordedExecs[c.segment].get(), stream),
                       "recorded graph launch " + std::to_string(c.event));
        return llvm::Error::success();
      case lower::Call::Post: // several host threads,
      case lower::Call::Await:
      case lower::Call::SetDevice:   // several devices,
      case lower::Call::Join:        // several host threads,
      case lower::Call::GroupStart:  // and collectives:
      case lower::Call::GroupEnd:    // refused when the resources are made
      case lower::Call::GraphLaunch: // the graph lowering's
        break;
      }
      return unsupported(s, c);
    });
  }

  /// Times one untimed first launch (which warms up, or uploads a graph)
  /// and `options.replays` replays on the host clock: `launch` issues a
  /// replay, `finish` waits for it. Nothing is added to them for timing.
  template <typename Launch, typename Finish>
  llvm::Error timeReplays(const RunOptions &options, LoweringRun &r, Launch launch,
                          Finish finish) {
    std::vector<double> replay, submit;
    replay.reserve(options.replays);
    submit.reserve(options.replays);
    for (unsigned i = 0; i <= options.replays; ++i) {
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
    }
    std::tie(r.timings.replayMedian, r.timings.replayP95) = medianAndP95(replay);
    r.timings.submitMedian = medianAndP95(submit).first;
    if (r.lowering == Lowering::Graph)
      r.host.push_back({0, r.timings.submitMedian, "graph launch", UINT32_MAX});
    return llvm::Error::success();
  }

  // ---- The timeline -------------------------------------------------------

  llvm::Error timeline(const Schedule &s, Resources &res, const RunOptions &options,
                       LoweringState &state) {
    LoweringRun &r = state.run;
    if (r.timing == TimingMethod::Cupti) {
      llvm::Error e = r.lowering == Lowering::Streams ? cuptiStreamsTimeline(s, res, r)
                                                      : cuptiGraphTimeline(s, res, state);
      if (!e) {
        if (!cuptiStatus().library.empty())
          r.notes.push_back("CUPTI loaded from " + cuptiStatus().library);
        return llvm::Error::success();
      }
      llvm::Expected<TimingMethod> method =
          afterCuptiFailed(options.timing, std::move(e), r.timingNote);
      if (!method)
        return method.takeError();
      r.timing = *method;
    }
    return r.lowering == Lowering::Streams ? eventsStreamsTimeline(s, res, r)
                                           : eventsGraphTimeline(s, res, options, state);
  }

  /// Host stages' intervals (their HostWork stamps) into `out`, on the
  /// clock they were read with.
  static void hostIntervals(const Schedule &s, const Resources &res, InstanceIntervals &out) {
    for (uint32_t v = 0; v < s.instances.size(); ++v)
      if (s.instances.stage(v).kind() == StageKind::Host || s.onHost(v)) {
        out.start[v] = res.hostWork[v].start;
        out.end[v] = res.hostWork[v].end;
      }
  }

  static void useClock(Resources &res, uint64_t (*clock)()) {
    for (HostWork &w : res.hostWork)
      w.clock = clock;
  }

  /// The timeline by CUPTI: `replay` issues one replay and waits for it;
  /// `match` assigns the records, taken within the replay's window, to
  /// instances. Host stages read CUPTI's clock themselves.
  template <typename Replay, typename Match>
  llvm::Error cuptiTimeline(const Schedule &s, Resources &res, LoweringRun &r, Replay replay,
                            Match match) {
    const size_t n = s.instances.size();
    useClock(res, cuptiNow);
    if (llvm::Error e = cuptiStartRecording()) {
      useClock(res, hostNanoseconds);
      (void)cuptiStopRecording();
      return e;
    }
    RecordWindow window;
    window.begin = cuptiNow();
    llvm::Error issued = replay();
    window.end = cuptiNow();
    auto records = cuptiStopRecording();
    useClock(res, hostNanoseconds);
    if (issued)
      return issued;
    if (!records)
      return records.takeError();
    InstanceIntervals iv{std::vector<uint64_t>(n, 0), std::vector<uint64_t>(n, 0)};
    if (llvm::Error e = match(*records, window, iv))
      return e;
    hostIntervals(s, res, iv);
    intervalsToMicros(iv, window.begin, r.start, r.end);
    return llvm::Error::success();
  }

  /// Creates the timing events of a timeline replay: one before and one
  /// after every stage, host stages too, so that the whole timeline is on
  /// the events' one clock.
  llvm::Error makeTimingEvents(const Schedule &s, TimingEvents &te) {
    const size_t n = s.instances.size();
    PIPEC_CUDA_TRY(cudaEventCreate(te.origin.out()), "the timeline's origin");
    te.start.resize(n);
    te.end.resize(n);
    for (uint32_t v = 0; v < n; ++v) {
      PIPEC_CUDA_TRY(cudaEventCreate(te.start[v].out()), stageContext(s, v));
      PIPEC_CUDA_TRY(cudaEventCreate(te.end[v].out()), stageContext(s, v));
    }
    return llvm::Error::success();
  }

  /// The timeline from timing events, after their replay has finished, in
  /// nanoseconds after the origin event. A host stage's events bracket its
  /// host function's latency too: it is placed by how long it ran.
  llvm::Error readTimingEvents(const Schedule &s, Resources &res, TimingEvents &te,
                               LoweringRun &r) {
    const size_t n = s.instances.size();
    InstanceIntervals iv{std::vector<uint64_t>(n, 0), std::vector<uint64_t>(n, 0)};
    constexpr uint64_t kOrigin = uint64_t(1) << 40; // elapsed times may be negative
    for (uint32_t v = 0; v < n; ++v) {
      float a = 0, b = 0;
      PIPEC_CUDA_TRY(cudaEventElapsedTime(&a, te.origin.get(), te.start[v].get()),
                     stageContext(s, v));
      PIPEC_CUDA_TRY(cudaEventElapsedTime(&b, te.origin.get(), te.end[v].get()),
                     stageContext(s, v));
      iv.start[v] = kOrigin + static_cast<int64_t>(double(a) * 1e6);
      iv.end[v] = kOrigin + static_cast<int64_t>(double(b) * 1e6);
      if (s.instances.stage(v).kind() == StageKind::Host || s.onHost(v)) {
        const HostWork &w = res.hostWork[v];
        std::tie(iv.start[v], iv.end[v]) =
            hostStageFromEvents(iv.start[v], iv.end[v], w.end - w.start);
      }
    }
    intervalsToMicros(iv, kOrigin, r.start, r.end);
    return llvm::Error::success();
  }

  // ---- The stream lowering -----------------------------------------------

  llvm::Error syncAll() {
    PIPEC_CUDA_TRY(cudaDeviceSynchronize(), "the replay");
    return llvm::Error::success();
  }

  llvm::Error replayStreams(const Schedule &s, Resources &res, const RunOptions &options,
                            LoweringRun &r) {
    return timeReplays(
        options, r, [&] { return issue(s, res, nullptr, /*asGraphs=*/true); },
        [&] { return syncAll(); });
  }

  llvm::Error eventsStreamsTimeline(const Schedule &s, Resources &res, LoweringRun &r) {
    TimingEvents te;
    if (llvm::Error e = makeTimingEvents(s, te))
      return e;
    PIPEC_CUDA_TRY(cudaEventRecord(te.origin.get(), res.setup.get()), "the timeline's origin");
    if (llvm::Error e = issue(s, res, &te))
      return e;
    if (llvm::Error e = syncAll())
      return e;
    return readTimingEvents(s, res, te, r);
  }

  llvm::Error cuptiStreamsTimeline(const Schedule &s, Resources &res, LoweringRun &r) {
    std::vector<uint32_t> ids;
    for (const Stream &stream : res.streams) {
      llvm::Expected<uint32_t> id = cuptiStreamId(stream.get());
      if (!id)
        return id.takeError();
      ids.push_back(*id);
    }
    std::vector<std::vector<uint32_t>> issued(res.streams.size());
    for (const Op &op : s.ops)
      if (op.kind == Op::Launch && s.instances.stage(op.instance).kind() != StageKind::Host)
        issued[op.stream].push_back(op.instance);
    return cuptiTimeline(
        s, res, r,
        [&]() -> llvm::Error {
          if (llvm::Error e = issue(s, res, nullptr))
            return e;
          return syncAll();
        },
        [&](std::vector<DeviceRecord> &records, const RecordWindow &window,
            InstanceIntervals &iv) {
          return matchStreamRecords(ids, issued, std::move(records), window, iv);
        });
  }

  // ---- The graph lowering ------------------------------------------------

  /// The graph by stream capture of the stream lowering.
  llvm::Expected<Graph> capture(const Schedule &s, Resources &res) {
    Graph graph;
    cudaStream_t origin = res.streams[0].get();
    Event fork;
    std::vector<Event> joins(res.streams.size());
    PIPEC_CUDA_TRY(cudaEventCreateWithFlags(fork.out(), cudaEventDisableTiming), "capture");
    for (size_t i = 1; i < res.streams.size(); ++i)
      PIPEC_CUDA_TRY(cudaEventCreateWithFlags(joins[i].out(), cudaEventDisableTiming),
                     "capture");
    PIPEC_CUDA_TRY(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal), "capture");
    CaptureGuard guard(origin);
    PIPEC_CUDA_TRY(cudaEventRecord(fork.get(), origin), "capture");
    for (size_t i = 1; i < res.streams.size(); ++i)
      PIPEC_CUDA_TRY(cudaStreamWaitEvent(res.streams[i].get(), fork.get(), 0), "capture");
    if (llvm::Error e = issue(s, res, nullptr))
      return llvm::Error(std::move(e));
    for (size_t i = 1; i < res.streams.size(); ++i) {
      PIPEC_CUDA_TRY(cudaEventRecord(joins[i].get(), res.streams[i].get()), "capture");
      PIPEC_CUDA_TRY(cudaStreamWaitEvent(origin, joins[i].get(), 0), "capture");
    }
    if (llvm::Error e = guard.end(graph))
      return llvm::Error(std::move(e));
    return llvm::Expected<Graph>(std::move(graph));
  }

  /// The graph built node by node, with exactly the schedule's edges. With
  /// `timed`, each stage is the middle of a chain: an event record node
  /// before it (after its predecessors' chains) and one after it, on which
  /// its successors hang, so that a stage's "after" event is recorded before
  /// any successor's "before" one.
  llvm::Error build(const Schedule &s, Resources &res, const RunOptions &options,
                    TimingEvents *timed, BuiltGraph &out) {
    out.graphs.clear();
    out.graphs.resize(std::max(1u, s.segments));
    for (Graph &g : out.graphs)
      PIPEC_CUDA_TRY(cudaGraphCreate(g.out(), 0), "the explicit graph");
    const size_t n = s.instances.size();
    out.node.assign(n, nullptr);
    out.kernelArgs.assign(n, {nullptr, nullptr});
    std::vector<cudaGraphNode_t> after(timed ? n : 0, nullptr);
    std::vector<cudaGraphNode_t> deps;
    const lower::GraphPlan &plan = *res.plan;
    auto visit = [&](auto f) { return plan.forEachNode(f); };
    return each(visit, [&](const lower::Node &planned) -> llvm::Error {
      const uint32_t v = planned.instance;
      cudaGraph_t graph = out.graphs[planned.segment].get();
      deps.clear();
      for (uint32_t u : planned.after)
        deps.push_back(timed ? after[u] : out.node[u]);
      // An ordering from another segment: an event-wait node before it.
      for (uint32_t u : planned.waitFor) {
        cudaGraphNode_t wait;
        PIPEC_CUDA_TRY(cudaGraphAddEventWaitNode(&wait, graph, nullptr, 0,
                                                 res.graphEvents[plan.eventOf[u]].get()),
                       stageContext(s, v));
        deps.push_back(wait);
      }
      if (timed) {
        cudaGraphNode_t before;
        PIPEC_CUDA_TRY(cudaGraphAddEventRecordNode(&before, graph, deps.data(), deps.size(),
                                                   timed->start[v].get()),
                       stageContext(s, v));
        deps.assign(1, before);
      }
      if (llvm::Error e = addNode(s, res, options, planned, graph, deps, out))
        return e;
      cudaGraphNode_t &node = out.node[v];
      if (timed)
        PIPEC_CUDA_TRY(
            cudaGraphAddEventRecordNode(&after[v], graph, &node, 1, timed->end[v].get()),
            stageContext(s, v));
      // What a host sync or a later segment waits on: an event-record node.
      if (planned.record != lower::kNoRecord) {
        cudaGraphNode_t record;
        PIPEC_CUDA_TRY(cudaGraphAddEventRecordNode(&record, graph, timed ? &after[v] : &node,
                                                   1, res.graphEvents[planned.record].get()),
                       stageContext(s, v));
      }
      return llvm::Error::success();
    });
  }

  /// The node of `planned`'s work, after `deps`: out.node[its instance].
  llvm::Error addNode(const Schedule &s, Resources &res, const RunOptions &options,
                      const lower::Node &planned, cudaGraph_t graph,
                      const std::vector<cudaGraphNode_t> &deps, BuiltGraph &out) {
    const uint32_t v = planned.instance;
    const uint32_t k = s.instances.stageOf(v);
    const program::Stage &st = s.pipeline.stages[k];
    cudaGraphNode_t &node = out.node[v];
    switch (planned.work) {
    case lower::Work::Kernel: {
      out.kernelArgs[v] = {&res.spinNanos[k], &res.tags[v], &res.touch[v]};
      cudaKernelNodeParams p = kernelParams(st, res.spinSmem[k], out.kernelArgs[v]);
      PIPEC_CUDA_TRY(cudaGraphAddKernelNode(&node, graph, deps.data(), deps.size(), &p),
                     stageContext(s, v));
      cudaKernelNodeAttrValue priority{};
      priority.priority = priorityFor(s.stream(s.streamOf(v)), options);
      PIPEC_CUDA_TRY(
          cudaGraphKernelNodeSetAttribute(node, cudaLaunchAttributePriority, &priority),
          stageContext(s, v));
      return llvm::Error::success();
    }
    case lower::Work::Copy: {
      CopyArgs c = copyArgs(s, res, v);
      PIPEC_CUDA_TRY(cudaGraphAddMemcpyNode1D(&node, graph, deps.data(), deps.size(), c.dst,
                                              c.src, c.bytes, c.kind),
                     stageContext(s, v));
      return llvm::Error::success();
    }
    case lower::Work::Memset: {
      cudaMemsetParams p = memsetParams(memsetArgs(s, res, v));
      PIPEC_CUDA_TRY(cudaGraphAddMemsetNode(&node, graph, deps.data(), deps.size(), &p),
                     stageContext(s, v));
      return llvm::Error::success();
    }
    case lower::Work::HostFunc: {
      cudaHostNodeParams p{};
      p.fn = hostSpin;
      p.userData = &res.hostWork[v];
      PIPEC_CUDA_TRY(cudaGraphAddHostNode(&node, graph, deps.data(), deps.size(), &p),
                     stageContext(s, v));
      return llvm::Error::success();
    }
    case lower::Work::PeerCopy:
    case lower::Work::Collective:
    case lower::Work::HostThread:
      break;
    }
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "stage '%s': not a node of a graph 'pipec run' builds",
                                   s.instances.name(v).c_str());
  }

  static cudaKernelNodeParams kernelParams(const program::Stage &st, size_t smem,
                                           std::array<void *, 3> &args) {
    cudaKernelNodeParams p{};
    p.func = const_cast<void *>(spinKernel());
    p.gridDim = dim3(st.kernel().blocks);
    p.blockDim = dim3(st.kernel().threads);
    p.sharedMemBytes = static_cast<unsigned>(smem);
    p.kernelParams = args.data();
    return p;
  }

  /// Sets the parameters of every `dynamic` stage's node again, as a program
  /// whose shapes change must before each launch.
  llvm::Error updateDynamic(const Schedule &s, Resources &res, BuiltGraph &g,
                            cudaGraphExec_t exec, uint32_t segment) {
    for (uint32_t v : res.plan->dynamic) {
      if (s.segmentOf[v] != segment)
        continue;
      const uint32_t k = s.instances.stageOf(v);
      const program::Stage &st = s.pipeline.stages[k];
      switch (lower::cudaWorkOf(st)) {
      case lower::Work::Kernel: {
        cudaKernelNodeParams p = kernelParams(st, res.spinSmem[k], g.kernelArgs[v]);
        PIPEC_CUDA_TRY(cudaGraphExecKernelNodeSetParams(exec, g.node[v], &p),
                       stageContext(s, v));
        break;
      }
      case lower::Work::Copy: {
        CopyArgs c = copyArgs(s, res, v);
        PIPEC_CUDA_TRY(
            cudaGraphExecMemcpyNodeSetParams1D(exec, g.node[v], c.dst, c.src, c.bytes, c.kind),
            stageContext(s, v));
        break;
      }
      case lower::Work::Memset: {
        cudaMemsetParams p = memsetParams(memsetArgs(s, res, v));
        PIPEC_CUDA_TRY(cudaGraphExecMemsetNodeSetParams(exec, g.node[v], &p),
                       stageContext(s, v));
        break;
      }
      case lower::Work::HostFunc: {
        cudaHostNodeParams p{};
        p.fn = hostSpin;
        p.userData = &res.hostWork[v];
        PIPEC_CUDA_TRY(cudaGraphExecHostNodeSetParams(exec, g.node[v], &p),
                       stageContext(s, v));
        break;
      }
      case lower::Work::PeerCopy:
      case lower::Work::Collective:
      case lower::Work::HostThread:
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "stage '%s': not a node of a graph 'pipec run' builds",
                                       s.instances.name(v).c_str());
      }
    }
    return llvm::Error::success();
  }

  /// Checks that the captured graph orders the stage instances exactly as
  /// the schedule does (same transitive closure), for up to 4096 instances.
  /// Each node says which instance it is by its own arguments: a kernel by
  /// its tag, a host node by its HostWork, a copy by its buffers (the
  /// instances of one copy stage in the graph's order: one stream runs them).
  llvm::Error verifyCapture(const Schedule &s, Resources &res, cudaGraph_t graph) {
    const size_t n = s.instances.size();
    if (n > 4096)
      return llvm::Error::success();
    const char *reading = "reading the captured graph";
    size_t numNodes = 0, numEdges = 0;
    PIPEC_CUDA_TRY(cudaGraphGetNodes(graph, nullptr, &numNodes), reading);
    std::vector<cudaGraphNode_t> nodes(numNodes);
    PIPEC_CUDA_TRY(cudaGraphGetNodes(graph, nodes.data(), &numNodes), reading);
    PIPEC_CUDA_TRY(cudaGraphGetEdges(graph, nullptr, nullptr, nullptr, &numEdges), reading);
    std::vector<cudaGraphNode_t> from(numEdges), to(numEdges);
    PIPEC_CUDA_TRY(cudaGraphGetEdges(graph, from.data(), to.data(), nullptr, &numEdges),
                   reading);
    llvm::DenseMap<cudaGraphNode_t, size_t> index;
    for (size_t i = 0; i < numNodes; ++i)
      index[nodes[i]] = i;
    std::vector<std::vector<size_t>> succ(numNodes);
    std::vector<size_t> indegree(numNodes, 0);
    for (size_t e = 0; e < numEdges; ++e) {
      succ[index[from[e]]].push_back(index[to[e]]);
      ++indegree[index[to[e]]];
    }
    // The graph's topological order (Kahn), for copies.
    std::vector<size_t> order;
    for (size_t i = 0; i < numNodes; ++i)
      if (!indegree[i])
        order.push_back(i);
    for (size_t head = 0; head < order.size(); ++head)
      for (size_t x : succ[order[head]])
        if (!--indegree[x])
          order.push_back(x);
    // Copies by their (destination, source): the instances with those
    // pointers, in issue order, taken in the graph's topological order.
    std::map<std::pair<void *, void *>, std::vector<uint32_t>> copyInstances;
    for (uint32_t v = 0; v < n; ++v)
      if (s.instances.stage(v).kind() == StageKind::Copy) {
        CopyArgs c = copyArgs(s, res, v);
        copyInstances[{c.dst, c.src}].push_back(v);
      }
    std::map<std::pair<void *, void *>, size_t> copiesSeen;
    for (uint32_t v = 0; v < n; ++v)
      if (s.instances.stage(v).kind() == StageKind::Memset)
        copyInstances[{memsetArgs(s, res, v).dst, nullptr}].push_back(v);
    std::vector<int64_t> instanceOf(numNodes, -1);
    for (size_t i : order) {
      cudaGraphNodeType type;
      PIPEC_CUDA_TRY(cudaGraphNodeGetType(nodes[i], &type), reading);
      if (type == cudaGraphNodeTypeKernel) {
        cudaKernelNodeParams p{};
        PIPEC_CUDA_TRY(cudaGraphKernelNodeGetParams(nodes[i], &p), reading);
        if (p.kernelParams)
          instanceOf[i] = instanceOfTag(*static_cast<unsigned long long *>(p.kernelParams[1]));
      } else if (type == cudaGraphNodeTypeHost) {
        cudaHostNodeParams p{};
        PIPEC_CUDA_TRY(cudaGraphHostNodeGetParams(nodes[i], &p), reading);
        auto *work = static_cast<HostWork *>(p.userData);
        if (work >= res.hostWork.data() && work < res.hostWork.data() + n)
          instanceOf[i] = work - res.hostWork.data();
      } else if (type == cudaGraphNodeTypeMemset) {
        cudaMemsetParams p{};
        PIPEC_CUDA_TRY(cudaGraphMemsetNodeGetParams(nodes[i], &p), reading);
        auto key = std::make_pair(p.dst, static_cast<void *>(nullptr));
        auto it = copyInstances.find(key);
        if (it != copyInstances.end() && copiesSeen[key] < it->second.size())
          instanceOf[i] = it->second[copiesSeen[key]++];
      } else if (type == cudaGraphNodeTypeMemcpy) {
        cudaMemcpy3DParms p{};
        PIPEC_CUDA_TRY(cudaGraphMemcpyNodeGetParams(nodes[i], &p), reading);
        auto key = std::make_pair(p.dstPtr.ptr, p.srcPtr.ptr);
        auto it = copyInstances.find(key);
        if (it != copyInstances.end() && copiesSeen[key] < it->second.size())
          instanceOf[i] = it->second[copiesSeen[key]++];
      }
      if (instanceOf[i] >= int64_t(n))
        instanceOf[i] = -1;
    }
    std::vector<uint8_t> found(n, 0);
    for (int64_t v : instanceOf)
      if (v >= 0)
        found[v] = 1;
    for (uint32_t v = 0; v < n; ++v)
      if (!found[v])
        return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                       "the captured graph has no node for '%s'",
                                       s.instances.name(v).c_str());
    // Reachability between instances over the captured graph.
    std::vector<std::vector<uint8_t>> captured(n, std::vector<uint8_t>(n, 0));
    for (size_t i = 0; i < numNodes; ++i) {
      if (instanceOf[i] < 0)
        continue;
      std::vector<uint8_t> seen(numNodes, 0);
      std::vector<size_t> stack(succ[i].begin(), succ[i].end());
      while (!stack.empty()) {
        size_t x = stack.back();
        stack.pop_back();
        if (seen[x])
          continue;
        seen[x] = 1;
        if (instanceOf[x] >= 0)
          captured[instanceOf[i]][instanceOf[x]] = 1;
        stack.insert(stack.end(), succ[x].begin(), succ[x].end());
      }
    }
    // The schedule's closure, from its reduced edges, in issue order.
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
              captured[u][v] ? "orders" : "does not order", s.instances.name(u).c_str(),
              s.instances.name(v).c_str(), plannedBefore(u, v) ? "does" : "does not");
    return llvm::Error::success();
  }

  /// Instantiates every segment's graph of `g`.
  llvm::Error instantiate(BuiltGraph &g, Executables &execs, const char *what) {
    execs.clear();
    execs.resize(g.graphs.size());
    for (size_t i = 0; i < g.graphs.size(); ++i)
      PIPEC_CUDA_TRY(cudaGraphInstantiate(execs[i].out(), g.graphs[i].get(),
                                          cudaGraphInstantiateFlagUseNodePriority),
                     what);
    return llvm::Error::success();
  }

  /// One replay of the graph lowering, the host's calls of s.graphOps: each
  /// segment launched on its launch stream (its dynamic nodes updated
  /// first), cpu stages, and before a synchronising one a sync on each
  /// event-record node it needs.
  llvm::Error launchGraph(const Schedule &s, Resources &res, BuiltGraph &g, Executables &x,
                          TimingEvents *timed = nullptr) {
    auto visit = [&](auto f) { return res.plan->forEachReplayCall(f); };
    return each(visit, [&](const lower::Call &c) -> llvm::Error {
      switch (c.kind) {
      case lower::Call::GraphLaunch:
        if (llvm::Error e = updateDynamic(s, res, g, x[c.segment].get(), c.segment))
          return e;
        PIPEC_CUDA_TRY(cudaGraphLaunch(x[c.segment].get(), res.launchStreams[c.stream].get()),
                       "cudaGraphLaunch");
        return llvm::Error::success();
      case lower::Call::Sync:
        PIPEC_CUDA_TRY(cudaEventSynchronize(res.graphEvents[c.event].get()),
                       "the graph lowering's sync");
        return llvm::Error::success();
      case lower::Call::Cpu:
        return runCpu(s, res, c.instance, timed);
      default:
        return unsupported(s, c);
      }
    });
  }
  llvm::Error syncSetup(Resources &res) {
    PIPEC_CUDA_TRY(cudaStreamSynchronize(res.setup.get()), "the replay");
    for (Stream &launch : res.launchStreams)
      PIPEC_CUDA_TRY(cudaStreamSynchronize(launch.get()), "the replay");
    return llvm::Error::success();
  }

  /// Capture (timed, and checked against the schedule: a failed check is a
  /// note, the graph replayed is the explicit one), the explicit graphs, and
  /// their replays.
  llvm::Error replayGraph(const Schedule &s, Resources &res, const RunOptions &options,
                          LoweringState &state) {
    LoweringRun &r = state.run;
    Clock::time_point t = Clock::now();
    if (s.hasHostStages()) {
      r.notes.push_back("no stream capture: a host synchronisation cannot be "
                        "captured; the graphs are built per segment");
    } else if (llvm::Expected<Graph> captured = capture(s, res); !captured) {
      r.notes.push_back("stream capture failed (" + llvm::toString(captured.takeError()) +
                        "): no capture timings");
    } else {
      r.timings.capture = microsSince(t);
      if (llvm::Error e = verifyCapture(s, res, captured->get()))
        r.notes.push_back("the captured graph differs from the schedule: " +
                          llvm::toString(std::move(e)));
      GraphExec capturedExec;
      t = Clock::now();
      cudaError_t status = cudaGraphInstantiate(capturedExec.out(), captured->get(),
                                                cudaGraphInstantiateFlagUseNodePriority);
      r.timings.instantiate = microsSince(t);
      if (status != cudaSuccess) {
        (void)cudaGetLastError();
        r.timings.instantiate = 0;
        r.notes.push_back(std::string("the captured graph could not be instantiated: ") +
                          cudaGetErrorString(status));
      }
    }

    // The explicit graphs, with exactly the schedule's edges: replayed.
    t = Clock::now();
    if (llvm::Error e = build(s, res, options, nullptr, state.built))
      return e;
    r.explicitBuildUs = microsSince(t);
    t = Clock::now();
    if (llvm::Error e = instantiate(state.built, state.execs, "the explicit graph"))
      return e;
    r.explicitInstantiateUs = microsSince(t);
    // Every segment is a graph of its own here, identical or not (the
    // model counts a recurring one once: LoweringRun::graphs).
    r.segments = r.graphs = std::max(1u, s.segments);
    return timeReplays(
        options, r, [&] { return launchGraph(s, res, state.built, state.execs); },
        [&] { return syncSetup(res); });
  }

  /// Events: a copy of the graphs with an event record node before and
  /// after each stage (build), launched once untimed, then once after the
  /// origin; cpu stages between them bracketed on the marker stream.
  llvm::Error eventsGraphTimeline(const Schedule &s, Resources &res, const RunOptions &options,
                                  LoweringState &state) {
    LoweringRun &r = state.run;
    TimingEvents te;
    if (llvm::Error e = makeTimingEvents(s, te))
      return e;
    BuiltGraph timed;
    if (llvm::Error e = build(s, res, options, &te, timed))
      return e;
    Executables timedExecs;
    if (llvm::Error e = instantiate(timed, timedExecs, "the timed graph"))
      return e;
    if (llvm::Error e = launchGraph(s, res, timed, timedExecs))
      return e;
    if (llvm::Error e = syncSetup(res))
      return e;
    PIPEC_CUDA_TRY(cudaEventRecord(te.origin.get(), res.setup.get()), "the timeline's origin");
    if (llvm::Error e = launchGraph(s, res, timed, timedExecs, &te))
      return e;
    if (llvm::Error e = syncSetup(res))
      return e;
    PIPEC_CUDA_TRY(cudaStreamSynchronize(res.marker.get()), "the timeline");
    r.notes.push_back(llvm::formatv(
        "the timeline is of a copy of the graph with an event record node before and "
        "after each stage ({0} more nodes, each stage's successors after its second): "
        "its path is longer than the replayed graph's",
        2 * s.instances.size()));
    return readTimingEvents(s, res, te, r);
  }

  /// CUPTI: the explicit graphs instantiated again while CUPTI reports each
  /// node's clone (its records carry the clones' ids), launched once
  /// untimed, then once recorded.
  llvm::Error cuptiGraphTimeline(const Schedule &s, Resources &res, LoweringState &state) {
    std::vector<uint64_t> nodeIds(s.instances.size(), 0);
    for (uint32_t v = 0; v < s.instances.size(); ++v) {
      if (s.instances.stage(v).kind() == StageKind::Host || s.onHost(v))
        continue;
      llvm::Expected<uint64_t> id = cuptiNodeId(state.built.node[v]);
      if (!id)
        return id.takeError();
      nodeIds[v] = *id;
    }
    if (llvm::Error e = cuptiBeginClones())
      return e;
    Executables execs;
    llvm::Error made = instantiate(state.built, execs, "the graph timed by CUPTI");
    llvm::Expected<std::vector<NodeClone>> clones = cuptiEndClones();
    if (made) {
      if (!clones)
        llvm::consumeError(clones.takeError());
      return made;
    }
    if (!clones)
      return clones.takeError();
    if (llvm::Error e = launchGraph(s, res, state.built, execs))
      return e;
    if (llvm::Error e = syncSetup(res))
      return e;
    return cuptiTimeline(
        s, res, state.run,
        [&]() -> llvm::Error {
          if (llvm::Error e = launchGraph(s, res, state.built, execs))
            return e;
          return syncSetup(res);
        },
        [&](std::vector<DeviceRecord> &records, const RecordWindow &window,
            InstanceIntervals &iv) {
          return matchGraphRecords(nodeIds, *clones, records, window, iv);
        });
  }

  DeviceProfile profile;
  cudaDeviceProp props{};
  int least = 0, greatest = 0;
  double timerResolutionNs = 0;
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
