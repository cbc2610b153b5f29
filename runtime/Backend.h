//===- Backend.h - Running a schedule, on a GPU or on the device model ----===//
//
// A backend executes a schedule in one lowering and reports what happened:
// each stage instance's start and end in one representative replay, the host
// time spent issuing it, and the timings of the seed notebook's "capture vs
// replay" question. The simulator and the CUDA backend return the same thing.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_BACKEND_H
#define PIPEC_RUNTIME_BACKEND_H

#include "compiler/program/DeviceProfile.h"
#include "compiler/schedule/Schedule.h"
#include "runtime/timing/Timing.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace pipec::runtime {

struct RunOptions {
  unsigned replays = 100;
  bool priorities = true; ///< false: every stream at one priority
  bool recordHost = true; ///< keep the host's calls (for traces and reports)
  /// The model may skip ahead where a periodic schedule has settled (see
  /// sim::ModelOptions::extrapolate); a GPU runs everything anyway.
  bool extrapolate = false;
  /// From this many instances, the what-ifs that want timings alone (the
  /// graph verdict, advise's measures) let the model skip ahead: equal up
  /// to rounding, and a long periodic replay costs what its first
  /// iterations do; a smaller one is simulated whole.
  static constexpr size_t kSkipAheadFrom = size_t(1) << 16;
  /// false: only the timings are wanted, not each instance's start and end
  /// (the model then keeps no starts, and nothing is checked against them).
  bool timeline = true;
  /// On a GPU: how the representative replay's timeline is measured.
  TimingRequest timing = TimingRequest::Auto;
};

/// The run result's `timings_us` (docs/scheduling.md).
struct Timings {
  double capture = 0, instantiate = 0, firstLaunch = 0;
  double replayMedian = 0, replayP95 = 0, submitMedian = 0;
};

/// Where the host thread's time went in one replay (the run result's
/// `host_us`): `cpu` stages, `issue=` dispatch, API calls, and blocked in
/// synchronisations or on a full launch queue.
struct HostTime {
  double cpu = 0, issue = 0, api = 0, blocked = 0;
};

struct HostCall {
  double start, end;   ///< microseconds from the replay's first host call
  const char *what;    ///< "launch", "record", "wait", "graph launch", ...
  uint32_t instance;   ///< UINT32_MAX when none
  uint32_t thread = 0; ///< the device whose host thread made it
};

/// A share of the gap between a run and its lower bound, and its cause.
struct GapPart {
  std::string cause; ///< "launch and dispatch on the host", ...
  double us = 0;     ///< what taking it away alone saves
  /// Its fair share of taking every cause away (its Shapley value: the
  /// shares add up to "all of them at once"); the last two parts' own.
  double shareUs = 0;
  /// A cause that saves little alone: the one whose company saves most
  /// with it (its short words), or empty.
  std::string with;
  /// The profile key the cost rests on, with its value, where that is
  /// pipec's default (not measured, not given): "host_func_latency_us =
  /// 100.0 us"; else empty.
  std::string assumed;
};

/// One lowering of one pipeline, run.
struct LoweringRun {
  const Schedule *schedule = nullptr;
  Lowering lowering = Lowering::Streams;
  unsigned replays = 0;
  Timings timings;
  HostTime hostUs;
  /// Several devices (the device model): each device's host thread's time;
  /// hostUs adds them up. Empty otherwise.
  std::vector<HostTime> hostThreadsUs;
  /// Per instance, microseconds from the replay's first host call.
  std::vector<double> start, end;
  std::vector<HostCall> host;
  double firstStartUs = 0; ///< the earliest start: the timeline's origin
  double makespanUs = 0;   ///< last end - first start
  uint64_t violations = 0; ///< measured from start and end
  /// Several devices: each one's busy time and bubble (its idle share of
  /// the makespan) and communication, from the timeline (summarise).
  std::vector<DeviceUse> devices;
  uint64_t simulatedEvents = 0;
  uint64_t extrapolatedIterations = 0; ///< the model's, skipped ahead
  double runSeconds = 0;               ///< wall time this lowering's run took (runAll)
  /// How the timeline was measured; timingNote says why a GPU run fell back
  /// from CUPTI to events (empty otherwise).
  TimingMethod timing = TimingMethod::Model;
  std::string timingNote;
  /// The clocks' slack the dependency check allows (violationSlackUs).
  double violationSlackUs = 1e-3;
  /// What a reader of the timings should know (a kernel too short for the
  /// device's timer, a graph check that could not be made, ...).
  std::vector<std::string> notes;
  /// The stream lowering: makespan - lower bound, cause by cause, measured
  /// on the device model (run fills it; model/Gap.cpp).
  std::vector<GapPart> gap;
  /// --objective when it is not the makespan: its words and value.
  std::string objectiveWords;
  double objectiveUs = 0;
  /// CUDA graph lowering: the explicit graph (exactly the schedule's edges)
  /// is built and instantiated too; replays run it.
  double explicitBuildUs = 0, explicitInstantiateUs = 0;
  /// The graph lowering: its segments, and the distinct graphs among them
  /// (identical segments of an iterated pipeline are one graph, captured,
  /// instantiated and uploaded once: compiler/schedule/GraphShapes.h). The
  /// one-time cost in `timings` is those graphs'.
  uint32_t segments = 0, graphs = 0;
};

class Backend {
public:
  virtual ~Backend();
  /// "sim" or "cuda".
  virtual const char *name() const = 0;
  /// The device, in words.
  virtual std::string device() const = 0;
  virtual llvm::Expected<LoweringRun> run(const Schedule &schedule, Lowering lowering,
                                          const RunOptions &options) = 0;
  /// Runs each of `lowerings` of one schedule, in that order. A backend may
  /// order the work across them: the CUDA backend times every lowering's
  /// replays before it takes any timeline, so that CUPTI cannot slow one
  /// side of a comparison only. By default, run() for each.
  virtual llvm::Expected<std::vector<LoweringRun>> runAll(const Schedule &schedule,
                                                          llvm::ArrayRef<Lowering> lowerings,
                                                          const RunOptions &options);
};

/// Stage pairs of the timeline where a stage started more than `slackUs`
/// before one of its dependencies, or the previous stage on its stream, had
/// ended.
uint64_t countViolations(const Schedule &schedule, const std::vector<double> &start,
                         const std::vector<double> &end, double slackUs = 1e-3);

/// Fills firstStartUs, makespanUs and violations from start and end.
void summarise(LoweringRun &run);

/// The median and 95th percentile of `samples` (nearest rank).
std::pair<double, double> medianAndP95(std::vector<double> samples);

} // namespace pipec::runtime

#endif // PIPEC_RUNTIME_BACKEND_H
