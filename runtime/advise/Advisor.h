//===- Advisor.h - `pipec advise`: changes, applied and measured -----------===//
//
// Each suggestion is a concrete change to the program — move a stage to
// another stream, give copies and kernels streams of their own, let pipec
// assign the streams, raise a stream's priority, use a CUDA graph — applied
// to a copy of the program, scheduled and run again on the backend (the
// device model, or the GPU), and reported with the makespan before and
// after. A change that gains less than 2% (or 1 us) is not suggested. What
// holds the program back is reported beside them: the binding lower bound,
// the stream-order edges on the critical path (each with its own delay,
// never summed along the path), the dependencies the reduction drops.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_ADVISE_ADVISOR_H
#define PIPEC_RUNTIME_ADVISE_ADVISOR_H

#include "compiler/program/Program.h"
#include "compiler/schedule/Schedule.h"
#include "runtime/Backend.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace pipec::runtime {

struct Suggestion {
  std::string change;      ///< "move stage 'D2H' to stream 'out'"
  const char *measure;     ///< "makespan", or "replay" for the graph
  double beforeUs = 0, afterUs = 0;
  program::Pipeline program; ///< the program with the change applied
  bool graph = false;        ///< the change is the lowering, not the program
};

struct PipelineAdvice {
  std::string name;
  uint64_t instances = 0;
  double makespanUs = 0;
  double lowerBoundUs = 0;
  std::string binding, bindingWords;
  GraphAdvice graph;
  std::vector<Suggestion> suggestions; ///< best first
  std::vector<std::string> notes;      ///< what holds it back
};

/// The smallest gain that is suggested: 2% of the makespan and 1 us.
constexpr double kMinGainFraction = 0.02;
constexpr double kMinGainUs = 1.0;

/// Advice for one pipeline, measured on `backend`. `cost` answers the graph
/// question (the same one compile and run use).
llvm::Expected<PipelineAdvice> advise(const program::Pipeline &pipeline,
                                      const DeviceProfile &profile,
                                      Backend &backend, unsigned replays,
                                      const GraphCostModel &cost);

/// The makespan (or, for the graph, the replay time) of `pipeline` on
/// `backend`: what a suggestion's before and after are measured with.
llvm::Expected<double> measure(const program::Pipeline &pipeline,
                               const DeviceProfile &profile, Backend &backend,
                               unsigned replays, Lowering lowering,
                               const char *what);

void printAdvice(const PipelineAdvice &advice, const std::string &device,
                 unsigned replays, llvm::raw_ostream &os);
void writeAdviceJSON(llvm::ArrayRef<PipelineAdvice> advice, llvm::raw_ostream &os);

} // namespace pipec::runtime

#endif // PIPEC_RUNTIME_ADVISE_ADVISOR_H
