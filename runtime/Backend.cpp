//===- Backend.cpp - What every backend shares ----------------------------===//

#include "runtime/Backend.h"

#include <algorithm>
#include <chrono>
#include <cmath>

using namespace pipec;
using namespace pipec::runtime;

Backend::~Backend() = default;

llvm::Expected<std::vector<LoweringRun>> Backend::runAll(const Schedule &schedule,
                                                         llvm::ArrayRef<Lowering> lowerings,
                                                         const RunOptions &options) {
  std::vector<LoweringRun> runs;
  for (Lowering l : lowerings) {
    auto clock = std::chrono::steady_clock::now();
    llvm::Expected<LoweringRun> r = run(schedule, l, options);
    if (!r)
      return r.takeError();
    r->runSeconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - clock).count();
    runs.push_back(std::move(*r));
  }
  return runs;
}

uint64_t runtime::countViolations(const Schedule &s, const std::vector<double> &start,
                                  const std::vector<double> &end, double slackUs) {
  const size_t n = s.instances.size();
  // Each host thread's cpu stages are one more chain: they never overlap.
  std::vector<uint32_t> lastOnStream(s.chains(), UINT32_MAX);
  uint64_t violations = 0;
  for (uint32_t v = 0; v < n; ++v) {
    for (uint32_t u : s.instances.deps().row(v))
      violations += start[v] + slackUs < end[u];
    uint32_t &prev = lastOnStream[s.streamOf(v)];
    if (prev != UINT32_MAX) {
      llvm::ArrayRef<uint32_t> deps = s.instances.deps().row(v);
      // A stream predecessor that is also a dependency was counted above.
      if (!std::binary_search(deps.begin(), deps.end(), prev))
        violations += start[v] + slackUs < end[prev];
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
  if (!run.schedule->pipeline.devices.empty() && any)
    run.devices = deviceUses(
        *run.schedule, [&](uint32_t v) { return std::make_pair(run.start[v], run.end[v]); },
        run.makespanUs);
  run.violations = countViolations(*run.schedule, run.start, run.end, run.violationSlackUs);
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
