//===- GraphCost.cpp - "Does a CUDA graph pay?", answered once ------------===//

#include "runtime/cost/GraphCost.h"

#include <algorithm>
#include <cmath>

using namespace pipec;
using namespace pipec::runtime;

GraphAdvice runtime::compareLowerings(const LoweringRun &streams,
                                      const LoweringRun &graph, unsigned replays) {
  GraphAdvice g;
  g.evaluated = true;
  g.streamsReplayUs = streams.timings.replayMedian;
  g.graphReplayUs = graph.timings.replayMedian;
  double instantiate = graph.explicitInstantiateUs > 0 ? graph.explicitInstantiateUs
                                                       : graph.timings.instantiate;
  g.oneTimeUs = instantiate + std::max(0.0, graph.timings.firstLaunch -
                                                graph.timings.replayMedian);
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
  llvm::Expected<LoweringRun> streams = model->run(s, Lowering::Streams, options);
  llvm::Expected<LoweringRun> graph = model->run(s, Lowering::Graph, options);
  if (!streams || !graph) {
    // The model does not fail; should it, the advice says so.
    llvm::consumeError(streams.takeError());
    llvm::consumeError(graph.takeError());
    return GraphAdvice();
  }
  return compareLowerings(*streams, *graph, replays);
}
