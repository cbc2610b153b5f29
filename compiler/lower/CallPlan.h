// The schedule lowered to CUDA calls, once: what the CUDA backend executes
// and what the CUDA emitter prints. Each call and each graph node says what
// it does and on what (the stage's work, its stream, its event, the buffer
// slots it touches); the two consumers only turn it into a runtime call or
// into the text of one. A stage kind becomes a CUDA operation in one place,
// `cudaWorkOf`, whose switch the compiler checks.
//
// The stream lowering's calls are visited in issue order, not stored: a
// schedule of millions of instances makes no list of them.

#ifndef PIPEC_LOWER_CALLPLAN_H
#define PIPEC_LOWER_CALLPLAN_H

#include "compiler/schedule/Schedule.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <vector>

namespace pipec::lower {

/// What an instance's work becomes in CUDA.
enum class Work : uint8_t {
  Kernel,     ///< the spin kernel: a launch, or a kernel node
  Copy,       ///< cudaMemcpyAsync, or a 1D memcpy node
  PeerCopy,   ///< cudaMemcpyPeerAsync (several devices; streams only)
  Memset,     ///< cudaMemsetAsync, or a memset node
  HostFunc,   ///< cudaLaunchHostFunc, or a host node
  Collective, ///< an NCCL call (streams only)
  HostThread, ///< a cpu stage: the issuing thread spins; no CUDA call
};

/// The one mapping from a stage to its CUDA operation.
Work cudaWorkOf(const program::Stage &st);

/// Where bytes a call moves or touches are: a slot of a declared buffer, or
/// one of the stage's own buffers (made for a stage that declares none).
struct Place {
  enum Kind : uint8_t {
    Declared, ///< slot `slot` of declared buffer `buffer`
    Device,   ///< the stage's own device buffer (a copy's source side)
    Device2,  ///< its second device buffer (a d2d or p2p copy's destination)
    Host,     ///< its own pinned host buffer
    Nothing,  ///< none (a kernel that declares no buffer)
  };
  Kind kind = Nothing;
  uint32_t buffer = 0, slot = 0;
};

/// A stage's own buffers (Place::Device, Device2, Host) and what it moves,
/// decided once: the CUDA backend allocates them, the emitted program is
/// given them. Only copies and memsets have any.
struct StageBuffers {
  /// What it moves: its bytes as written, or its time at the profile's
  /// bandwidth (at least 1); 0 for a stage that is neither.
  uint64_t bytes = 0;
  bool device = false;  ///< its own device buffer (a copy's source side, a memset's)
  bool device2 = false; ///< a second one: a d2d or p2p copy's destination
  bool pinned = false;  ///< its own pinned host buffer: an h2d or d2h copy's host side
};
StageBuffers stageBuffers(const program::Stage &st, const DeviceProfile &profile);

/// Instance v's copy (Copy, PeerCopy): the first declared buffer it writes
/// and the first it reads, this iteration's slots, else its own buffers as
/// its direction has them.
struct CopyPlaces {
  Place dst, src;
};
CopyPlaces copyPlaces(const Schedule &s, uint32_t v);
/// Instance v's memset: the first declared buffer it writes, else its own
/// device buffer.
Place memsetPlace(const Schedule &s, uint32_t v);
/// What instance v's kernel touches: the last declared buffer it writes,
/// else the first it reads, else nothing.
Place kernelPlace(const Schedule &s, uint32_t v);

/// One host call.
struct Call {
  enum Kind : uint8_t {
    SetDevice,      ///< make `device` current (several devices, when it changes)
    Dispatch,       ///< the issuing thread spins the stage's issue= time
    Launch,         ///< instance's `work` on `stream`
    Record,         ///< record `event` on `stream`, after `instance`
    Wait,           ///< `stream` waits for `event` (`instance`'s)
    Sync,           ///< the issuing thread waits for `event` (`instance`'s)
    Cpu,            ///< a cpu stage, on the issuing thread
    Join,           ///< another device's host thread ran `instance`
    GroupStart,     ///< an NCCL group opens (a collective's parts follow)
    GroupEnd,       ///< it closes: NCCL enqueues the parts now
    GraphLaunch,    ///< the graph of segment `segment`, on launch stream `stream`
    RecordedLaunch, ///< recorded graph launch `event` (RecordedGraphs), its
                    ///< shape `segment`'s executable graph, on `stream`;
                    ///< `instance` is its first node
    Post,           ///< HostThreads: the thread posts token `event` (what
                    ///< another thread awaits is issued, or has run)
    Await,          ///< HostThreads: the thread waits until token `event`
                    ///< is posted in this replay
  };
  Kind kind;
  Work work = Work::Kernel; ///< Launch
  uint32_t stream = kHostStream;
  uint32_t instance = 0;
  uint32_t event = 0;   ///< Record, Wait, Sync
  uint32_t device = 0;  ///< SetDevice
  uint32_t segment = 0; ///< GraphLaunch
  uint32_t thread = 0;  ///< with HostThreads: the host thread that makes it
};

/// One node of a graph: see Node, below.
struct Node;

/// The stream lowering's recorded graph launches (`graph=N`, language
/// version 5): each is a run of the host's ops that one call put on the
/// device, as the model charges it (one `graph_launch_us`): from a node's
/// launch through the launches of the same graph's nodes in the same
/// iteration, and the records and waits between them, up to the last such
/// launch. Each becomes one CUDA graph of those nodes, launched on its first
/// node's stream (the launch stream): an edge inside the run (a record or
/// wait whose producer is a node of the run) is an edge of the graph;
/// around the launch, every other stream of the run's nodes forks into the
/// launch stream and every stream the run touches joins after it, the waits
/// on earlier producers become the launch stream's, and the records that a
/// wait after the run binds to are made again after the join. Runs of one
/// shape (the same stages, places, streams and edges) share one executable
/// graph. Empty for a program without `graph=` or with several devices
/// (whose nodes are launched one by one).
struct RecordedGraphs {
  explicit RecordedGraphs(const Schedule &s);

  const Schedule &s;
  struct Launch {
    uint32_t begin, end; ///< its ops, [begin, end) of s.ops
    uint32_t shape;      ///< its executable graph
    uint32_t stream;     ///< the launch stream: its first node's
  };
  std::vector<Launch> launches; ///< in issue order
  /// Per shape, the launch whose nodes build its graph (the first of it).
  std::vector<uint32_t> shapes;
  /// The plan's own event, after the schedule's (s.eventObjects): the
  /// fork and join around each launch, recorded and waited at once.
  uint32_t scratchEvent = 0;
  /// How many events the stream lowering makes: the schedule's, and the
  /// scratch event when there is a launch.
  uint32_t events() const;
  /// Per op: whether it is a record inside a launch that a wait or sync
  /// after the launch binds to (made again after the join). Empty with no
  /// launch.
  std::vector<bool> exported;

  /// Calls `f` with each node of launch `l`, in issue order: its instance,
  /// `segment` the launch's shape, `after` its predecessors in the graph
  /// (the node before it on its stream, and the producers of the edges
  /// into it); no waits or record. Stops when `f` returns false.
  bool forEachNode(uint32_t l, llvm::function_ref<bool(const Node &)> f) const;

  /// Whether `op`, a record or wait among launch `l`'s ops, is an edge of
  /// its graph: its producer is a node of `l`.
  bool edge(uint32_t l, const Op &op) const { return launchOf[op.instance] == l; }

private:
  std::vector<uint32_t> launchOf; ///< per instance, its launch or UINT32_MAX
};

/// A program of several devices as the model runs it: each device's host
/// thread makes its own calls (opThreads), beside the others. What one
/// thread needs of another is a token: a record another thread's wait or
/// sync binds to posts one once issued, and the waiting thread awaits it,
/// then waits for an event of the record's own (recorded beside it, once a
/// replay: the shared one may be recorded again before the wait is made);
/// a cpu stage another thread joins posts one once it has run.
struct HostThreads {
  explicit HostThreads(const Schedule &s);

  uint32_t count = 1;             ///< threads: the devices
  std::vector<uint32_t> threadOf; ///< per op
  uint32_t tokens = 0;
  /// Per op: the token posted after it, and the one awaited before it
  /// (kNoToken: none).
  std::vector<uint32_t> postOf, awaitOf;
  /// Token k's record is recorded again on event eventBase + k, which
  /// the awaiting thread's wait or sync takes (a cpu stage's token leaves
  /// its event unused).
  uint32_t eventBase = 0;
  /// Per token: the device whose stream records its event (a cpu stage's:
  /// its thread).
  std::vector<uint32_t> tokenDevice;
};
constexpr uint32_t kNoToken = UINT32_MAX;

/// Calls `f` with each call of the stream lowering, in issue order: the
/// schedule's ops, each launch after its issue= dispatch, each device made
/// current when it changes, and a collective's parts inside one NCCL group
/// (the records after them moved past its end, where NCCL enqueues them).
/// With `recorded`, each of its launches is one RecordedLaunch call with
/// the calls around it (RecordedGraphs); without, its nodes are launched
/// one by one. With `threads` (several devices), each call names its
/// thread, with the posts and awaits between threads (HostThreads), and
/// no SetDevice or NCCL group calls (a thread makes its device current
/// once; each makes its own part of a collective). Stops, returning false,
/// when `f` does.
bool forEachStreamCall(const Schedule &s, const RecordedGraphs *recorded,
                       const HostThreads *threads, llvm::function_ref<bool(const Call &)> f);
inline bool forEachStreamCall(const Schedule &s, const RecordedGraphs *recorded,
                              llvm::function_ref<bool(const Call &)> f) {
  return forEachStreamCall(s, recorded, nullptr, f);
}
inline bool forEachStreamCall(const Schedule &s, llvm::function_ref<bool(const Call &)> f) {
  return forEachStreamCall(s, nullptr, nullptr, f);
}

/// One node of the graph lowering: `instance` in its segment's graph,
/// after the nodes of `after` and after an event-wait node for each of
/// `waitFor` (producers in earlier segments, their events `eventOf`), and
/// followed by an event-record node of `record` when a host sync or a later
/// segment waits on it.
struct Node {
  uint32_t instance, segment;
  Work work;
  llvm::ArrayRef<uint32_t> after, waitFor;
  uint32_t record; ///< its event, or kNoRecord
};
constexpr uint32_t kNoRecord = UINT32_MAX;

/// The graph lowering: its nodes, its events and the host calls of a replay.
struct GraphPlan {
  explicit GraphPlan(const Schedule &s);

  const Schedule &s;
  /// The events of the event-record nodes (declared before eventOf, which
  /// counts them).
  uint32_t events = 0;
  /// Per instance: the event of its event-record node, or kNoRecord.
  std::vector<uint32_t> eventOf;
  /// Segment g is launched on launch stream g % launchStreams.
  uint32_t launchStreams = 1;
  /// The nodes whose parameters are set again before each launch of their
  /// segment (`dynamic` stages), in instance order.
  std::vector<uint32_t> dynamic;
  /// The nodes: a node per device instance, in instance order.
  uint32_t nodes = 0;

  /// Calls `f` with each node, in instance order; stops when `f` returns false.
  bool forEachNode(llvm::function_ref<bool(const Node &)> f) const;
  /// The host calls of one replay, in order: GraphLaunch, Sync and Cpu.
  bool forEachReplayCall(llvm::function_ref<bool(const Call &)> f) const;
};

} // namespace pipec::lower

#endif
