//===- StepBuild.h - The import of a step, phase by phase -----------------===//
//
// selectStep (Step.h) runs these phases in order, each over one Builder
// that holds the step being made and what the later phases read:
//
//   StepSpan.cpp       the recording's launch times; the step's span; its ops
//                      and the previous step's backlog still running in it
//   StepHost.cpp       the host's calls in the span (polls folded into one
//                      sync), and how long a launch call takes by itself
//   StepWalk.cpp       the host's timeline walked: launches (dispatch, graph
//                      launches, blocking copies, a full launch queue), calls
//                      that took time, syncs, host work
//   StepOrderings.cpp  the orderings: stream order, stream waits (recorded,
//                      or a safe superset), what each host sync waited for
//   StepWaits.cpp      the waits the trace does not hold, inferred from its
//                      timeline; the dependencies others imply taken out
//
// Only the import's own files include this header.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_STEPBUILD_H
#define PIPEC_RUNTIME_IMPORT_STEPBUILD_H

#include "runtime/import/CorrelationIndex.h"
#include "runtime/import/Step.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>
#include <map>
#include <optional>
#include <vector>

namespace pipec::importer::step {

/// How far apart two of the trace's times may be and still be one instant
/// (Kineto writes microseconds, some with a decimal or three).
constexpr double kClockSlackUs = 0.5;
/// The least host time before a sync written as a `cpu` stage of its own
/// (less is the sync stage's own time).
constexpr double kMinHostWorkUs = 10;
/// How long after a GPU op ended another may begin and still be taken to
/// have waited for it (the device's own start-up, not anything else).
constexpr double kGpuWaitSlackUs = 20;
/// The least back-to-back gaps between a stream's ops that measure the
/// device's own (fewer: the profile's default).
constexpr uint64_t kLeastGapSamples = 50;
/// The least wait of an op past everything it is known to follow that is
/// taken to be a wait for something else (a shorter one is the device's).
constexpr double kUnexplainedIdleUs = 100;

/// When each op of the recording was launched. An op whose call is not in
/// the trace was launched between the recorded calls the runtime numbered
/// just before and just after it (correlations count calls in the order
/// they were made). With none of the step's calls numbered before it, and
/// one numbered after it, it was launched before the step's first recorded
/// call: by the previous step, or before the profiler began (the ops of a
/// trace's first step that ran on from the step before).
class LaunchTimes {
public:
  explicit LaunchTimes(const Trace &trace);
  /// Its call's start; without its call in the trace, where it started
  /// (what the host did then is not known).
  static double of(const GpuOp &op) { return op.launchTs >= 0 ? op.launchTs : op.ts; }
  /// The earliest it was launched: its call's start; without its call, the
  /// start of the recorded call numbered before it (or its own start).
  double earliest(const GpuOp &op) const;
  /// Whether it was launched before `t`.
  bool before(const GpuOp &op, double t) const;
  /// Where the host's walk places the launch of an op whose call is not in
  /// the trace: no later than it started, nor than anything numbered after
  /// it was launched (a recorded call, or another such op's start), so that
  /// the launches keep the order the runtime numbered them in.
  double slot(const GpuOp &op) const;

private:
  struct Numbered {
    int64_t correlation;
    double ts, latest; ///< the latest ts up to it
    bool operator<(int64_t c) const { return correlation <= c; }
  };
  /// The first recorded call numbered after an op's correlation.
  std::vector<Numbered>::const_iterator nextCall(const GpuOp &op) const;
  std::vector<Numbered> numbered_;
  std::vector<std::pair<int64_t, double>> bound_; ///< (correlation, earliest from it)
};

/// A host call in the step, all threads together (the runtime takes them
/// one at a time), in time order. 40 bytes: a million calls.
struct HostItem {
  double ts, dur;
  int64_t correlation;
  int64_t op; ///< index into Builder::ops, or -1
  uint32_t name;
  HostCall::Kind kind;
};

/// A host sync the walk found, for the orderings to say what it waited for.
struct PendingSync {
  uint32_t stage;
  int64_t correlation;
  double callEnd;
};

/// The step as it is made, and what the phases hand on.
struct Builder {
  Builder(Trace &trace, ImportedStep &out) : trace(trace), out(out), launches(trace) {}

  Trace &trace;
  ImportedStep &out;
  LaunchTimes launches;
  /// The reader's map from a call's correlation to the call, as an index
  /// over the ids' range (a quarter of the hash map's bytes when CUPTI's
  /// ids fill it): it is held through the step's whole walk.
  CorrelationIndex callOf;
  /// The step's host span (the whole trace's: infinite); `to` is past it.
  double from = -INFINITY, to = INFINITY;
  double origin = 0;                                 ///< the first op's start (out.originTs)
  double last = -INFINITY;                           ///< the last op's end
  std::vector<const GpuOp *> ops;                    ///< the step's, in issue order
  std::vector<const GpuOp *> backlog;                ///< issued before it, still running in it
  std::map<int64_t, std::vector<uint32_t>> onStream; ///< Op stages, in issue order
  double latestEnd = -INFINITY; ///< the latest end of an op stage so far (from the origin)
  std::vector<double> ends;     ///< every op's end, on the trace's clock, in order
  std::vector<HostItem> items;
  std::vector<PendingSync> syncs;
  /// A launch call's own cost: the step's median of the calls that found
  /// the queue short of full.
  double launchCallUs = 0;

  /// Issue order: by their calls' correlation ids; one call's ops (a graph
  /// launch's) in the order they ran.
  bool issueOrder(const GpuOp *a, const GpuOp *b) const;
  /// Launched by a call that launched several (a graph launch).
  bool graphLaunched(const GpuOp &op);
  /// Names: foo, foo_2, ... (the second foo is not foo_2 again).
  std::string uniqueName(const std::string &base);
  /// A kernel's short name, worked out once for all its launches.
  std::string shortNameOf(const GpuOp &op);
  /// A stage for `op` (on its stream, in issue order).
  uint32_t addOp(const GpuOp &op, bool isBacklog);
  /// A stage of the host's at `at` (the trace's clock) for `us`.
  uint32_t addCpu(ImportedStage::Kind kind, HostCall::Kind call, double at, double us,
                  const std::string &base = std::string());
  /// Host work from `at` for `us` (the trace's clock), named for the
  /// innermost range of the host's that holds most of it.
  uint32_t
  addHostWork(double at, double us,
              ImportedStage::HostWorkAt where = ImportedStage::HostWorkAt::BetweenCalls);
  /// What only naming needed goes.
  void forgetNames();
  /// How many ops each call launched (a graph launch, several: all of
  /// them, whether they ran in the step or before it, its call recorded or
  /// not); freed after the walk.
  CorrelationIndex opsOfCorrelation;

private:
  llvm::StringMap<unsigned> used_; ///< per base name: the last suffix tried
  llvm::StringSet<> taken_;        ///< every stage name given
  std::vector<std::string> kernelNames_;
  /// The trace's ranges but the steps, by start (made when host work first
  /// asks), and each range name's index in out.hostRanges.
  std::vector<const Range *> rangesByStart_;
  bool rangesSorted_ = false;
  std::vector<uint32_t> hostRangeOf_;
};

/// `text` as a stage name: letters, digits and '_', at most 40 of them,
/// `prefix` before it when it would not start with a letter, `suffix` after
/// it when it is a reserved word of the language.
std::string identifier(llvm::StringRef text, llvm::StringRef prefix, llvm::StringRef suffix);

// The phases, in the order selectStep runs them.

/// StepSpan.cpp: the step's span (ProfilerStep#`number`; the last that
/// launched GPU work of its own; the whole trace without steps), then its
/// ops in issue order, its origin and the backlog.
llvm::Error chooseSpan(Builder &b, std::optional<int64_t> number);
llvm::Error collectOps(Builder &b);
/// StepHost.cpp: the host's calls in the span, polls folded; room reserved
/// for every stage the walk can add; the backlog's stages.
void gatherHostCalls(Builder &b);
/// StepWalk.cpp: the walk over the host's timeline, and the device's own
/// gap between a stream's back-to-back ops.
void walkHost(Builder &b);
void measureStreamGap(Builder &b);
/// StepOrderings.cpp: the streams' priorities and their limit, then every
/// ordering the recording states or implies.
llvm::Error orderStages(Builder &b);
/// StepWaits.cpp: the waits the trace does not hold; then only the
/// dependencies the others do not imply, and the step's ops taken from
/// the trace.
void inferWaits(Builder &b);
void finishStep(Builder &b);

} // namespace pipec::importer::step

#endif // PIPEC_RUNTIME_IMPORT_STEPBUILD_H
