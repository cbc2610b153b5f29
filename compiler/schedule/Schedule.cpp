//===- Schedule.cpp -------------------------------------------------------===//

#include "compiler/schedule/Schedule.h"
#include "compiler/sema/Sema.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <queue>
#include <thread>

using namespace pipec;

const char *pipec::spelling(Lowering lowering) {
  return lowering == Lowering::Graph ? "graph" : "streams";
}

namespace {
/// Seconds since the last call.
class Stopwatch {
public:
  double lap() {
    auto now = std::chrono::steady_clock::now();
    double seconds = std::chrono::duration<double>(now - last).count();
    last = now;
    return seconds;
  }

private:
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::now();
};
} // namespace

/// Streams: declared ones, and automatic ones for stages without `on`.
static StreamPlan planStreams(const Instances &instances, const DeviceProfile &profile,
                              const ScheduleOptions &options,
                              std::unique_ptr<StageGraph> &graph) {
  if (!graph)
    graph = std::make_unique<StageGraph>(instances.pipeline(), instances.order());
  const program::Pipeline &p = instances.pipeline();
  std::vector<uint8_t> used(p.streams.size(), 0);
  for (const program::Stage &s : p.stages)
    if (s.stream != program::kNoStream)
      used[s.stream] = 1;
  unsigned declaredUsed = static_cast<unsigned>(std::count(used.begin(), used.end(), 1));
  unsigned cap = std::min(options.maxStreams, profile.hardwareQueues);
  AssignOptions assign;
  assign.method = options.assign;
  // The matching may make as many streams as chains: never more than the
  // language's limit, whatever --max-streams says.
  assign.maxStreams = std::min(options.maxStreams, 256u);
  assign.autoStreams = cap > declaredUsed ? cap - declaredUsed : 1;
  assign.evaluator = options.assignEvaluator;
  return assignStreams(instances, *graph, profile, assign);
}

unsigned pipec::automaticStreamsBound(const ScheduleOptions &options,
                                      const DeviceProfile &profile) {
  unsigned cap = options.assign == AssignMethod::Matching
                     ? std::min(options.maxStreams, 256u)
                     : std::min(options.maxStreams, profile.hardwareQueues);
  return std::max(1u, cap);
}

/// Runs `make`, adding its wall time to `seconds`.
template <typename Make> static auto timed(double &seconds, Make make) {
  Stopwatch watch;
  auto result = make();
  seconds += watch.lap();
  return result;
}

GraphCostModel::~GraphCostModel() = default;

bool pipec::useSecondThread(size_t instances) {
  return instances >= kParallelFrom && std::thread::hardware_concurrency() > 1;
}

Schedule::Schedule(const program::Pipeline &pipeline, const DeviceProfile &profile,
                   const ScheduleOptions &options, std::unique_ptr<StageGraph> graph)
    : pipeline(pipeline), instances(timed(times.unroll, [&] { return Instances(pipeline); })),
      stageGraph(std::move(graph)),
      streamPlan(timed(times.streams,
                       [&] { return planStreams(instances, profile, options, stageGraph); })),
      lowering(Lowering::Streams) {
  Stopwatch watch;
  const size_t n = instances.size();
  const uint32_t streams = static_cast<uint32_t>(streamPlan.streams.size());
  instanceStream.resize(n);
  for (const program::Stage &st : pipeline.stages)
    hostStages |= onHostThread(st.kind());
  for (uint32_t v = 0; v < n; ++v) {
    uint32_t stream = streamPlan.streamOfStage[instances.stageOf(v)];
    instanceStream[v] =
        stream == kHostStream ? streams + instances.stage(v).cpu().hostDevice : stream;
  }
  // Every predecessor lies within the instances' reach: k + 1 iterations'
  // worth for the farthest @prev(k) (and the previous instance on a stream,
  // or the last cpu stage before it, within one iteration's worth), more
  // past the iterations a conditional stage skips.
  size_t window = instances.reach();
  if (!hostStages) {
    reduction = transitiveReduction(instances.deps(), instanceStream, streams, window);
  } else {
    // Host program order: a cpu stage happens before everything its host
    // thread issues after it. Each device's host thread is one more chain
    // (its cpu stages in issue order), and each instance on a stream
    // follows the last cpu stage its device's thread ran since the previous
    // instance of its stream (stream order carries it to the rest).
    const CSR &deps = instances.deps();
    CSR ordered;
    ordered.begin.reserve(n + 1);
    ordered.targets.reserve(deps.edges() + n);
    std::vector<uint32_t> lastOn(streams, UINT32_MAX);
    std::vector<uint32_t> lastCpu(pipeline.deviceCount(), UINT32_MAX);
    std::vector<uint64_t> extra; // the edge index of each host-order edge
    for (uint32_t v = 0; v < n; ++v) {
      llvm::ArrayRef<uint32_t> row = deps.row(v);
      uint32_t host = UINT32_MAX;
      if (!onHost(v)) {
        uint32_t &last = lastOn[instanceStream[v]];
        const uint32_t cpu = lastCpu[threadOf(v)];
        if (cpu != UINT32_MAX && (last == UINT32_MAX || cpu > last) &&
            !std::binary_search(row.begin(), row.end(), cpu))
          host = cpu;
        last = v;
      } else {
        lastCpu[threadOf(v)] = v;
      }
      bool placed = host == UINT32_MAX;
      for (uint32_t u : row) {
        if (!placed && host < u) {
          extra.push_back(ordered.targets.size());
          ordered.targets.push_back(host);
          placed = true;
        }
        ordered.targets.push_back(u);
      }
      if (!placed) {
        extra.push_back(ordered.targets.size());
        ordered.targets.push_back(host);
      }
      ordered.begin.push_back(ordered.targets.size());
    }
    reduction = transitiveReduction(ordered, instanceStream, chains(), window);
    // The flags of the declared (and inferred) edges alone.
    std::vector<uint8_t> declared;
    declared.reserve(deps.edges());
    size_t next = 0;
    for (uint64_t e = 0; e < ordered.edges(); ++e) {
      if (next < extra.size() && extra[next] == e) {
        ++next;
        continue;
      }
      declared.push_back(reduction.declaredKept[e]);
    }
    reduction.declaredKept = std::move(declared);
    reduction.removedDeclared = 0;
    for (uint8_t kept : reduction.declaredKept)
      reduction.removedDeclared += !kept;
  }
  times.reduction = watch.lap();

  // The analysis reads the reduction and the segments, not the host's
  // calls: on a large schedule it runs beside planEvents, on a second
  // thread (and takes the events' density once they are planned).
  planSegments(*this);
  std::thread beside;
  if (useSecondThread(n))
    beside = std::thread([&] { analysis = analyzeSchedule(*this, profile); });
  planEvents(*this);
  times.events = watch.lap();
  if (beside.joinable()) {
    beside.join();
    analysis.eventDensity = n ? double(records) / double(n) : 0;
  } else {
    analysis = analyzeSchedule(*this, profile);
  }
  // A graph is lowered for one device: a pipeline of several gets no
  // verdict (and --lower=auto keeps its streams).
  if (options.graphCost && pipeline.deviceCount() == 1)
    analysis.graphAdvice = options.graphCost->verdict(*this, options.replays);
  else if (options.graphCost)
    analysis.graphAdvice.reasons = {"not simulated: pipec lowers a pipeline of several "
                                    "devices to streams, and this one declares " +
                                    std::to_string(pipeline.deviceCount()) + " devices"};
  times.analysis = watch.lap();
  switch (options.lowering) {
  case LoweringChoice::Streams:
    lowering = Lowering::Streams;
    break;
  case LoweringChoice::Graph:
    lowering = Lowering::Graph;
    break;
  case LoweringChoice::Auto:
    lowering = analysis.graphAdvice.suitable ? Lowering::Graph : Lowering::Streams;
    break;
  }
  if (lowering == Lowering::Graph) {
    ops.clear();
    ops.shrink_to_fit();
    eventObjects = 0;
    records = waits = syncs = joins = 0;
    analysis.eventDensity = 0;
  }
}

/// Whether edge u -> v of the reduction needs an event: a cross-stream
/// wait, or a host synchronisation (a cpu stage after a device stage). An
/// edge from a cpu stage needs none: its thread issues v only after u ran
/// (another device's thread joins it: needsJoin).
static bool needsEvent(const Schedule &s, uint32_t u, uint32_t v) {
  return !s.onHost(u) && s.streamOf(u) != s.streamOf(v);
}

/// Whether edge u -> v is a cpu stage before what another device's host
/// thread issues: that thread waits for u to have run (a Join).
static bool needsJoin(const Schedule &s, uint32_t u, uint32_t v) {
  return s.onHost(u) && s.threadOf(u) != s.threadOf(v);
}

// Event and segment numbers are at most the instances, which Sema bounds.
static_assert(kMaxStageInstances <= kMaxEventNumber, "an event number fits an Op");

void pipec::planEvents(Schedule &s) {
  const size_t n = s.instances.size();
  const CSR &kept = s.reduction.kept;
  constexpr uint32_t kNone = UINT32_MAX;
  // The last consumer that waits (or syncs) for each producer, and whether
  // one is issued by another device's host thread than the producer's.
  std::vector<uint32_t> lastWaiter(n, kNone);
  std::vector<uint8_t> otherThread(s.pipeline.deviceCount() > 1 ? n : 0, 0);
  size_t waits = 0, producers = 0;
  for (uint32_t v = 0; v < n; ++v)
    for (uint32_t u : kept.row(v))
      if (needsEvent(s, u, v)) {
        producers += lastWaiter[u] == kNone;
        lastWaiter[u] = v;
        ++waits;
        if (!otherThread.empty() && s.threadOf(u) != s.threadOf(v))
          otherThread[u] = 1;
      } else {
        waits += needsJoin(s, u, v);
      }

  std::vector<uint32_t> eventOf(n, kNone);
  // Free event objects per device: CUDA records an event only on a stream
  // of the device it was made on (a wait may be on any device's stream).
  const size_t devices = s.pipeline.deviceCount();
  std::vector<uint32_t> deviceOfEvent;
  std::vector<std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>>> free(
      devices);
  s.ops.clear();
  s.ops.reserve(n + waits + producers); // exactly: launches, waits, records
  for (uint32_t v = 0; v < n; ++v) {
    const bool cpu = s.onHost(v);
    const uint32_t stream = cpu ? kHostStream : s.streamOf(v);
    for (uint32_t u : kept.row(v)) {
      if (needsJoin(s, u, v)) {
        s.ops.push_back({Op::Join, kHostStream, u, 0});
        ++s.joins;
        continue;
      }
      if (!needsEvent(s, u, v))
        continue;
      if (cpu) {
        s.ops.push_back({Op::Sync, kHostStream, u, eventOf[u]});
        ++s.syncs;
      } else {
        s.ops.push_back({Op::Wait, stream, u, eventOf[u]});
        ++s.waits;
      }
      // No later wait binds to this record: the event is free again, but
      // for one another thread waits for (that thread might bind to the
      // next record if it came late, and threads keep no common order).
      if (lastWaiter[u] == v && (otherThread.empty() || !otherThread[u]))
        free[deviceOfEvent[eventOf[u]]].push(eventOf[u]);
    }
    s.ops.push_back({cpu ? Op::Cpu : Op::Launch, stream, v, 0});
    if (lastWaiter[v] != kNone) {
      uint32_t event;
      const uint32_t device = s.threadOf(v);
      if (!free[device].empty()) {
        event = free[device].top();
        free[device].pop();
      } else {
        event = s.eventObjects++;
        deviceOfEvent.push_back(device);
      }
      eventOf[v] = event;
      s.ops.push_back({Op::Record, stream, v, event});
      ++s.records;
    }
  }
}

std::vector<uint32_t> pipec::opThreads(const Schedule &s, const std::vector<Op> &ops) {
  std::vector<uint32_t> thread(ops.size(), 0);
  if (s.pipeline.deviceCount() == 1 || &ops == &s.graphOps)
    return thread;
  uint32_t next = 0; // the thread of the call after
  for (size_t i = ops.size(); i-- > 0;) {
    const Op &op = ops[i];
    if (op.kind == Op::Cpu)
      next = s.threadOf(op.instance);
    else if (op.kind != Op::Sync && op.kind != Op::Join && op.stream != kHostStream)
      next = s.streamPlan.streams[op.stream].device;
    thread[i] = next;
  }
  return thread;
}

void pipec::planSegments(Schedule &s) {
  const size_t n = s.instances.size();
  const CSR &deps = s.instances.deps();
  s.segmentOf.assign(n, 0);
  s.graphOps.clear();
  s.graphEventObjects = 0;
  s.graphWaitsIn = CSR();
  if (!s.hostStages) {
    s.segments = 1;
    s.graphOps.push_back({Op::GraphLaunch, kHostStream, UINT32_MAX, 0});
    s.graphWaitsIn.begin.assign(n + 1, 0);
    return;
  }
  // Which cpu stages end a segment: those that synchronise, and those a
  // device stage depends on (it must be launched after them).
  std::vector<uint8_t> boundary(n, 0), syncs(n, 0);
  for (uint32_t v = 0; v < n; ++v) {
    if (s.onHost(v)) {
      for (uint32_t u : s.reduction.kept.row(v))
        if (!s.onHost(u))
          boundary[v] = syncs[v] = 1;
      continue;
    }
    for (uint32_t u : deps.row(v))
      if (s.onHost(u))
        boundary[u] = 1;
  }
  // Segments: maximal runs of device instances between boundaries; each is
  // launched where its first instance is issued. A synchronising cpu stage
  // waits for exactly the instances it needs: each of its kept device
  // predecessors has an event-record node after it in its segment, which
  // the host synchronises on (the rest of the segment runs on). One event
  // a producer.
  std::vector<uint32_t> eventOf(n, UINT32_MAX);
  uint32_t segment = 0;
  bool open = false;
  for (uint32_t v = 0; v < n; ++v) {
    if (s.onHost(v)) {
      s.segmentOf[v] = kNoSegment;
      if (boundary[v] && open) {
        ++segment;
        open = false;
      }
      if (syncs[v])
        for (uint32_t u : s.reduction.kept.row(v)) {
          if (s.onHost(u))
            continue;
          if (eventOf[u] == UINT32_MAX)
            eventOf[u] = s.graphEventObjects++;
          s.graphOps.push_back({Op::Record, kHostStream, u, eventOf[u]});
          s.graphOps.push_back({Op::Sync, kHostStream, u, eventOf[u]});
        }
      s.graphOps.push_back({Op::Cpu, kHostStream, v, 0});
      continue;
    }
    if (!open) {
      s.graphOps.push_back({Op::GraphLaunch, kHostStream, v, segment});
      open = true;
    }
    s.segmentOf[v] = segment;
  }
  s.segments = segment + (open ? 1 : 0);
  // Between segments: the edges of the reduction of dependencies, stream
  // order and host program order from one segment's instance to another's
  // (an event-record node after the one, an event-wait node before the
  // other). An ordering that runs through a host synchronisation is held by
  // the synchronisation and the launch after it.
  s.graphWaitsIn.begin.reserve(n + 1);
  for (uint32_t v = 0; v < n; ++v) {
    if (!s.onHost(v))
      for (uint32_t u : s.reduction.kept.row(v))
        if (!s.onHost(u) && s.segmentOf[u] != s.segmentOf[v])
          s.graphWaitsIn.targets.push_back(u);
    s.graphWaitsIn.begin.push_back(s.graphWaitsIn.targets.size());
  }
  // Each segment's edges: the reduction of dependencies and stream order
  // over the device instances, less the edges between segments (the
  // waits above hold those). A path between two instances of one
  // segment passes only through instances issued between them: the same
  // segment, so this is the reduction within each segment.
  std::vector<uint32_t> device, index(n, UINT32_MAX);
  for (uint32_t v = 0; v < n; ++v)
    if (!s.onHost(v)) {
      index[v] = static_cast<uint32_t>(device.size());
      device.push_back(v);
    }
  CSR local;
  std::vector<uint32_t> chainOf;
  local.begin.reserve(device.size() + 1);
  chainOf.reserve(device.size());
  size_t window = 0;
  for (uint32_t v : device) {
    for (uint32_t u : deps.row(v))
      if (index[u] != UINT32_MAX) {
        local.targets.push_back(index[u]);
        window = std::max<size_t>(window, index[v] - index[u]);
      }
    local.begin.push_back(local.targets.size());
    chainOf.push_back(s.streamOf(v));
  }
  // The previous instance of a stream lies within the instances' reach.
  window = std::max<size_t>(window, s.instances.reach()) + 1;
  Reduction r = transitiveReduction(local, chainOf, s.hostChain(), window);
  s.graphKept = CSR();
  s.graphKept.begin.reserve(n + 1);
  for (uint32_t v = 0; v < n; ++v) {
    if (index[v] != UINT32_MAX)
      for (uint32_t u : r.kept.row(index[v]))
        if (s.segmentOf[device[u]] == s.segmentOf[v])
          s.graphKept.targets.push_back(device[u]);
    s.graphKept.begin.push_back(s.graphKept.targets.size());
  }
}

std::vector<uint32_t> Schedule::graphEventOf(uint32_t &count) const {
  std::vector<uint32_t> eventOf(instances.size(), UINT32_MAX);
  count = graphEventObjects;
  for (const Op &op : graphOps)
    if (op.kind == Op::Record)
      eventOf[op.instance] = op.event;
  for (uint32_t v = 0; v < instances.size(); ++v)
    for (uint32_t u : graphWaits().row(v))
      if (eventOf[u] == UINT32_MAX)
        eventOf[u] = count++;
  return eventOf;
}

std::vector<std::pair<uint32_t, uint32_t>> Schedule::graphEdges() const {
  const CSR &kept = graphPredecessors();
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  edges.reserve(kept.edges());
  for (uint32_t v = 0; v < kept.rows(); ++v)
    for (uint32_t u : kept.row(v))
      edges.push_back({u, v});
  std::sort(edges.begin(), edges.end());
  return edges;
}
