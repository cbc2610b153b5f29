//===- AssignmentCost.cpp -------------------------------------------------===//

#include "model/AssignmentCost.h"

#include "model/DeviceModel.h"

#include <algorithm>
#include <limits>

using namespace pipec;
using namespace pipec::runtime;

double SimAssignmentCost::run(const program::Pipeline &pinned, std::vector<double> &start,
                              std::vector<double> &end) const {
  ScheduleOptions options;
  options.maxStreams = std::numeric_limits<unsigned>::max();
  Schedule s(pinned, profile, options);
  sim::ModelOptions model;
  model.recordHost = false;
  sim::ReplayTrace trace = sim::simulate(s, Lowering::Streams, profile, model);
  start = std::move(trace.start);
  end = std::move(trace.end);
  if (trace.unfinished) // a deadlock: never the fastest
    return std::numeric_limits<double>::infinity();
  if (start.empty())
    return 0;
  double first = *std::min_element(start.begin(), start.end());
  double last = *std::max_element(end.begin(), end.end());
  return last - first;
}
