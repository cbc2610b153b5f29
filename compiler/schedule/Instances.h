//===- Instances.h - A pipeline unrolled into stage instances -------------===//
//
// Instance ids are positions in issue order: iteration by iteration, and
// within an iteration the topological order that prefers declaration order
// (docs/language.md, "Issue order"). When every stage runs in every iteration,
// instance `id` is stage `stageOrder[id % stagesPerIteration]` of iteration
// `id / stagesPerIteration`. When some run only in some iterations
// (`[first]`, `[last]`, `[every=K]`), an iteration has only the instances
// of the stages that run in it, and each instance's stage and iteration are
// looked up instead.
// Declared dependencies are kept in CSR form: the predecessors of instance v
// are depTargets[depBegin[v] .. depBegin[v+1]), each smaller than v. A
// dependency on a stage that does not run in the iteration it names is on
// its latest instance before (none if it has not run yet).
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SCHEDULE_INSTANCES_H
#define PIPEC_SCHEDULE_INSTANCES_H

#include "compiler/program/Program.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace pipec {

/// Compressed sparse rows: the neighbours of v are targets[begin[v]..begin[v+1]).
/// Offsets are 32-bit: a pipeline's edges, with stream order and host order
/// added, stay far below 2^32 (Sema.h's limits); at 10^7 instances that
/// halves the largest arrays.
struct CSR {
  std::vector<uint32_t> begin{0};
  std::vector<uint32_t> targets;

  size_t rows() const { return begin.size() - 1; }
  llvm::ArrayRef<uint32_t> row(size_t v) const {
    return {targets.data() + begin[v], targets.data() + begin[v + 1]};
  }
  size_t edges() const { return targets.size(); }
};

/// The issue order of a pipeline's stages within one iteration: repeatedly
/// the earliest-declared stage whose same-iteration dependencies are issued.
std::vector<uint32_t> issueOrder(const program::Pipeline &pipeline);

class Instances {
public:
  explicit Instances(const program::Pipeline &pipeline);

  const program::Pipeline &pipeline() const { return *source; }
  /// The stages of the pipeline: the instances of an iteration where every
  /// stage runs.
  uint32_t stagesPerIteration() const { return perIteration; }
  uint32_t iterations() const { return source->iterations; }
  size_t size() const {
    return conditional ? idStage.size() : size_t(perIteration) * source->iterations;
  }
  /// Whether some stage runs only in some iterations.
  bool hasConditionalStages() const { return conditional; }

  uint32_t stageOf(uint32_t id) const {
    return conditional ? idStage[id] : stageOrder[id % perIteration];
  }
  uint32_t iterationOf(uint32_t id) const {
    return conditional ? idIteration[id] : id / perIteration;
  }
  /// Whether stage `stage` has an instance in iteration `iteration`.
  bool runsIn(uint32_t stage, uint32_t iteration) const {
    return source->stages[stage].runs.runsIn(iteration, source->iterations);
  }
  /// The instance of stage `stage` in iteration `iteration` (runsIn).
  uint32_t idOf(uint32_t stage, uint32_t iteration) const;
  /// No predecessor -- a dependency, the previous instance on a stream or
  /// the last cpu stage before -- lies more than this many instances
  /// before its successor: the window the vector clocks keep.
  size_t reach() const { return reachBound; }
  const program::Stage &stage(uint32_t id) const { return source->stages[stageOf(id)]; }
  /// `X` with one iteration, `X[i]` with more.
  std::string name(uint32_t id) const;
  /// The same, written: `os << name(id)` without building a string.
  void writeName(llvm::raw_ostream &os, uint32_t id) const;

  /// Declared dependencies after unrolling (no reduction), ascending.
  const CSR &deps() const { return depGraph; }
  /// The stages in issue order within one iteration.
  llvm::ArrayRef<uint32_t> order() const { return stageOrder; }
  /// The farthest `@prev(k)` of any dependency (0 when none).
  uint32_t maxDistance() const { return farthest; }
  /// For edge e of deps() (an index into its targets): -1 when declared,
  /// else the buffer it was inferred from (sync inferred).
  int32_t inferredFrom(uint64_t e) const { return edgeBuffer.empty() ? -1 : edgeBuffer[e]; }

private:
  /// A dependency of the stage at a position: `distance` iterations back,
  /// on the stage at `position`.
  struct Target {
    uint32_t distance, position;
    int32_t buffer; ///< -1 declared, else inferred from this buffer
  };
  void unrollConditional(const std::vector<std::vector<Target>> &targetsOf);

  const program::Pipeline *source;
  uint32_t perIteration;
  bool conditional = false;
  size_t reachBound = 0;
  /// With conditional stages: each instance's stage and iteration, and
  /// each stage's instances in order with the iterations they are in.
  std::vector<uint32_t> idStage, idIteration;
  std::vector<std::vector<uint32_t>> runIds, runIterations;
  std::vector<uint32_t> stageOrder; ///< position -> stage
  std::vector<uint32_t> positionOf; ///< stage -> position
  uint32_t farthest = 0;
  bool anyInferred = false;
  CSR depGraph;
  std::vector<int32_t> edgeBuffer; ///< parallel to depGraph.targets, if any inferred
};

} // namespace pipec

#endif // PIPEC_SCHEDULE_INSTANCES_H
