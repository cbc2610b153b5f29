//===- Lints.h - Warnings that need the dependency graph ------------------===//
#ifndef PIPEC_SCHEDULE_LINTS_H
#define PIPEC_SCHEDULE_LINTS_H

#include "compiler/diag/Diagnostics.h"
#include "compiler/program/Program.h"

namespace pipec {

struct StageGraph;

/// `warning: redundant dependency on 'A'` for each same-iteration
/// `depends_on` already implied by the stage's other dependencies, with a
/// note at the path that implies it.
void lintRedundantDependencies(const program::Pipeline &pipeline,
                               const StageGraph &graph,
                               DiagnosticEngine &diags);

} // namespace pipec

#endif // PIPEC_SCHEDULE_LINTS_H
