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

#include "compiler/program/DeviceProfile.h"
#include "compiler/program/Program.h"
#include "compiler/schedule/Instances.h"

#include <cstdint>
#include <string>
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
  /// Whether `reduced` is exact (findRedundantDependencies completed within
  /// its budget); when not, it keeps every edge.
  bool reductionExact = true;
};

/// Which position reaches which in a StageGraph, for the matching's folding
/// of chains: a greedy chain cover with a vector clock per position. Built
/// only where it is asked (the matching), as it costs O(positions x width).
class ReachIndex {
public:
  explicit ReachIndex(const StageGraph &graph);

  /// Whether position u reaches position v (u != v) through dependencies.
  /// Conservative (direct edges only) when not indexed.
  bool reaches(uint32_t u, uint32_t v) const;

  /// Whether reaches() is exact. A pipeline too wide for the index (more
  /// than kMaxClockCells clock entries) answers by direct edges.
  bool indexed = true;
  static constexpr uint64_t kMaxClockCells = uint64_t(1) << 22; // 16 MiB

private:
  const StageGraph &graph;
  std::vector<uint32_t> chainOf, clocks, positionOf1, chainLength;
  std::vector<uint64_t> rowBegin; ///< clocks of position v: [rowBegin[v], rowBegin[v+1])
};

/// How stages without `on` get their streams (`--assign=`).
enum class AssignMethod {
  Makespan,   ///< default: the fastest on the device model, then fewest syncs
  Matching,   ///< Nimble: fewest syncs that add no ordering
  RoundRobin, ///< stage i (in issue order) on stream i mod K
  Levels,     ///< Taskflow: dependency level mod K
};
const char *spelling(AssignMethod method);
bool parseAssignMethod(llvm::StringRef text, AssignMethod &out);

/// Runs a program whose every stage has a stream and says how long it took:
/// the makespan and each instance's start and end (instances in issue
/// order). The device model implements it (model/AssignmentCost.h),
/// so that the compiler can choose an assignment by what it costs.
class AssignmentEvaluator {
public:
  virtual ~AssignmentEvaluator();
  virtual double run(const program::Pipeline &pinned, std::vector<double> &start,
                     std::vector<double> &end) const = 0;
};

/// streamOfStage of a `cpu` stage: it runs on the host thread, on no stream.
constexpr uint32_t kHostStream = UINT32_MAX;

struct StreamPlan {
  std::vector<program::Stream> streams; ///< declared ones, then auto0, auto1...
  std::vector<uint32_t> streamOfStage;  ///< indexed by stage (kHostStream: cpu)

  AssignMethod method = AssignMethod::Makespan;
  /// The makespan method: the model's makespan of the assignment chosen,
  /// and how many assignments it ran (0 without an evaluator).
  double modelMakespanUs = 0;
  uint32_t evaluations = 0;
  std::string chosenFrom; ///< which candidate won ("list scheduling", ...)

  // What the assignment did, for the report.
  uint32_t autoStages = 0;
  uint32_t matchingChains = 0;       ///< chains from the matching (Nimble)
  uint64_t autoEdges = 0;            ///< reduced edges between unpinned stages
  uint64_t matchingBound = 0;        ///< at least this many need an event
  uint64_t crossStreamAutoEdges = 0; ///< ... and this many do, as assigned
  uint32_t forcedOrderings = 0;      ///< chains queued behind unordered ones
};

/// Nimble's matching (AssignMethod::Matching). `maxStreams` caps the total
/// number of streams (declared and automatic); at least one automatic stream
/// is made when a stage needs one.
StreamPlan assignStreams(const Instances &instances, const StageGraph &graph,
                         unsigned maxStreams, int normalPriority);

struct AssignOptions {
  AssignMethod method = AssignMethod::Makespan;
  /// Automatic streams at most: min(--max-streams, hardware queues) less the
  /// declared streams in use, at least 1.
  unsigned autoStreams = 8;
  unsigned maxStreams = 8; ///< for the matching
  const AssignmentEvaluator *evaluator = nullptr;
};

/// Any method. Makespan: list scheduling in issue order (each stage on the
/// stream where it would finish first, on a model of streams, copy engines
/// and the host-function executor), then, with an evaluator, the baselines
/// run too and a local search moves the stages that stream order holds back
/// while the model's makespan improves; the fastest wins, fewer
/// cross-stream edges breaking ties. Deterministic.
StreamPlan assignStreams(const Instances &instances, const StageGraph &graph,
                         const DeviceProfile &profile, const AssignOptions &options);

} // namespace pipec

#endif // PIPEC_SCHEDULE_STREAMASSIGNMENT_H
