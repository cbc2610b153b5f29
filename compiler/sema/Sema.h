//===- Sema.h - AST to Program: names, units, limits, every error ---------===//
#ifndef PIPEC_SEMA_SEMA_H
#define PIPEC_SEMA_SEMA_H

#include "compiler/ast/AST.h"
#include "compiler/diag/Diagnostics.h"
#include "compiler/program/DeviceProfile.h"
#include "compiler/program/Program.h"

#include <optional>
#include <string>

namespace pipec {

/// The language's limits (docs/language.md).
constexpr uint64_t kMaxStageInstances = 10'000'000;
constexpr uint64_t kMaxIterations = 10'000'000;
constexpr uint64_t kMaxBlocks = 2'147'483'647; // CUDA's gridDim.x limit
constexpr uint64_t kMaxThreads = 1024;
constexpr uint64_t kMaxRegisters = 255; // per thread, compute capability 9.0
constexpr size_t kMaxNameLength = 256;
constexpr size_t kMaxDependencies = 10'000; // of one stage
constexpr uint64_t kMaxSlots = 65536;       // of one buffer ring
/// Streams one pipeline may use, declared and automatic: CUDA has at most 32
/// hardware queues, and the reduction's cost grows with the streams.
constexpr size_t kMaxStreams = 256;
constexpr size_t kMaxDevices = 64; // of one pipeline (one process's GPUs)
/// Dependencies between stage instances after unrolling, per pipeline and
/// per file: each costs bytes in every pass (about 20 in all).
constexpr uint64_t kMaxInstanceEdges = 30'000'000;
/// A CSR's 32-bit offsets (compiler/schedule/Instances.h) hold any graph of
/// a pipeline: its dependencies plus an edge or two per instance.
static_assert(kMaxInstanceEdges + 3 * kMaxStageInstances < (uint64_t(1) << 32),
              "CSR offsets fit 32 bits");
/// Stage instances in one file, all pipelines together: every schedule of
/// a file is kept until its output is written.
constexpr uint64_t kMaxFileInstances = kMaxStageInstances;
/// Vector-clock entries the reduction and the race check keep: the window
/// of instances a dependency can reach back over (its `@prev` distance, in
/// iterations, times the stages of one), times the streams. 4 bytes each at
/// most: 256 MiB.
constexpr uint64_t kMaxClockEntries = uint64_t(1) << 26;

/// What the scheduler may make of a pipeline beyond what it declares, for
/// the limits that bound memory: the automatic streams it may create
/// (--max-streams, the hardware queues and the assignment method decide).
/// The language versions pipec reads (a file's `version N;`; the newest
/// when it has none).
constexpr unsigned kOldestVersion = 1, kNewestVersion = 7;

struct SemaOptions {
  unsigned automaticStreams = kMaxStreams;
};

namespace sema {

/// What bounds a pipeline's cost once unrolled: its instances, the
/// dependencies between them, and the vector clocks the reduction and the
/// race check keep over the instances a dependency can reach back over.
struct PipelineSize {
  uint64_t stages = 0, iterations = 1;
  uint64_t edges = 0;                            ///< between instances, after unrolling
  uint64_t distance = 0;                         ///< the farthest @prev
  const program::Dependency *farthest = nullptr; ///< that @prev, if any
  uint64_t spacing = 1; ///< the most iterations a conditional stage skips
  uint64_t streams = 0; ///< declared, and those pipec would make
};
/// A checked pipeline's size; `automaticStreams` are counted where a stage
/// has no stream.
PipelineSize measure(const program::Pipeline &pipeline, uint64_t automaticStreams);
/// Why a pipeline of this size cannot be unrolled within the limits (the
/// message sema gives at the pipeline, saying what to change); none when
/// it can. The file's totals are the caller's.
std::optional<std::string> sizeProblem(const PipelineSize &size);

} // namespace sema

/// Checks every pipeline of `file` that parsed cleanly and reports all errors
/// and warnings, in source order. The result is meaningful only when no error
/// was reported (diags.hadError() is false).
/// `sync inferred`: adds to each stage the dependencies its buffer accesses
/// need (docs/language.md, version 2), each marked with its buffer, skipping any
/// already there. Sema calls it; so does advise, on changed programs.
void inferDataDependencies(program::Pipeline &pipeline);

program::Program analyze(const ast::File &file, const DeviceProfile &profile,
                         DiagnosticEngine &diags, const SemaOptions &options = {});

/// The same, consuming the AST: each stage's syntax is freed as soon as it
/// is converted, and each pipeline's once it is done, so that a large file's
/// AST and its program are not held in full together. `file` keeps its
/// pipelines' names and settings, not their stages.
program::Program analyze(ast::File &&file, const DeviceProfile &profile,
                         DiagnosticEngine &diags, const SemaOptions &options = {});

} // namespace pipec

#endif // PIPEC_SEMA_SEMA_H
