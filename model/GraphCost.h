//===- GraphCost.h - "Does a CUDA graph pay?", answered once --------------===//
//
// One replay as stream launches against one as a graph launch, both from
// the host's first call to the last stage's end, and the one-time cost of
// the graph (instantiation and first upload): the graph pays back after
// ceil(one-time / saving) replays. compile (through the GraphCostModel it is
// given), run --lower=both and advise all take this number from here.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_MODEL_GRAPHCOST_H
#define PIPEC_MODEL_GRAPHCOST_H

#include "compiler/schedule/Schedule.h"
#include "runtime/Backend.h"

namespace pipec::runtime {

/// The verdict from two runs of one schedule, one per lowering (measured on
/// a GPU or simulated): the same arithmetic for every command.
GraphAdvice compareLowerings(const LoweringRun &streams, const LoweringRun &graph,
                             unsigned replays);

/// The verdict a report gives from its own two runs: compareLowerings, and,
/// where both ran on the device model with the figures the schedule's own
/// verdict came from, that verdict's margin (the graph_launch_us that flips
/// it), so that `run` says what `compile` and `advise` say.
GraphAdvice compareRuns(const LoweringRun &streams, const LoweringRun &graph,
                        unsigned replays);

/// The device model as the compiler's graph cost model: it simulates both
/// lowerings of the schedule.
class SimGraphCost : public GraphCostModel {
public:
  explicit SimGraphCost(const DeviceProfile &profile) : profile(profile) {}
  GraphAdvice verdict(const Schedule &schedule, unsigned replays) const override;

private:
  DeviceProfile profile;
};

} // namespace pipec::runtime

#endif // PIPEC_MODEL_GRAPHCOST_H
