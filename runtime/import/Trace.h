//===- Trace.h - A PyTorch profiler (Kineto) trace, read for its GPU work --===//
//
// Kineto writes Chrome trace JSON: `deviceProperties` (one entry per GPU)
// and `traceEvents`, among them the GPU ops (categories `kernel`,
// `gpu_memcpy`, `gpu_memset`), the CUDA runtime calls that launched them
// (`cuda_runtime`, linked by `args.correlation`), every other runtime call
// (the host's activity: syncs, waits, records, queries), the synchronisations
// (`cuda_sync`: "Stream Wait Event" with `wait_on_stream` and
// `wait_on_cuda_event_record_corr_id`, "Event Sync", "Stream Sync",
// "Context Sync") and the `ProfilerStep#N` annotations. Only those are kept:
// the top-level object's keys are walked, and each event (and each device)
// is parsed on its own, so memory follows the GPU ops kept, not the trace
// (beside its text, which is read whole, up to a limit). Names are kept
// short and printable; a GPU op whose numbers a .pipe file cannot hold is an
// error naming the event.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_TRACE_H
#define PIPEC_RUNTIME_IMPORT_TRACE_H

#include "compiler/support/Kinds.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace pipec::importer {

/// The largest trace read (decompressed): a bigger one is refused.
constexpr uint64_t kMaxTraceBytes = uint64_t(1) << 30;
/// The most GPUs a recording may list: a machine has a few.
constexpr size_t kMaxTraceDevices = 4096;
/// The longest time a .pipe stage may take (the language's limit): a
/// recorded op past it is an error naming it.
constexpr double kMaxStageUs = 3600e6;

enum class OpKind { Kernel, Memcpy, Memset };

struct GpuOp {
  OpKind kind = OpKind::Kernel;
  uint32_t name = 0; ///< index into the trace's names (a kernel's repeats)
  int64_t stream = 0;
  int64_t device = 0;
  double ts = 0, dur = 0;   ///< microseconds, on the trace's clock
  int64_t correlation = -1; ///< links to the runtime call that issued it
  uint64_t blocks = 1, threads = 1;
  uint32_t regs = 0;
  uint64_t smem = 0; ///< static + dynamic shared memory per block
  uint64_t bytes = 0;
  CopyDirection direction = CopyDirection::D2D;
  double launchTs = -1; ///< the runtime call's start; -1 when not in the trace
  double launchDur = 0; ///< the runtime call's duration
  int64_t thread = 0;   ///< the host thread that made the call
  uint64_t event = 0;   ///< its index in traceEvents, to name it in messages
};

struct SyncEvent {
  enum Kind { StreamWait, EventSync, StreamSync, ContextSync } kind;
  int64_t stream = -1;            ///< the stream that waits (StreamWait), or is synced
  int64_t waitOnStream = -1;      ///< the stream of the event record waited on
  int64_t recordCorrelation = -1; ///< the cudaEventRecord call waited on
  int64_t correlation = -1;       ///< this call's
  double ts = 0;
};

/// A CUDA runtime (or driver) call: the host's own timeline.
struct HostCall {
  enum Kind : uint8_t {
    Other,        ///< a launch (when a GPU op has its correlation), record, query...
    StreamSync,   ///< cudaStreamSynchronize: blocks until the stream is done
    EventSync,    ///< cudaEventSynchronize: until the event's record ran
    DeviceSync,   ///< cudaDeviceSynchronize: until every stream is done
    StreamWait,   ///< cudaStreamWaitEvent: the device waits, not the host
    BlockingCopy, ///< cudaMemcpy / cudaMemset (no Async): returns when done
    Free,         ///< cudaFree: synchronises the device, then frees
    GraphLaunch,  ///< cudaGraphLaunch: launches every op of a graph at once
    Poll,         ///< (the import's) cudaEventQuery/cudaStreamQuery polled until done
  } kind = Other;
  uint32_t name = 0; ///< index into Trace::callNames
  double ts = 0, dur = 0;
  int64_t correlation = -1;
  int64_t thread = 0;
};

struct Step {
  int64_t number = 0;
  double ts = 0, dur = 0; ///< on the host
};

/// A named range of the host's time other than a step: an NVTX range
/// (Nsight Systems), a record_function (Kineto's user_annotation).
/// `--step=NAME[#K]` takes one as the step.
struct Range {
  uint32_t name = 0; ///< index into Trace::rangeNames
  double ts = 0, dur = 0;
};

/// A framework op of the host's (Kineto's `cpu_op`, a record_function's
/// `user_annotation`): kept only when asked (`pipec import --et` links them
/// to an execution trace's ops).
struct CpuOp {
  uint32_t name = 0; ///< index into CpuOps::names
  double ts = 0, dur = 0;
  int64_t thread = 0;
  int64_t externalId = -1;       ///< `External id`
  int64_t recordFunctionId = -1; ///< `Record function id` (newer profilers)
};

struct CpuOps {
  std::vector<CpuOp> ops; ///< as they come in the file
  std::vector<std::string> names;
  llvm::StringMap<uint32_t> nameIndex;
};
/// The most framework ops kept (a trace of more is refused for `--et`).
constexpr size_t kMaxCpuOps = size_t(1) << 24;

struct DeviceInfo {
  int64_t id = 0; ///< the `id` the ops' `device` refers to
  std::string name;
  uint32_t sms = 0, maxThreadsPerSM = 0, maxThreadsPerBlock = 0;
  uint32_t sharedMemoryPerSM = 0, sharedMemoryPerBlock = 0, registersPerSM = 0;
  uint32_t major = 0, minor = 0;
  /// The most launches the driver held not yet started when a launch call
  /// blocked for room (0: the queue never filled in the step imported).
  uint32_t launchQueueDepth = 0;
  /// The device's own time between two ops of a stream when the second was
  /// already queued: the mean such gap in the step (0: too few to measure).
  double streamGapUs = 0;
};

struct Trace {
  std::vector<DeviceInfo> devices;
  /// The ops' names, each once (a step runs the same kernels many times).
  std::vector<std::string> names;
  std::vector<GpuOp> ops; ///< as they come in the file
  std::vector<SyncEvent> syncs;
  std::vector<Step> steps;
  std::vector<Range> ranges;
  std::vector<std::string> rangeNames; ///< each once (Range::name)
  llvm::StringMap<uint32_t> rangeNameIndex;
  /// Every runtime call, as in the file, and each one's index by
  /// correlation (the ones GPU ops and syncs refer to).
  std::vector<HostCall> calls;
  llvm::DenseMap<int64_t, uint32_t> callOf;
  /// The calls' names, each once (HostCall::name indexes them).
  std::vector<std::string> callNames;
  /// The process that recorded it (Nsight Systems: its pid); -1 when the
  /// recording does not say.
  int64_t process = -1;
  /// Each stream's CUDA priority where the recording says (Nsight Systems'
  /// TARGET_INFO_CUDA_STREAM; lower is more urgent).
  std::map<int64_t, int64_t> streamPriority;
  /// GPUs whose ops were left out: a multi-GPU trace keeps the busiest.
  uint64_t otherDevices = 0;
  uint64_t otherDeviceOps = 0; ///< their ops
  /// The processes (`pid`) whose runtime calls a Kineto trace holds: one
  /// but in a trace of several ranks merged (the first 9 kept).
  std::vector<int64_t> hostProcesses;
  int64_t device = 0; ///< the kept GPU's id (its ops' `device`)
  /// A platform pipec does not model ("ROCm (HIP runtime calls)", "ROCm
  /// (device 'AMD Instinct MI300X')"); empty for CUDA.
  std::string foreignPlatform;
  /// How to record the exact stream waits with the profiler that wrote
  /// this (said when they are missing).
  std::string exactWaitsAdvice =
      "record with torch.profiler.profile(..., experimental_config=torch._C._profiler."
      "_ExperimentalConfig(enable_cuda_sync_events=True)) for the exact ones";
  /// The host's framework ops, kept when asked (readRecording's `cpuOps`).
  CpuOps cpuOps;
  bool keepCpuOps = false;
  /// While reading: whether it holds an MTIA device's events or runtime
  /// calls (foreignPlatform says so once read).
  bool mtia = false;
  /// While reading: each name's index in `names`, by its text in the file.
  llvm::StringMap<uint32_t> nameIndex, callNameIndex;
};

/// A name from a recording, as pipec keeps it: at most 1 KiB, its control
/// characters escaped.
std::string keptName(llvm::StringRef name);
/// What a runtime (or driver) API call does to the host, by its name.
HostCall::Kind callKindOf(llvm::StringRef name);
/// The end of reading a recording, whatever its format (at least one op):
/// the busiest GPU's ops kept, each op linked to its launch call.
void finishTrace(Trace &trace);
/// Keeps a range of the host's time, by its name (bounded: a trace may
/// hold millions of record_function ranges; past kMaxRanges they are not
/// kept, and a --step naming one says so).
void addRange(Trace &trace, llvm::StringRef name, double ts, double dur);
constexpr size_t kMaxRanges = size_t(1) << 20;

/// Reads `path`: a Kineto trace (`.json`, or gzip-compressed `.json.gz`;
/// '-' is standard input; a pipe is read once), or an Nsight Systems
/// SQLite export (a file; told by its content, runtime/import/Nsys.h). Errors say what is
/// wrong: not JSON, no GPU op (and what devices the trace has), a truncated gzip stream, too
/// large, an op pipec cannot represent. A ROCm trace is read, and said
/// (Trace::foreignPlatform).
llvm::Expected<Trace> readTrace(llvm::StringRef path);
/// The recording at `path`, as one Trace per process that ran GPU work: a
/// Kineto trace is one; an Nsight Systems export one per process. With
/// `cpuOps`, a Kineto trace's framework ops are kept too (Trace::cpuOps).
llvm::Expected<std::vector<Trace>> readRecording(llvm::StringRef path, bool cpuOps = false);
/// The same, from text already in memory (for tests and the fuzzer).
llvm::Expected<Trace> parseTrace(llvm::StringRef text);
/// The same with every event through llvm::json's DOM, none on the fast
/// path: the obvious reader the fast one is checked against.
llvm::Expected<Trace> parseTraceSlowly(llvm::StringRef text);

} // namespace pipec::importer

#endif // PIPEC_RUNTIME_IMPORT_TRACE_H
