//===- Schedule.h - A pipeline lowered to streams and events, or a graph --===//
//
// The result of compiling one pipeline: its stage instances in issue order,
// the streams they run on, the transitive reduction of dependencies and
// stream order, and either the host's calls (stream lowering) or the graph's
// edges (graph lowering), with the analysis of what the schedule can gain.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SCHEDULE_SCHEDULE_H
#define PIPEC_SCHEDULE_SCHEDULE_H

#include "compiler/program/DeviceProfile.h"
#include "compiler/program/Program.h"
#include "compiler/schedule/Analysis.h"
#include "compiler/schedule/Instances.h"
#include "compiler/schedule/Reduction.h"
#include "compiler/schedule/StreamAssignment.h"

#include <memory>
#include <vector>

namespace pipec {

enum class Lowering { Streams, Graph };
enum class LoweringChoice { Streams, Graph, Auto };

const char *spelling(Lowering lowering);

struct Schedule;

/// Answers "does a CUDA graph pay?" for a schedule planned as streams. The
/// device model implements it (model/GraphCost.h): the compiler asks,
/// so that compile, run and advise give one answer.
class GraphCostModel {
public:
  virtual ~GraphCostModel();
  virtual GraphAdvice verdict(const Schedule &schedule, unsigned replays) const = 0;
};

struct ScheduleOptions {
  LoweringChoice lowering = LoweringChoice::Streams;
  unsigned maxStreams = 8; ///< the default number of hardware queues
  unsigned replays = 100;  ///< how often the schedule is expected to run
  /// Fills analysis.graphAdvice and decides --lower=auto; without one the
  /// advice is "not evaluated" and auto means streams.
  const GraphCostModel *graphCost = nullptr;
  /// Streams for stages without `on`; the evaluator (the device model) lets
  /// the makespan method compare assignments by running them.
  AssignMethod assign = AssignMethod::Makespan;
  const AssignmentEvaluator *assignEvaluator = nullptr;
};

/// The most automatic streams the schedule may create for a pipeline under
/// `options`: min(--max-streams, hardware queues) for the makespan, round
/// robin and levels methods, min(--max-streams, 256) for the matching (it
/// may make a stream per chain). Sema bounds memory with it.
unsigned automaticStreamsBound(const ScheduleOptions &options, const DeviceProfile &profile);

/// One host call. The stream lowering: Launch, Record and Wait on a
/// stream, Cpu (a `cpu` stage, on its host thread), Sync (the host waits
/// for the latest record of `event`) and Join (with several devices: the
/// thread waits until another device's thread has run cpu stage
/// `instance`). A Launch, Record or Wait is its stream's device's thread's
/// call; a Cpu its stage's thread's; a Sync or Join that of the call after
/// it (opThreads). The graph lowering: GraphLaunch of
/// segment `event`, then Record (on the launch stream), Sync and Cpu.
/// Twelve bytes: a schedule of 10^7 instances holds some 2.5 * 10^7 of
/// them. An event or segment number fits 24 bits: there are at most as many
/// as instances (kMaxEventNumber, checked where they are made).
struct Op {
  enum Kind : uint8_t { Launch, Record, Wait, Cpu, Sync, GraphLaunch, Join };
  Op(Kind kind, uint32_t stream, uint32_t instance, uint32_t event)
      : kind(kind), event(event), stream(stream), instance(instance) {}
  Kind kind : 8;
  uint32_t event : 24; ///< Record, Wait, Sync; the segment of a GraphLaunch
  uint32_t stream;     ///< Launch, Record, Wait (kHostStream otherwise)
  uint32_t instance;   ///< launched or run; or the producer the event stands for
};
static_assert(sizeof(Op) == 12, "Op is packed in twelve bytes");
constexpr uint32_t kMaxEventNumber = (1u << 24) - 1;

/// segmentOf of a `cpu` stage: it is in no graph.
constexpr uint32_t kNoSegment = UINT32_MAX;
/// The graph lowering launches segment g on launch stream g % this: a
/// graph launch follows all earlier work of its stream, so segment g waits
/// for segment g - kGraphLaunchStreams to finish, and for nothing else but
/// the orderings it has (Schedule::graphWaits).
constexpr uint32_t kGraphLaunchStreams = 4;

/// From this many instances, the parts of building a schedule that can run
/// beside each other do, on a second thread: the analysis beside the event
/// plan, and the graph verdict's two lowerings. Below it a thread costs
/// more than it saves. Either way the results are the same.
constexpr size_t kParallelFrom = size_t(1) << 16;
/// Whether a schedule of `instances` takes a second thread for them.
bool useSecondThread(size_t instances);

/// Wall time of each phase of building a schedule, in seconds.
struct PhaseTimes {
  double unroll = 0, streams = 0, reduction = 0, events = 0, analysis = 0;
};

struct Schedule {
  /// `graph`: the pipeline's stage graph, if already built (for the lints).
  Schedule(const program::Pipeline &pipeline, const DeviceProfile &profile,
           const ScheduleOptions &options, std::unique_ptr<StageGraph> graph = nullptr);

  const program::Pipeline &pipeline;
  PhaseTimes times; ///< declared first: the initializers below fill it
  Instances instances;
  std::unique_ptr<StageGraph> stageGraph; ///< present when streams were assigned
  StreamPlan streamPlan;
  /// Each instance's stream; a `cpu` stage's is hostChain().
  std::vector<uint32_t> instanceStream;
  /// Of dependencies, stream order and host program order, per instance
  /// (the stream lowering's happens-before; a `cpu` stage's kept device
  /// predecessors are its host synchronisations).
  Reduction reduction;
  Lowering lowering;

  // Stream lowering.
  std::vector<Op> ops;
  uint32_t eventObjects = 0;
  uint64_t records = 0;
  uint64_t waits = 0;
  uint64_t syncs = 0; ///< host synchronisations (Sync ops)
  uint64_t joins = 0; ///< one host thread waiting for another's (Join ops)

  // Graph lowering: the device work between host synchronisations, one
  // graph a segment, each launched on the next of kGraphLaunchStreams
  // streams in turn, so that segments overlap as far as the orderings
  // between them (graphWaits) allow.
  std::vector<uint32_t> segmentOf; ///< per instance (kNoSegment: a cpu stage)
  uint32_t segments = 1;
  /// The graph lowering's host calls per replay (GraphLaunch, Record, Sync,
  /// Cpu), and its event objects. A Record names the producer (`instance`)
  /// whose event-record node the Sync after it waits for: the record is a
  /// node of the producer's segment, not a host call.
  std::vector<Op> graphOps;
  uint32_t graphEventObjects = 0;

  Analysis analysis;

  uint32_t streamOf(uint32_t instance) const { return instanceStream[instance]; }
  /// The chain of the `cpu` stages of a device's host thread in
  /// instanceStream and the reduction: past the streams, one per device.
  uint32_t hostChain(uint32_t device = 0) const {
    return static_cast<uint32_t>(streamPlan.streams.size()) + device;
  }
  /// The chains: the streams, then each device's host thread.
  uint32_t chains() const { return hostChain(static_cast<uint32_t>(pipeline.deviceCount())); }
  /// Whether the instance is a `cpu` stage (on a host thread).
  bool onHost(uint32_t instance) const { return instanceStream[instance] >= hostChain(); }
  /// The device whose host thread issues (or runs) the instance: a `cpu`
  /// stage's, or its stream's device.
  uint32_t threadOf(uint32_t instance) const {
    const uint32_t c = instanceStream[instance];
    return c >= hostChain() ? c - hostChain() : streamPlan.streams[c].device;
  }
  /// The device whose host thread a chain is, or whose stream it is.
  uint32_t threadOfChain(uint32_t chain) const {
    return chain >= hostChain() ? chain - hostChain() : streamPlan.streams[chain].device;
  }
  /// Whether the pipeline has `cpu` stages at all.
  bool hasHostStages() const { return hostStages; }
  /// Whether a device's host thread runs `cpu` stages.
  bool hasHostStages(uint32_t device) const {
    for (const program::Stage &st : pipeline.stages)
      if (onHostThread(st.kind()) && st.cpu().hostDevice == device)
        return true;
    return false;
  }
  /// The graph lowering's edges into each instance: the transitive
  /// reduction of dependencies and stream order within its segment (the
  /// stream lowering's reduction when there is no `cpu` stage).
  const CSR &graphPredecessors() const { return hostStages ? graphKept : reduction.kept; }
  /// The graph lowering's orderings between segments, into each instance:
  /// the kept edges of dependencies, stream order and host program order
  /// from an instance of another segment (an event-record node after it,
  /// an event-wait node before this one). None with one segment.
  const CSR &graphWaits() const { return graphWaitsIn; }
  const program::Stream &stream(uint32_t index) const { return streamPlan.streams[index]; }
  /// A stream as timelines label it: its name, `DEVICE/NAME` with several
  /// devices.
  std::string streamLabel(uint32_t index) const {
    const program::Stream &st = streamPlan.streams[index];
    return pipeline.devices.size() > 1 ? pipeline.devices[st.device].name + "/" + st.name
                                       : st.name;
  }
  /// The graph lowering's edges, sorted by (from, to).
  std::vector<std::pair<uint32_t, uint32_t>> graphEdges() const;
  /// The graph lowering's events, per instance (UINT32_MAX: none): the
  /// event-record node after it that a host sync (its Record op's event) or
  /// a wait in a later segment (numbered after those) waits on. `count`
  /// gets how many there are.
  std::vector<uint32_t> graphEventOf(uint32_t &count) const;

private:
  bool hostStages = false;
  CSR graphKept;
  CSR graphWaitsIn;
  friend void planSegments(Schedule &schedule);
};

/// The graph lowering's segments: a `cpu` stage that synchronises (has a
/// device predecessor in the reduction) or that a device stage depends on
/// ends one; each segment's edges are the reduction within it, the kept
/// edges between segments its waits; its host calls: each segment launched
/// at its first stage's place in issue order, and before each synchronising
/// cpu stage a record (a node after the producer) and a sync per producer
/// it needs.
void planSegments(Schedule &schedule);

/// The device whose host thread makes each of `ops` (a schedule's ops or
/// graphOps; the graph lowering's are one device's).
std::vector<uint32_t> opThreads(const Schedule &schedule, const std::vector<Op> &ops);

/// Plans the stream lowering's host calls: waits for exactly the
/// cross-stream edges of the reduction, one record per producer, and event
/// objects reused as soon as no later wait can bind to their last record.
void planEvents(Schedule &schedule);

} // namespace pipec

#endif // PIPEC_SCHEDULE_SCHEDULE_H
