//===- AssignmentCost.h - The device model, for choosing streams ----------===//
//
// The compiler's makespan assignment asks what a candidate assignment costs;
// this answers with the device model: the pinned program is scheduled (its
// fewest waits) and one replay of its stream lowering simulated.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_MODEL_ASSIGNMENTCOST_H
#define PIPEC_MODEL_ASSIGNMENTCOST_H

#include "compiler/schedule/Schedule.h"

namespace pipec::runtime {

class SimAssignmentCost : public AssignmentEvaluator {
public:
  explicit SimAssignmentCost(const DeviceProfile &profile) : profile(profile) {}
  double run(const program::Pipeline &pinned, std::vector<double> &start,
             std::vector<double> &end) const override;

private:
  DeviceProfile profile;
};

} // namespace pipec::runtime

#endif // PIPEC_MODEL_ASSIGNMENTCOST_H
