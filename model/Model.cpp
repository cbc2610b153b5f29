//===- Model.cpp - The model's runs for what asks only their times ---------===//

#include "model/Model.h"

#include "model/DeviceModel.h"

using namespace pipec;
using namespace pipec::model;

Model::Times Model::times(const Schedule &schedule, const std::vector<double> *issueAt) const {
  sim::ModelOptions options;
  options.recordHost = false;
  options.issueAt = issueAt;
  sim::ReplayTrace run = sim::simulate(schedule, Lowering::Streams, device, options);
  Times out;
  out.start = std::move(run.start);
  out.end = std::move(run.end);
  out.unfinished = run.unfinished != 0;
  return out;
}
