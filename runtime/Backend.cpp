//===- Backend.cpp - What every backend shares ----------------------------===//

#include "runtime/Backend.h"

#include <algorithm>
#include <cmath>

using namespace pipec;
using namespace pipec::runtime;

Backend::~Backend() = default;

uint64_t runtime::countViolations(const Schedule &s,
                                  const std::vector<double> &start,
                                  const std::vector<double> &end) {
  // A little slack for clocks that round: a nanosecond.
  constexpr double kSlack = 1e-3;
  const size_t n = s.instances.size();
  std::vector<uint32_t> lastOnStream(s.streamPlan.streams.size(), UINT32_MAX);
  uint64_t violations = 0;
  for (uint32_t v = 0; v < n; ++v) {
    for (uint32_t u : s.instances.deps().row(v))
      violations += start[v] + kSlack < end[u];
    uint32_t &prev = lastOnStream[s.streamOf(v)];
    if (prev != UINT32_MAX) {
      llvm::ArrayRef<uint32_t> deps = s.instances.deps().row(v);
      // A stream predecessor that is also a dependency was counted above.
      if (!std::binary_search(deps.begin(), deps.end(), prev))
        violations += start[v] + kSlack < end[prev];
    }
    prev = v;
  }
  return violations;
}

void runtime::summarise(LoweringRun &run) {
  run.firstStartUs = 0;
  double last = 0;
  bool any = false;
  for (size_t v = 0; v < run.start.size(); ++v) {
    if (!any || run.start[v] < run.firstStartUs)
      run.firstStartUs = run.start[v];
    last = std::max(last, run.end[v]);
    any = true;
  }
  run.makespanUs = any ? last - run.firstStartUs : 0;
  run.violations = countViolations(*run.schedule, run.start, run.end);
}

std::pair<double, double> runtime::medianAndP95(std::vector<double> samples) {
  if (samples.empty())
    return {0, 0};
  std::sort(samples.begin(), samples.end());
  auto rank = [&](double q) {
    size_t index = static_cast<size_t>(std::ceil(q * samples.size()));
    return samples[std::min(samples.size() - 1, index ? index - 1 : 0)];
  };
  return {rank(0.5), rank(0.95)};
}
