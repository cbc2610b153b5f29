//===- GraphCost.cpp - "Does a CUDA graph pay?", answered once ------------===//

#include "model/GraphCost.h"
#include "model/SimBackend.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <thread>

using namespace pipec;
using namespace pipec::runtime;

GraphAdvice runtime::compareLowerings(const LoweringRun &streams, const LoweringRun &graph,
                                      unsigned replays) {
  GraphAdvice g;
  g.evaluated = true;
  g.streamsReplayUs = streams.timings.replayMedian;
  g.graphReplayUs = graph.timings.replayMedian;
  double instantiate = graph.explicitInstantiateUs > 0 ? graph.explicitInstantiateUs
                                                       : graph.timings.instantiate;
  // Capture, instantiation and the first launch's upload, each paid once
  // per distinct graph.
  g.oneTimeUs = graph.timings.capture + instantiate +
                std::max(0.0, graph.timings.firstLaunch - graph.timings.replayMedian);
  g.streamsHostCallsUs = streams.hostUs.issue + streams.hostUs.api;
  g.graphHostCallsUs = graph.hostUs.issue + graph.hostUs.api;
  double saved = g.streamsReplayUs - g.graphReplayUs;
  if (saved > 0)
    g.breakEvenReplays =
        std::max<uint64_t>(1, static_cast<uint64_t>(std::ceil(g.oneTimeUs / saved)));
  g.segments = graph.segments;
  g.graphs = graph.graphs;
  if (streams.schedule)
    g.iterations = streams.schedule->instances.iterations();
  // One graph replayed each iteration (a loop's body): it pays back in
  // iterations, each saving its share of a replay's saving.
  if (saved > 0 && g.graphs && g.graphs < g.segments && g.iterations > 1)
    g.breakEvenIterations = std::max<uint64_t>(
        1, static_cast<uint64_t>(std::ceil(g.oneTimeUs / (saved / double(g.iterations)))));
  g.suitable = g.breakEvenReplays && g.breakEvenReplays <= replays &&
               worthIt(g.streamsReplayUs, g.graphReplayUs);
  if (streams.schedule)
    for (const program::Stage &st : streams.schedule->pipeline.stages)
      if (program::isPageableCopy(st)) {
        g.heldOutBy = "pageable copy '" + st.name + "'";
        g.suitable = false;
        break;
      }
  g.reasons = describeGraphAdvice(g, replays);
  return g;
}

GraphAdvice runtime::compareRuns(const LoweringRun &streams, const LoweringRun &graph,
                                 unsigned replays) {
  GraphAdvice g = compareLowerings(streams, graph, replays);
  const GraphAdvice &own = streams.schedule->analysis.graphAdvice;
  const bool sameFigures = std::fabs(own.streamsReplayUs - g.streamsReplayUs) < 1e-6 &&
                           std::fabs(own.graphReplayUs - g.graphReplayUs) < 1e-6 &&
                           own.suitable == g.suitable;
  if (streams.timing == TimingMethod::Model && graph.timing == TimingMethod::Model &&
      own.evaluated && sameFigures && own.flipsAtGraphLaunchUs >= 0) {
    g.graphLaunchUs = own.graphLaunchUs;
    g.flipsAtGraphLaunchUs = own.flipsAtGraphLaunchUs;
    g.reasons = describeGraphAdvice(g, replays);
  }
  return g;
}

/// Both lowerings of `s` on the device model of `profile`, compared; an
/// advice not evaluated should the model fail.
static GraphAdvice simulateBoth(const Schedule &s, const DeviceProfile &profile,
                                unsigned replays) {
  std::unique_ptr<Backend> model = makeSimBackend(profile);
  RunOptions options;
  options.replays = replays;
  options.recordHost = false;
  // A long periodic replay is skipped ahead once it settles (equal up to
  // rounding, DeviceModel.h); a smaller one is simulated whole, as it
  // always was.
  options.extrapolate = s.instances.size() >= RunOptions::kSkipAheadFrom;
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

/// How far a replay's saving is past what the verdict asks of it (the
/// break-even within the replays, and worthIt): >= 0 exactly when the graph
/// is suitable.
static double margin(const GraphAdvice &g, unsigned replays) {
  const double saved = g.streamsReplayUs - g.graphReplayUs;
  const double needed =
      std::max({kMinGainUs, kMinGainFraction * g.streamsReplayUs,
                replays ? g.oneTimeUs / double(replays) : g.oneTimeUs, 1e-9});
  return saved - needed;
}

/// The most instances for which the verdict looks for the graph_launch_us
/// that flips it (a few more runs of both lowerings).
constexpr size_t kFlipSearchUpTo = size_t(1) << 16;

GraphAdvice SimGraphCost::verdict(const Schedule &s, unsigned replays) const {
  GraphAdvice advice = simulateBoth(s, profile, replays);
  advice.graphLaunchUs = profile.graphLaunchUs;
  if (!advice.evaluated || s.instances.size() > kFlipSearchUpTo || profile.graphLaunchUs <= 0)
    return advice;
  // The saving falls about linearly as the launch call grows: regula falsi
  // (the Illinois variant) between the profile's value and kFlipSearchFactor
  // times it, or a kFlipSearchFactor-th of it, finds where the verdict
  // changes in a few runs.
  auto at = [&](double launchUs) {
    DeviceProfile p = profile;
    p.graphLaunchUs = launchUs;
    GraphAdvice g = simulateBoth(s, p, replays);
    return g.evaluated ? margin(g, replays) : std::nan("");
  };
  double near = profile.graphLaunchUs, nearMargin = margin(advice, replays);
  double far = advice.suitable ? near * kFlipSearchFactor : near / kFlipSearchFactor;
  double farMargin = at(far);
  if ((farMargin < 0) == (nearMargin < 0) || std::isnan(farMargin))
    return advice; // no flip within the factor
  int side = 0;
  const double tolerance = 0.005 * profile.graphLaunchUs;
  for (int step = 0; step < 10 && std::fabs(far - near) > tolerance; ++step) {
    double x = far - farMargin * (far - near) / (farMargin - nearMargin);
    // An estimate at one end (the root found) steps just inside it, so
    // that the bracket closes on the root from both sides.
    const double toward = far > near ? 1 : -1;
    if (std::fabs(x - near) < tolerance)
      x = near + toward * tolerance;
    else if (std::fabs(far - x) < tolerance)
      x = far - toward * tolerance;
    const double m = at(x);
    if (std::isnan(m))
      return advice;
    if ((m < 0) == (farMargin < 0)) {
      far = x, farMargin = m;
      if (side == -1)
        nearMargin /= 2;
      side = -1;
    } else {
      near = x, nearMargin = m;
      if (side == 1)
        farMargin /= 2;
      side = 1;
    }
  }
  // The flipped side's end of the bracket: there the verdict is the other.
  // Rounded to the nanosecond away from the profile's value (still on the
  // flipped side).
  advice.flipsAtGraphLaunchUs =
      far < profile.graphLaunchUs ? std::floor(far * 1e3) / 1e3 : std::ceil(far * 1e3) / 1e3;
  advice.reasons = describeGraphAdvice(advice, replays);
  return advice;
}
