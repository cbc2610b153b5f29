//===- Objective.h - What a run is judged by: makespan, or a stage's end --===//
//
// `--objective=makespan` (the default): first stage start to last stage
// end. `--objective=end:STAGE` (`:worst`, the default, or `:median`): per
// iteration, how long after the iteration's first stage started STAGE
// ended — a latency such as time to first token — the worst or the median
// over iterations. advise optimises it, and run prints it when asked.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_MODEL_OBJECTIVE_H
#define PIPEC_MODEL_OBJECTIVE_H

#include "compiler/schedule/Schedule.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace pipec::runtime {

struct Objective {
  enum Kind { Makespan, StageEnd } kind = Makespan;
  std::string stage;   ///< StageEnd
  bool median = false; ///< StageEnd: the median over iterations, not the worst

  /// "makespan", "end:Decode:worst"
  std::string spelling() const;
  /// "the makespan", "the end of 'Decode' (worst over iterations)"
  std::string words() const;
};

/// Parses `--objective`'s value; an unknown form is an error saying the
/// forms.
llvm::Expected<Objective> parseObjective(llvm::StringRef text);

/// An error when `objective` names a stage `pipeline` does not have.
llvm::Error checkObjective(const Objective &objective, const program::Pipeline &pipeline);

/// Per iteration, STAGE's end after the iteration's first start.
std::vector<double> stageLatencies(const Schedule &schedule, uint32_t stage,
                                   const std::vector<double> &start,
                                   const std::vector<double> &end);

/// The objective on a timeline (`makespan`: last end - first start).
double objectiveValue(const Objective &objective, const Schedule &schedule,
                      const std::vector<double> &start, const std::vector<double> &end,
                      double makespanUs);

} // namespace pipec::runtime

#endif // PIPEC_MODEL_OBJECTIVE_H
