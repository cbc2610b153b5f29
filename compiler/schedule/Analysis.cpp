//===- Analysis.cpp -------------------------------------------------------===//

#include "compiler/schedule/Analysis.h"

#include "compiler/schedule/Schedule.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace pipec;
using llvm::formatv;

static GraphAdvice adviseGraph(const Schedule &s, const DeviceProfile &profile,
                               unsigned replays) {
  GraphAdvice a;
  const size_t nodes = s.instances.size();
  uint64_t dynamicNodes = 0;
  for (uint32_t v = 0; v < nodes; ++v)
    dynamicNodes += s.instances.stage(v).dynamic;
  a.streamSubmitUs = double(nodes) * profile.launchUs +
                     double(s.records) * profile.recordUs +
                     double(s.waits) * profile.waitUs;
  a.graphSubmitUs = profile.graphLaunchUs + double(nodes) * profile.graphNodeUs +
                    double(dynamicNodes) * profile.nodeUpdateUs;
  a.instantiateUs = double(nodes) * profile.instantiateNodeUs;
  double saved = a.streamSubmitUs - a.graphSubmitUs;
  a.breakEvenReplays = saved > 0 ? a.instantiateUs / saved : 0;

  a.reasons.push_back(formatv("one replay costs ~{0:f1} us of host time as "
                              "stream launches and ~{1:f1} us as a graph launch",
                              a.streamSubmitUs, a.graphSubmitUs));
  if (saved > 0)
    a.reasons.push_back(formatv("instantiating the graph (~{0:f1} us) pays "
                                "back after {1:f1} replays",
                                a.instantiateUs, a.breakEvenReplays));
  else
    a.reasons.push_back("a graph launch costs more than the stream launches "
                        "it replaces: it never pays back its instantiation");
  if (dynamicNodes)
    a.reasons.push_back(formatv(
        "{0} dynamic stage instance(s) change every replay: their graph "
        "nodes must be updated before each launch",
        dynamicNodes));
  a.suitable = dynamicNodes == 0 && saved > 0 &&
               a.breakEvenReplays <= double(replays);
  if (saved > 0 && a.breakEvenReplays > double(replays))
    a.reasons.push_back(formatv("that is more than the {0} replays assumed",
                                replays));
  return a;
}

Analysis pipec::analyze(const Schedule &s, const DeviceProfile &profile,
                        unsigned replays) {
  Analysis a;
  const Instances &inst = s.instances;
  const size_t n = inst.size();
  a.streamBusyUs.assign(s.streamPlan.streams.size(), 0);
  for (uint32_t v = 0; v < n; ++v) {
    double d = inst.stage(v).durationUs;
    a.sequentialUs += d;
    a.streamBusyUs[s.streamOf(v)] += d;
  }
  for (double busy : a.streamBusyUs)
    a.streamBoundUs = std::max(a.streamBoundUs, busy);

  // Longest path through the reduction (which keeps every longest path of
  // dependencies and stream order: durations are not negative).
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<double> finish(n, 0);
  std::vector<uint32_t> via(n, kNone);
  uint32_t last = kNone;
  for (uint32_t v = 0; v < n; ++v) {
    double start = 0;
    for (uint32_t u : s.reduction.kept.row(v))
      if (via[v] == kNone || finish[u] > start) {
        start = finish[u];
        via[v] = u;
      }
    finish[v] = start + inst.stage(v).durationUs;
    if (last == kNone || finish[v] > finish[last])
      last = v;
  }
  for (uint32_t v = last; v != kNone; v = via[v])
    a.criticalPath.push_back(v);
  std::reverse(a.criticalPath.begin(), a.criticalPath.end());
  a.criticalPathUs = last == kNone ? 0 : finish[last];

  // Stream-order edges on the critical path, and what each costs: how much
  // later its consumer starts than its declared dependencies alone allow.
  for (size_t i = 1; i < a.criticalPath.size(); ++i) {
    uint32_t u = a.criticalPath[i - 1], v = a.criticalPath[i];
    llvm::ArrayRef<uint32_t> deps = inst.deps().row(v);
    if (std::binary_search(deps.begin(), deps.end(), u))
      continue;
    double allowed = 0;
    for (uint32_t d : deps)
      allowed = std::max(allowed, finish[d]);
    double delay = finish[u] - allowed;
    if (delay > 0)
      a.streamOrderOnCriticalPath.push_back({u, v, s.streamOf(v), delay});
  }

  a.lowerBoundUs = std::max(a.criticalPathUs, a.streamBoundUs);
  a.overlapRatio = a.sequentialUs > 0 ? 1 - a.lowerBoundUs / a.sequentialUs : 0;
  for (uint32_t v = 0; v < n; ++v)
    for (uint32_t u : inst.deps().row(v))
      a.crossStreamDependencies += s.streamOf(u) != s.streamOf(v);
  a.redundantDependencies = s.reduction.removedDeclared;
  a.eventDensity = n ? double(s.records) / double(n) : 0;
  a.graphAdvice = adviseGraph(s, profile, replays);
  return a;
}
