//===- StreamAssignment.h - Streams for stages declared without `on` ------===//
//
// Nimble's method (Kwon et al., NeurIPS 2020): a maximum matching on the
// reduced dependency graph of the unpinned stages splits them into chains
// whose consecutive stages are direct dependencies, so a chain needs no event
// inside it. Chains that are already ordered (the tail of one reaches the
// head of the next) are then folded onto one stream, which adds no ordering
// that was not there (Dilworth). Only when more streams than --max-streams
// would be needed is a chain put behind an unordered one: the stream whose
// tail is expected to finish first. Stages pinned with `on` keep their stream.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SCHEDULE_STREAMASSIGNMENT_H
#define PIPEC_SCHEDULE_STREAMASSIGNMENT_H

#include "compiler/program/Program.h"
#include "compiler/schedule/Instances.h"

#include <cstdint>
#include <vector>

namespace pipec {

/// The stage-level dependency graph of one iteration (same-iteration
/// dependencies only), over positions in issue order, and its reduction.
struct StageGraph {
  /// `order`: the stages in issue order (issueOrder(pipeline)).
  StageGraph(const program::Pipeline &pipeline, llvm::ArrayRef<uint32_t> order);

  std::vector<uint32_t> order; ///< position -> stage

  CSR deps;    ///< declared, per position
  CSR reduced; ///< transitive reduction, per position
  /// Parallel to deps.targets: 1 if the edge survived the reduction.
  std::vector<uint8_t> declaredKept;
  /// Whether `reduced` is exact. A pipeline too wide for the reachability
  /// index (more than kMaxClockCells clock entries) keeps every edge.
  bool exact = true;
  /// Chains in the cover the index uses (at least the graph's width).
  uint32_t numChains = 0;

  /// Whether position u reaches position v (u != v) through dependencies.
  /// Conservative (direct edges only) when not exact.
  bool reaches(uint32_t u, uint32_t v) const;

  static constexpr uint64_t kMaxClockCells = uint64_t(1) << 22; // 16 MiB

private:
  std::vector<uint32_t> chainOf, clocks, positionOf1, chainLength;
  std::vector<uint64_t> rowBegin; ///< clocks of position v: [rowBegin[v], rowBegin[v+1])
};

struct StreamPlan {
  std::vector<program::Stream> streams; ///< declared ones, then auto0, auto1...
  std::vector<uint32_t> streamOfStage;  ///< indexed by stage

  // What the assignment did, for the report.
  uint32_t autoStages = 0;
  uint32_t matchingChains = 0;     ///< chains from the matching (Nimble)
  uint64_t autoEdges = 0;          ///< reduced edges between unpinned stages
  uint64_t matchingBound = 0;      ///< at least this many need an event
  uint64_t crossStreamAutoEdges = 0; ///< ... and this many do, as assigned
  uint32_t forcedOrderings = 0;    ///< chains queued behind unordered ones
};

/// `maxStreams` caps the total number of streams (declared and automatic);
/// at least one automatic stream is made when a stage needs one.
StreamPlan assignStreams(const Instances &instances, const StageGraph &graph,
                         unsigned maxStreams, int normalPriority);

} // namespace pipec

#endif // PIPEC_SCHEDULE_STREAMASSIGNMENT_H
