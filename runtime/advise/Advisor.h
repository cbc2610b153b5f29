//===- Advisor.h - `pipec advise`: changes, applied and measured -----------===//
//
// Each suggestion is a concrete change to the file — move a stage to
// another stream, give copies and kernels streams of their own, let pipec
// assign the streams, raise a stream's priority, deepen a ring, use a CUDA
// graph — written as edits of its syntax (compiler/format/Edit), applied,
// formatted, checked, compiled with compile's options and run again on the
// backend, and reported with the objective before and after. `--apply=N`
// writes that very file.
//
// A suggestion never changes what the program computes: a changed program
// that drops an ordering the file states, or changes which write a read
// sees, or races, is not offered (compiler/schedule/Meaning). A move whose
// stages do not declare their data keeps the stream order they had as
// dependencies; what it would gain were their data declared is said as a
// note, never as a suggestion. A change that gains less than the threshold
// (2% of the objective and 1 us by default) is not suggested, and no note
// reports a gain below it. Beside them: the binding lower bound, the gap
// between it and the run, cause by cause, the stream-order edges on the
// critical path.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_ADVISE_ADVISOR_H
#define PIPEC_RUNTIME_ADVISE_ADVISOR_H

#include "compiler/ast/AST.h"
#include "compiler/program/Program.h"
#include "compiler/schedule/Schedule.h"
#include "model/Gap.h"
#include "model/Objective.h"
#include "runtime/Backend.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace pipec::model {
class Model;
}

namespace pipec::runtime {

/// The smallest gain that is suggested, by default: 2% of the objective
/// and 1 us (compiler/schedule/Analysis.h).
using pipec::kMinGainFraction;
using pipec::kMinGainUs;

struct Suggestion {
  std::string change;  ///< "move stage 'D2H' to stream 'out'"
  std::string measure; ///< the objective's spelling, or "replay" for the graph
  double beforeUs = 0, afterUs = 0;
  /// The file with the change applied, formatted (the graph: none — it is
  /// a lowering, not a change to the file).
  std::string text;
  bool graph = false;
  /// An environment setting instead of an edit ("CUDA_DEVICE_MAX_CONNECTIONS=32"):
  /// --apply says how to set it.
  std::string environment;
  /// The far end of its range, on the device model, where kernels whose
  /// file does not say what bounds them (`bytes=`, `bound=`) each need the
  /// whole device's memory bandwidth and issue throughput while they run
  /// (before, after); negative where that assumption changes the gain by
  /// less than the threshold, or nothing rests on it.
  double contendedBeforeUs = -1, contendedAfterUs = -1;
  bool ranged() const { return contendedBeforeUs >= 0; }
};

struct PipelineAdvice {
  std::string name;
  uint64_t instances = 0;
  Objective objective;
  double objectiveUs = 0; ///< the baseline's (compile's schedule, run)
  double makespanUs = 0;
  double lowerBoundUs = 0;
  std::string binding, bindingWords;
  GraphAdvice graph;
  std::vector<Suggestion> suggestions; ///< best first
  std::vector<std::string> notes;      ///< what holds it back, what could gain
  std::vector<GapPart> gap;            ///< makespan - lower bound, cause by cause (model)
  /// The connection count what-if (CUDA_DEVICE_MAX_CONNECTIONS), on the
  /// device model: the objective with that many hardware queues, for the
  /// profile's count and 1, 8 and 32; empty when the streams do not share
  /// queues at the profile's count.
  std::vector<std::pair<unsigned, double>> connections;
  unsigned streams = 0;       ///< the most streams of one device
  unsigned profileQueues = 0; ///< the profile's hardware_queues
};

struct AdviseOptions {
  unsigned replays = 100;
  /// Compile's: the same assignment method, cap and evaluator, so that
  /// advise starts from the schedule compile emits.
  ScheduleOptions schedule;
  Objective objective;
  double minGainFraction = kMinGainFraction;
  double minGainUs = kMinGainUs;
};

/// The file a pipeline comes from: its syntax (parsed, not consumed) and
/// text, for the edits.
struct AdviseSource {
  const ast::File *file = nullptr;
  llvm::StringRef text;
};

/// Advice for `compiled` (compile's schedule of one pipeline of `source`),
/// measured on `backend` (the model's, or a device's). `model` answers every
/// other question — the graph verdict, the gap, the what-ifs of a setting
/// or a grid — as compile and run ask it.
llvm::Expected<PipelineAdvice> advise(const AdviseSource &source, const Schedule &compiled,
                                      const model::Model &model, Backend &backend,
                                      const AdviseOptions &options);

/// The objective of `schedule` run on `backend` in `lowering` (the graph:
/// its replay time when `objective` is the makespan).
llvm::Expected<double> measure(const Schedule &schedule, Backend &backend, unsigned replays,
                               Lowering lowering, const Objective &objective);

/// The advice in words; suggestions are numbered from `first` (--apply=N
/// takes that number, across the pipelines of a file).
void printAdvice(const PipelineAdvice &advice, const std::string &device,
                 const AdviseOptions &options, size_t first, llvm::raw_ostream &os);
/// The pipec-advice document (docs/scheduling.md, version 3): suggestions carry
/// their number, from 1 across the pipelines.
void writeAdviceJSON(llvm::ArrayRef<PipelineAdvice> advice, llvm::raw_ostream &os);

} // namespace pipec::runtime

#endif // PIPEC_RUNTIME_ADVISE_ADVISOR_H
