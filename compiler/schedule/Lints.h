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
/// `warning: stage 'B' is written before 'F' on stream 's' but is issued
/// after it` where a stream's stages run in another order than written
/// (the issue order keeps the written one only where dependencies allow):
/// the first such pair of each stream, with the dependency that forced it
/// and how to write it so that the order holds.
void lintWrittenOrder(const program::Pipeline &pipeline, const StageGraph &graph,
                      DiagnosticEngine &diags);
/// How many warnings lintRedundantDependencies gives (shown or counted):
/// the declared same-iteration dependencies the stage's others imply.
size_t countRedundantDependencies(const program::Pipeline &pipeline, const StageGraph &graph);
void lintRedundantDependencies(const program::Pipeline &pipeline, const StageGraph &graph,
                               DiagnosticEngine &diags);

/// `warning: ... streams share ... hardware queues` when a pipeline declares
/// more streams than the device has hardware queues (with several devices,
/// on one device: each has its own): streams i and i+Q then feed one FIFO,
/// and their work serialises falsely (on the device model as on CUDA).
void lintHardwareQueues(const program::Pipeline &pipeline, unsigned queues,
                        DiagnosticEngine &diags);

} // namespace pipec

#endif // PIPEC_SCHEDULE_LINTS_H
