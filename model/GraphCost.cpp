//===- GraphCost.cpp - "Does a CUDA graph pay?", answered once ------------===//

#include "model/GraphCost.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <thread>

using namespace pipec;
using namespace pipec::runtime;

/// The fewest instances for which the graph verdict's model skips ahead.
constexpr size_t kSkipAheadFrom = size_t(1) << 16;

GraphAdvice runtime::compareLowerings(const LoweringRun &streams, const LoweringRun &graph,
                                      unsigned replays) {
  GraphAdvice g;
  g.evaluated = true;
  g.streamsReplayUs = streams.timings.replayMedian;
  g.graphReplayUs = graph.timings.replayMedian;
  double instantiate = graph.explicitInstantiateUs > 0 ? graph.explicitInstantiateUs
                                                       : graph.timings.instantiate;
  g.oneTimeUs =
      instantiate + std::max(0.0, graph.timings.firstLaunch - graph.timings.replayMedian);
  double saved = g.streamsReplayUs - g.graphReplayUs;
  if (saved > 0)
    g.breakEvenReplays =
        std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(g.oneTimeUs / saved)));
  g.suitable = g.breakEvenReplays && g.breakEvenReplays <= replays &&
               worthIt(g.streamsReplayUs, g.graphReplayUs);
  g.reasons = describeGraphAdvice(g, replays);
  return g;
}

GraphAdvice SimGraphCost::advise(const Schedule &s, unsigned replays) const {
  std::unique_ptr<Backend> model = makeSimBackend(profile);
  RunOptions options;
  options.replays = replays;
  options.recordHost = false;
  // A long periodic replay is skipped ahead once it settles (equal up to
  // rounding, DeviceModel.h); a smaller one is simulated whole, as it
  // always was.
  options.extrapolate = s.instances.size() >= kSkipAheadFrom;
  // Only the timings are compared: no timeline is kept (at 10^7 instances,
  // 160 MB a lowering).
  options.timeline = false;
  // The two runs share nothing but the schedule, which they only read: on
  // a large one, the graph lowering is simulated on a second thread.
  std::optional<llvm::Expected<LoweringRun>> graphRun;
  std::thread second;
  if (useSecondThread(s.instances.size()))
    second = std::thread([&, other = makeSimBackend(profile)] {
      graphRun.emplace(other->run(s, Lowering::Graph, options));
    });
  llvm::Expected<LoweringRun> streams = model->run(s, Lowering::Streams, options);
  if (second.joinable())
    second.join();
  else
    graphRun.emplace(model->run(s, Lowering::Graph, options));
  llvm::Expected<LoweringRun> graph = std::move(*graphRun);
  if (!streams || !graph) {
    // The model does not fail; should it, the advice says so.
    llvm::consumeError(streams.takeError());
    llvm::consumeError(graph.takeError());
    return GraphAdvice();
  }
  GraphAdvice advice = compareLowerings(*streams, *graph, replays);
  advice.streamsExtrapolated = streams->extrapolatedIterations;
  advice.graphExtrapolated = graph->extrapolatedIterations;
  return advice;
}
