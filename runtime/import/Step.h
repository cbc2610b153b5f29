//===- Step.h - One profiler step of a trace, as a pipeline ---------------===//
//
// The GPU ops launched during one `ProfilerStep#N` (the last one with GPU
// ops by default; the whole trace when it has no steps), in issue order
// (their launch calls' correlation ids), each with its measured duration,
// its launch time, and the cross-stream orderings the program really had:
//  - a "Stream Wait Event" makes the first op issued to the waiting stream
//    after it depend on the last op issued to the waited stream before the
//    matching cudaEventRecord;
//  - a host synchronisation (event, stream or context sync) makes the first
//    op issued to each stream after it depend on the ops it waited for.
// Same-stream order is kept by the streams themselves.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_STEP_H
#define PIPEC_RUNTIME_IMPORT_STEP_H

#include "compiler/program/DeviceProfile.h"
#include "runtime/import/Trace.h"

#include <optional>

namespace pipec::importer {

struct ImportedStage {
  GpuOp op;
  std::string name;            ///< a short, unique stage name
  std::vector<uint32_t> deps;  ///< earlier stages, cross-stream orderings
  double issueUs = 0;          ///< its launch call, from the step's origin
  double startUs = 0, endUs = 0; ///< as recorded, from the step's origin
};

struct ImportedStep {
  std::optional<int64_t> step; ///< none: the whole trace
  std::vector<int64_t> availableSteps;
  std::vector<int64_t> streams; ///< stream ids, in order of first use
  std::vector<ImportedStage> stages;
  /// The first GPU op's start, on the trace's clock: the origin.
  double originTs = 0;
  /// Stream waits the recorded program issued in the step.
  uint64_t waitsIssued = 0;
  /// Host synchronisations in the step (event, stream, context).
  uint64_t hostSyncs = 0;
  DeviceInfo device;
};

/// The step's ops and orderings; `number` picks `ProfilerStep#number`.
llvm::Expected<ImportedStep> selectStep(const Trace &trace,
                                        std::optional<int64_t> number);

/// A device profile for the trace's GPU: its SM count and limits from
/// `deviceProperties`, copy bandwidths from published figures by GPU (docs/
/// import.md names the source of each), the model's defaults otherwise.
DeviceProfile profileFor(const DeviceInfo &device);

/// The step as a `.pipe` file (unformatted; `pipec fmt` lays it out) that
/// checks clean; an op it cannot represent is an error naming its event.
llvm::Expected<std::string> writePipe(const ImportedStep &step, llvm::StringRef source,
                                      const DeviceProfile &profile);

} // namespace pipec::importer

#endif // PIPEC_RUNTIME_IMPORT_STEP_H
