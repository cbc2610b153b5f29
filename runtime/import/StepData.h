//===- StepData.h - A step's data, from the execution trace ---------------===//
//
// `pipec import TRACE --et=ET`: each GPU op of the step is linked to the
// framework op that launched it (the innermost of the host's `cpu_op`s
// around its launch call that the execution trace records), and reads and
// writes what that op's tensors live in: each storage a `buffer`, inputs
// read and outputs written, as far as the op's kind reaches (a kernel its
// device tensors, a copy from host to device its host inputs and device
// outputs, ...). A same-stream ordering between two ops that both declare
// data, launched by different framework ops, is then written as plain
// stream order: the data says what must follow what (`sync inferred`), and
// a what-if may move one of them to another stream. Every other ordering
// stays a dependency, as without `--et`: those of an op the execution trace
// does not cover, of the ops of one framework op (their scratch memory is
// not in the trace), the host's syncs and the recorded waits.
//
// The framework ops are linked, in this order of preference, by
// `Record function id` (a Kineto trace recorded with the execution trace),
// by `External id` against `rf_id`, or by aligning the execution trace's
// op sequence (one iteration) with the Kineto trace's, iteration after
// iteration: a link is kept only where the ops' names agree, and a
// realignment needs a run of kAlignRun names that occurs once in the
// iteration. A step whose GPU ops are linked below kLeastLinkedShare is
// refused, with the share: pipec does not guess data.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_STEPDATA_H
#define PIPEC_RUNTIME_IMPORT_STEPDATA_H

#include "runtime/import/ExecutionTrace.h"
#include "runtime/import/Step.h"

namespace pipec::importer {

/// The least share of a step's GPU ops that must be linked.
constexpr double kLeastLinkedShare = 0.8;
/// The names in a row that realign the sequences (each run of them must
/// occur once in the execution trace's iteration).
constexpr size_t kAlignRun = 8;

/// How each link was made, in words ("record-function id", ...).
llvm::StringRef linkMethodName(DataLink::By by);
/// The link and what the data made of the step, as the import's note says
/// it ("5 of 6 GPU ops linked to the execution trace by ...").
std::string describeDataLink(const DataLink &link);

/// For each of `cpuOps`, the execution trace op it is (-1: none), made
/// `by` one way; its share of the framework ops linked is in `linked`.
std::vector<int32_t> linkCpuOps(const CpuOps &cpuOps, const ExecutionTrace &et,
                                DataLink::By by, uint64_t &linked);

/// Gives the step its buffers and its GPU ops their reads and writes, and
/// makes the same-stream orderings the data covers plain stream order. An
/// error (and the step unchanged) when no link reaches `leastShare` of the
/// step's GPU ops (kLeastLinkedShare unless the user says).
llvm::Expected<DataLink> addData(ImportedStep &step, const CpuOps &cpuOps,
                                 const ExecutionTrace &et,
                                 double leastShare = kLeastLinkedShare);

} // namespace pipec::importer

#endif // PIPEC_RUNTIME_IMPORT_STEPDATA_H
