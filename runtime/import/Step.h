//===- Step.h - One profiler step of a trace, as a pipeline ---------------===//
//
// The work of one `ProfilerStep#N` (the last one with GPU ops by default;
// the whole trace when it has no steps) as the recorded program ran it,
// device and host (docs/import.md states each rule):
//  - each GPU op launched in the step is a stage with its measured time, in
//    issue order; ops issued before the step that still run in it (the
//    previous step's backlog) come first, cut to the part inside the step;
//  - the host's time before each launch call returned, since the host's
//    previous call, is its dispatch (`issue=`); a stretch of at least
//    kHostWorkUs with no runtime call is host work (a `cpu` stage);
//  - a host synchronisation (stream, event, device sync; a copy that
//    returned once done) is a `cpu` stage depending on what it waited for;
//  - same-stream order is written as dependencies, and so are the
//    cross-stream orderings: with sync events, a stream wait orders the
//    first op issued to the waiting stream after it behind the last op
//    issued to the recorded stream before the event record; without them,
//    every stream's first op after a cudaStreamWaitEvent call waits for the
//    last op before it on every other stream (a safe superset).
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_STEP_H
#define PIPEC_RUNTIME_IMPORT_STEP_H

#include "compiler/program/DeviceProfile.h"
#include "runtime/import/Trace.h"

#include <optional>

namespace pipec::importer {

/// The least host time between two runtime calls that is host work (a
/// `cpu` stage), not dispatch of the next launch.
constexpr double kHostWorkUs = 1000;

struct ImportedStage {
  enum class Kind : uint8_t {
    Op,       ///< a GPU op
    Sync,     ///< the host blocked until what it depends on had run
    HostWork, ///< the host busy with no runtime call
    Call,     ///< a runtime call that took time of its own (cudaMalloc...)
  } kind = Kind::Op;
  uint32_t op = 0;                       ///< Op: its GPU op, in ImportedStep::ops
  std::string name;                      ///< a short, unique stage name
  std::vector<uint32_t> deps;            ///< earlier stages
  bool backlog = false;                  ///< Op: issued before the step, still running in it
  bool blocking = false;                 ///< Op: a copy whose call returned once it was done
  HostCall::Kind call = HostCall::Other; ///< Sync: the call (BlockingCopy: a copy's)
  /// HostWork: the innermost named range of the host's (a record_function,
  /// an NVTX range: `## data_load ##`, `Optimizer.step#SGD.step`) that holds
  /// most of it, an index into ImportedStep::hostRanges; UINT32_MAX: none.
  uint32_t within = UINT32_MAX;
  /// HostWork: where in the step it fell.
  enum class HostWorkAt : uint8_t {
    BetweenCalls,    ///< between two runtime calls
    BeforeFirstCall, ///< from the step's start to its first call
    AfterLastCall,   ///< from its last call to the step's end
  } hostWorkAt = HostWorkAt::BetweenCalls;
  uint32_t callName = 0; ///< Call: the call's name (ImportedStep::callNames)
  /// Op: a blocking copy of pageable memory whose call returned by the time
  /// the copy ended, its sync stage (the next) waiting for it alone: written
  /// `[pageable]` (language version 6), and that sync stage (`waitOfCopy`)
  /// not written: the file's reader makes the copy's wait in its place.
  bool pageable = false;
  /// Sync: the wait of the pageable copy before it (see `pageable`).
  bool waitOfCopy = false;
  /// Op: its launch call blocked, the driver's launch queue full (the
  /// model's launch_queue_depth reproduces the wait; it is not dispatch).
  bool queueFull = false;
  /// Op: a blocking copy whose call waited for the GPU before the copy
  /// could begin (that wait is the sync's, not dispatch).
  bool waitedForGpu = false;
  /// Op: launched with others by one cudaGraphLaunch (the first of them
  /// carries the call's dispatch).
  bool graphLaunched = false;
  /// Op: the graph launch of the step it came with (graph=N, its number in
  /// the step), -1 for one launched on its own or before the step.
  int64_t graphLaunch = -1;
  /// Op: not an op, the wait of `op` past everything it is known to follow
  /// that the trace does not explain (a graph's node, an op whose launch is
  /// missing, an op on an idle GPU): kept as a one-block kernel of that
  /// time before it on its stream, so that a run keeps it.
  bool idle = false;
  /// Op: host time from the previous call's end to this launch call's end
  /// (to its start when it blocked): dispatch plus the call itself.
  double dispatchUs = 0;
  /// The host's recorded time, from the step's origin: Op, when its launch
  /// call returned (when it was made, if it blocked); Sync, HostWork, when
  /// the host began it.
  double hostUs = 0;
  double cpuUs = 0; ///< HostWork: its time; Sync: the host's just before the call
  /// Sync: when the host came back, and when the last op it waited for
  /// ended (recorded, from the step's origin); the host's time in the call
  /// past that and the wake-up is the sync stage's own (cpuTimeUs).
  double returnUs = 0, waitedEndUs = 0;
  /// Op: as recorded, from the step's origin (a backlog op from the origin).
  double startUs = 0, endUs = 0;
  double durUs = 0; ///< Op: its time (a backlog op's, the part in the step)
  /// Op (a kernel): its recorded time, where durUs is its time alone, the
  /// contention of what ran beside it taken out (Contention.h); else 0.
  double recordedUs = 0;
  /// Op, with an execution trace (`--et`): the buffers it reads and
  /// writes (ImportedStep::buffers), from the framework op that launched it.
  std::vector<uint32_t> reads, writes;
  bool onHost() const { return kind != Kind::Op; }
};

/// A storage the execution trace's tensors live in (`--et`): a buffer.
struct ImportedBuffer {
  std::string name;
  uint64_t bytes = 0; ///< the farthest any of its tensors reaches
  bool host = false;  ///< host memory (a CPU tensor's)
  /// Read in the step and never written in it: what the program holds
  /// across steps (weights, inputs), declared `state`.
  bool state = false;
};

/// How a step's GPU ops were linked to an execution trace (`--et`), and
/// what its data made of them.
struct DataLink {
  enum class By { RecordFunctionId, ExternalId, Alignment } by = By::Alignment;
  uint64_t stepOps = 0;                  ///< the step's GPU ops (the trace's waits left out)
  uint64_t linkedOps = 0;                ///< launched inside a framework op the link found
  uint64_t dataOps = 0;                  ///< of those, with reads or writes
  uint64_t cpuOps = 0, linkedCpuOps = 0; ///< the Kineto trace's framework ops
  uint64_t buffers = 0;
  uint64_t contradicted = 0; ///< accesses taken out: the recording contradicts them
  uint64_t streamOrders = 0; ///< same-stream dependencies made plain stream order
};

struct ImportedStep {
  std::optional<int64_t> step; ///< none: the whole trace
  /// The range the step is (`--step=NAME#K`: its name; `step` is K); empty
  /// for a ProfilerStep.
  std::string rangeName;
  std::vector<int64_t> availableSteps;
  /// The step's host range (ProfilerStep#N, or the range taken as the
  /// step): its period as users time it, host included; 0 for the whole
  /// trace.
  double periodUs = 0;
  /// The step's extent, host and device together: from the earlier of its
  /// host range's start and its first GPU op's start to the later of the
  /// range's end and its last GPU op's end (no chain of its orderings is
  /// longer); the span for the whole trace.
  double windowUs = 0;
  std::vector<int64_t> streams; ///< stream ids, in order of first use
  /// The streams' CUDA priorities the recording gave, other than 0 (the
  /// default), by id.
  std::map<int64_t, int64_t> streamPriority;
  std::vector<ImportedStage> stages;
  std::vector<GpuOp> ops;              ///< the step's GPU ops (ImportedStage::op)
  std::vector<std::string> names;      ///< the ops' names (GpuOp::name indexes them)
  std::vector<std::string> callNames;  ///< runtime calls' names (callName)
  std::vector<std::string> hostRanges; ///< the ranges host work fell in (within)
  /// The first GPU op's start, on the trace's clock: the origin.
  double originTs = 0;
  /// Stream waits the recorded program issued in the step.
  uint64_t waitsIssued = 0;
  /// Host synchronisations in the step (event, stream, context syncs and
  /// copies that blocked).
  uint64_t hostSyncs = 0;
  uint64_t backlogOps = 0;
  /// The trace has cuda_sync events (recorded with enable_cuda_sync_events):
  /// stream waits and syncs name their streams and events.
  bool syncEvents = false;
  /// What a reader of the import should know (a trace without sync events).
  std::vector<std::string> notes;
  /// Kernels written as their time alone, and the contention taken out of
  /// their recorded times (uncontend, Contention.h).
  uint64_t contendedKernels = 0;
  double contentionUs = 0;
  DeviceInfo device;
  /// With an execution trace (`--et`): its storages the ops touch, and how
  /// the ops were linked to it (none without).
  std::vector<ImportedBuffer> buffers;
  std::optional<DataLink> data;
  /// A platform pipec does not model (Trace::foreignPlatform): the step's
  /// recording can be reported, not modelled or written as a .pipe file.
  std::string foreignPlatform;

  const GpuOp &opOf(const ImportedStage &stage) const { return ops[stage.op]; }
};

/// The step's work and orderings; `number` picks `ProfilerStep#number`.
/// The step takes the trace's ops (those it keeps), not copies of them.
llvm::Expected<ImportedStep> selectStep(Trace &&trace, std::optional<int64_t> number);

/// What `--step` asks for: a ProfilerStep's number (`N`, `ProfilerStep#N`),
/// or the K-th range of a name (`NAME`, `NAME#K`: an NVTX range, a
/// record_function; K from 1, the last when left out).
struct StepChoice {
  std::optional<int64_t> number;
  std::string range;
  uint64_t k = 0; ///< 0: the last
};
/// `--step`'s text: N, ProfilerStep#N, NAME or NAME#K (K from 1); an error
/// for '#K' with no name, or K = 0.
llvm::Expected<StepChoice> parseStepChoice(llvm::StringRef text);
/// How the step is named: `ProfilerStep#N`, or `NAME#K` for a range.
std::string stepLabel(const ImportedStep &s);
/// The step `choice` picks: a range becomes the step (its number K).
llvm::Expected<ImportedStep> selectStep(Trace &&trace, const StepChoice &choice);

/// A device profile for the trace's GPU: its SM count and limits from
/// `deviceProperties`, copy bandwidths from published figures by GPU (docs/
/// import.md names the source of each), the model's defaults otherwise.
DeviceProfile profileFor(const DeviceInfo &device);
/// The device's peer link, GB/s a direction (its NVLink generation, or
/// `pcieGBps` on a part without NVLink).
double peerGBps(const DeviceInfo &device, double pcieGBps);
/// An error where the recorded device's properties are ones no GPU has
/// (the profile's ranges: 1 to 1024 SMs, ...).
llvm::Error checkDevice(const DeviceInfo &device);
/// The device memory's bandwidth by part, GB/s (0: not known here).
double memoryGBps(const DeviceInfo &device);

/// The share of the device's SMs a kernel asks for: its blocks over as many
/// as fit on the device at once (more than 1: a grid of several waves).
double smShare(const GpuOp &kernel, const DeviceProfile &profile);

/// What share of the SMs the recorded kernels (stages of `ops`; gpu_idle
/// waits left out) asked for at once, over time (smShare each).
class SmDemand {
public:
  SmDemand(const std::vector<ImportedStage> &stages, const std::vector<GpuOp> &ops,
           const DeviceProfile &profile);
  /// Asked at `t` (from the step's origin): by the kernels begun by then
  /// and not yet ended (one that ends at `t` no longer asks).
  double at(double t) const;
  /// The most ever asked at once.
  double most() const;

private:
  std::vector<std::pair<double, double>> asked_; ///< (time, the share from then on)
};

/// A `cpu` stage's time: host work's own; a sync's, the time its call
/// took past the end of what it waited for and the profile's wake-up.
double cpuTimeUs(const ImportedStage &stage, const DeviceProfile &profile);

} // namespace pipec::importer

#endif // PIPEC_RUNTIME_IMPORT_STEP_H
