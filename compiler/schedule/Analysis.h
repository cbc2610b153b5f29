//===- Analysis.h - What a schedule can gain, and what holds it back ------===//
//
// The seed notebook's figures (sequential time, the per-stream "pipelined"
// bound, overlap ratio, cross-stream dependencies, event density), the true
// critical path through dependencies and stream order, the stream-order edges
// that lie on it, and whether a CUDA graph would pay.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SCHEDULE_ANALYSIS_H
#define PIPEC_SCHEDULE_ANALYSIS_H

#include "compiler/program/DeviceProfile.h"
#include "llvm/ADT/STLExtras.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pipec {

struct Schedule;

/// A stream-order edge (not a declared dependency) on the critical path.
struct StreamOrderDelay {
  uint32_t from, to; ///< instances, consecutive on one stream
  uint32_t stream;
  double delayUs; ///< how much later `to` starts than its dependencies allow
  /// What really holds `to` back, when not stream order alone: a buffer
  /// both touch, one writing, under `sync declared` (the order is what keeps
  /// it race-free: moving either stage would race), or one copy engine for
  /// both (copies of one direction run one at a time on any stream).
  enum Reason : uint8_t { StreamOrder, Buffer, CopyEngine } reason = StreamOrder;
  uint32_t buffer = 0; ///< Buffer: index into Pipeline::buffers
};

/// A StreamOrderDelay in words, its real reason included (compile's note,
/// advise's).
std::string describeStreamOrderDelay(const Schedule &schedule, const StreamOrderDelay &d);
/// The stream-order edges on the critical path as notes, the same in every
/// command: one per stream (its longest delay, and how many more it has),
/// streams by their longest delay, at most `most` and a line counting the
/// rest; none for a stage with no dependency (nothing to compare with: it
/// waits for what its stream ran before it, as written).
std::vector<std::string> describeStreamOrderDelays(const Schedule &schedule, size_t most = 5);

/// Does a CUDA graph pay? One answer, from the device model simulating both
/// lowerings (model/GraphCost), that compile, run and advise print.
/// The smallest gain worth a change, a suggestion, a note or a switch of
/// lowering: 2% of what it is measured against, and 1 us.
constexpr double kMinGainFraction = 0.02;
constexpr double kMinGainUs = 1.0;

/// Whether going from `before` to `after` gains at least `fraction` of
/// `before` and `us`.
inline bool worthIt(double before, double after, double fraction = kMinGainFraction,
                    double us = kMinGainUs) {
  double gain = before - after;
  return gain >= us && gain >= fraction * before;
}

struct GraphAdvice {
  bool evaluated = false; ///< false until a cost model answered
  /// Pays back within the replays assumed, and a replay gains what is
  /// worth a change (worthIt): --lower=auto picks the graph only then.
  bool suitable = false;
  /// A stage no graph can hold, whatever it would gain (a pageable copy:
  /// its call is synchronous, and stream capture refuses it); empty when
  /// none.
  std::string heldOutBy;
  std::vector<std::string> reasons;
  double streamsReplayUs = 0; ///< host's first call to last end, as streams
  double graphReplayUs = 0;   ///< ... as one graph launch (+ node updates)
  double oneTimeUs = 0;       ///< capture, instantiation and first upload, once
  /// The host's time per replay in `issue=` dispatch and API calls, as
  /// streams and as a graph: what a graph gains on the host (0 and 0 where
  /// the runs did not say).
  double streamsHostCallsUs = 0, graphHostCallsUs = 0;
  /// Replays after which the graph has paid back its one-time cost; 0 when
  /// it never does.
  uint64_t breakEvenReplays = 0;
  /// The graph lowering's segments and the distinct graphs among them: an
  /// iterated pipeline that synchronises each iteration is one graph
  /// captured once and replayed each iteration (0 and 0: not said). Then
  /// the graph pays back after breakEvenIterations iterations (each saves
  /// a replay's saving over `iterations`); 0 otherwise.
  uint32_t segments = 0, graphs = 0, iterations = 1;
  uint64_t breakEvenIterations = 0;
  /// Iterations of each lowering's replay the device model skipped ahead
  /// (a settled periodic schedule; compile --stats says so).
  uint64_t streamsExtrapolated = 0, graphExtrapolated = 0;
  /// How near the line the verdict is: the profile's graph_launch_us the
  /// verdict was given with, and the value past which it flips (below it
  /// for "not worth it", above for "worth it"; found on the device model
  /// within a factor kFlipSearchFactor of the profile's; negative: it does
  /// not flip there, or was not searched).
  double graphLaunchUs = 0;
  double flipsAtGraphLaunchUs = -1;
};

/// How far from the profile's graph_launch_us the graph verdict looks for
/// the value that flips it (a factor either way).
constexpr double kFlipSearchFactor = 3;

/// A lower bound on the makespan that holds in every lowering, and what it
/// stands for.
struct Bound {
  const char *key;   ///< the JSON's name: "critical_path", "sm_area", ...
  std::string words; ///< "the H2D copy engine", "stream 'copy'", ...
  double us = 0;
};

/// One declared device's share of the step (version 4), on the same
/// timeline as the critical path: every instance as early as dependencies
/// and stream order allow, no overheads.
struct DeviceUse {
  std::string name;
  double busyUs = 0;         ///< the union of its streams' work
  double bubbleFraction = 0; ///< its idle share of the critical path's span
  /// Its communication (the peer copies it sends, its parts of
  /// collectives), and how much of it other work on the device covers.
  double commUs = 0;
  double hiddenCommUs = 0;
};

struct Analysis {
  double sequentialUs = 0;
  double criticalPathUs = 0;
  double streamBoundUs = 0;
  double lowerBoundUs = 0;
  double overlapRatio = 0;
  uint64_t crossStreamDependencies = 0;
  uint64_t redundantDependencies = 0;
  double eventDensity = 0;
  /// What the declared buffers take, every slot counted.
  uint64_t deviceBytes = 0, hostBytes = 0;
  std::vector<uint32_t> criticalPath; ///< instances, first to last
  std::vector<StreamOrderDelay> streamOrderOnCriticalPath;
  std::vector<double> streamBusyUs; ///< per stream
  /// The cpu stages' work on each device's host thread (one entry with
  /// one device).
  std::vector<double> hostBusyUs;
  std::vector<DeviceUse> devices; ///< per declared device; none when none is
  /// Named lower bounds (critical path, busiest stream, SM area, each copy
  /// engine, the host-function executor); lowerBoundUs is the largest, the
  /// binding one.
  std::vector<Bound> bounds;
  size_t binding = 0; ///< index into bounds
  GraphAdvice graphAdvice;
};

Analysis analyzeSchedule(const Schedule &schedule, const DeviceProfile &profile);

/// Each device's busy time, bubble (its idle share of `stepUs`) and
/// communication, from each instance's [start, end) as `spanOf` gives it
/// (instances on the host thread are not asked; an empty span counts for
/// nothing): the analysis's devices on its timeline, a run's on its own.
/// Communication is program::isCommunication's, by the stage's name, or
/// `communicates` where given (an imported op by its recorded name).
std::vector<DeviceUse>
deviceUses(const Schedule &schedule,
           llvm::function_ref<std::pair<double, double>(uint32_t)> spanOf, double stepUs,
           llvm::function_ref<bool(uint32_t)> communicates = nullptr);

/// The graph verdict in words, the same in every command: "pays back its
/// one-time cost of 1.2 ms after 14 replays" or why it never does.
std::vector<std::string> describeGraphAdvice(const GraphAdvice &advice, unsigned replays);

} // namespace pipec

#endif // PIPEC_SCHEDULE_ANALYSIS_H
