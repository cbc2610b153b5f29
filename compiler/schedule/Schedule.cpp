//===- Schedule.cpp -------------------------------------------------------===//

#include "compiler/schedule/Schedule.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <queue>

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
static StreamPlan planStreams(const Instances &instances,
                              const DeviceProfile &profile,
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

Schedule::Schedule(const program::Pipeline &pipeline,
                   const DeviceProfile &profile, const ScheduleOptions &options,
                   std::unique_ptr<StageGraph> graph)
    : pipeline(pipeline),
      instances(timed(times.unroll, [&] { return Instances(pipeline); })),
      stageGraph(std::move(graph)),
      streamPlan(timed(times.streams,
                       [&] {
                         return planStreams(instances, profile, options,
                                            stageGraph);
                       })),
      lowering(Lowering::Streams) {
  Stopwatch watch;
  const size_t n = instances.size();
  instanceStream.resize(n);
  for (uint32_t v = 0; v < n; ++v)
    instanceStream[v] = streamPlan.streamOfStage[instances.stageOf(v)];
  // Every predecessor lies within k + 1 iterations' worth of instances, for
  // the farthest @prev(k) (and the previous instance on a stream within
  // one iteration's worth).
  size_t window = (std::max<size_t>(1, instances.maxDistance()) + 1) *
                  size_t(instances.stagesPerIteration());
  reduction = transitiveReduction(
      instances.deps(), instanceStream,
      static_cast<uint32_t>(streamPlan.streams.size()), window);
  times.reduction = watch.lap();

  planEvents(*this);
  times.events = watch.lap();
  analysis = analyze(*this, profile);
  if (options.graphCost)
    analysis.graphAdvice = options.graphCost->advise(*this, options.replays);
  times.analysis = watch.lap();
  switch (options.lowering) {
  case LoweringChoice::Streams:
    lowering = Lowering::Streams;
    break;
  case LoweringChoice::Graph:
    lowering = Lowering::Graph;
    break;
  case LoweringChoice::Auto:
    lowering = analysis.graphAdvice.suitable ? Lowering::Graph
                                             : Lowering::Streams;
    break;
  }
  if (lowering == Lowering::Graph) {
    ops.clear();
    ops.shrink_to_fit();
    eventObjects = 0;
    records = waits = 0;
    analysis.eventDensity = 0;
  }
}

void pipec::planEvents(Schedule &s) {
  const size_t n = s.instances.size();
  const CSR &kept = s.reduction.kept;
  constexpr uint32_t kNone = UINT32_MAX;
  // The last consumer that waits for each producer.
  std::vector<uint32_t> lastWaiter(n, kNone);
  size_t waits = 0, producers = 0;
  for (uint32_t v = 0; v < n; ++v)
    for (uint32_t u : kept.row(v))
      if (s.streamOf(u) != s.streamOf(v)) {
        producers += lastWaiter[u] == kNone;
        lastWaiter[u] = v;
        ++waits;
      }

  std::vector<uint32_t> eventOf(n, kNone);
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> free;
  s.ops.clear();
  s.ops.reserve(n + waits + producers); // exactly: launches, waits, records
  for (uint32_t v = 0; v < n; ++v) {
    const uint32_t stream = s.streamOf(v);
    for (uint32_t u : kept.row(v)) {
      if (s.streamOf(u) == stream)
        continue;
      s.ops.push_back({Op::Wait, stream, u, eventOf[u]});
      ++s.waits;
      if (lastWaiter[u] == v)
        free.push(eventOf[u]); // no later wait binds to this record
    }
    s.ops.push_back({Op::Launch, stream, v, 0});
    if (lastWaiter[v] != kNone) {
      uint32_t event;
      if (!free.empty()) {
        event = free.top();
        free.pop();
      } else {
        event = s.eventObjects++;
      }
      eventOf[v] = event;
      s.ops.push_back({Op::Record, stream, v, event});
      ++s.records;
    }
  }
}

std::vector<std::pair<uint32_t, uint32_t>> Schedule::graphEdges() const {
  const CSR &kept = reduction.kept;
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  edges.reserve(kept.edges());
  for (uint32_t v = 0; v < kept.rows(); ++v)
    for (uint32_t u : kept.row(v))
      edges.push_back({u, v});
  std::sort(edges.begin(), edges.end());
  return edges;
}
