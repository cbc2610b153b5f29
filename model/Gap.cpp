//===- Gap.cpp - Why a run takes longer than its lower bound --------------===//
//
// The lower bound counts work (the critical path, a busy resource); a run
// pays costs beside it. The device model measures each: the makespan with
// that cost taken away (and the ones before it), counted down to the bound,
// so the parts sum to the gap, the last being what no cost explains
// (orderings and overlap the bound does not see).

#include "model/Gap.h"

#include "model/DeviceModel.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

using namespace pipec;
using namespace pipec::runtime;

namespace {

double makespanOf(const Schedule &s, const DeviceProfile &profile,
                  const sim::ModelOptions &modes) {
  sim::ModelOptions options = modes;
  options.recordHost = false;
  // A settled periodic program's iterations are skipped ahead, as the
  // graph verdict's runs skip them: each what-if costs what its first
  // iterations do, not the whole program.
  options.extrapolate = true;
  sim::ReplayTrace t = sim::simulate(s, Lowering::Streams, profile, options);
  if (t.start.empty())
    return 0;
  return *std::max_element(t.end.begin(), t.end.end()) -
         *std::min_element(t.start.begin(), t.start.end());
}

} // namespace

std::vector<GapPart> runtime::explainGap(const Schedule &s, const DeviceProfile &profile) {
  struct Cause {
    const char *words;
    std::function<void(DeviceProfile &, sim::ModelOptions &)> takeAway;
  };
  const Cause causes[] = {
      {"launch and dispatch on the host (issue=, launch, record and wait calls)",
       [](DeviceProfile &p, sim::ModelOptions &modes) {
         p.launchUs = p.recordUs = p.waitUs = 0;
         modes.dispatch = false;
       }},
      {"the host blocked (sync wake-ups, a full launch queue)",
       [](DeviceProfile &p, sim::ModelOptions &) {
         p.syncLatencyUs = 0;
         p.launchQueueDepth = std::numeric_limits<unsigned>::max();
       }},
      {"cross-stream waits resolving",
       [](DeviceProfile &p, sim::ModelOptions &) { p.waitLatencyUs = 0; }},
      {"host-function latency",
       [](DeviceProfile &p, sim::ModelOptions &) { p.hostFuncLatencyUs = 0; }},
      {"copy engines starting transfers",
       [](DeviceProfile &p, sim::ModelOptions &) { p.copyLatencyUs = 0; }},
      {"gaps between back-to-back stages of a stream",
       [](DeviceProfile &p, sim::ModelOptions &) { p.streamGapUs = 0; }},
      // A mode of the model: a queue per stream, no two sharing one.
      {"streams sharing hardware queues",
       [](DeviceProfile &, sim::ModelOptions &modes) { modes.queuePerStream = true; }},
      // A mode of the model: each kernel has its device's SMs to itself.
      {"kernels sharing the SMs",
       [](DeviceProfile &, sim::ModelOptions &modes) { modes.smsPerKernel = true; }},
  };
  // Each figure is what taking that cost away alone saves: the makespan
  // minus the makespan without it, both counted down to the bound, no
  // further (taking the SMs' sharing away can take a run below a bound
  // that counts the SMs, and no fix makes a run beat its bound). The
  // figures need not add up (costs overlap, and the model is not
  // monotonic); all of them at once, and what remains, do.
  std::vector<GapPart> out;
  const double bound = s.analysis.lowerBoundUs;
  const double base = std::max(bound, makespanOf(s, profile, sim::ModelOptions()));
  // To the picosecond: a cause that changes nothing is 0, not 1e-14.
  auto exact = [](double us) { return std::round(us * 1e6) / 1e6; };
  DeviceProfile all = profile;
  sim::ModelOptions allModes;
  for (const Cause &c : causes) {
    DeviceProfile p = profile;
    sim::ModelOptions modes;
    c.takeAway(p, modes);
    c.takeAway(all, allModes);
    const double saved = exact(base - std::max(bound, makespanOf(s, p, modes)));
    out.push_back({saved < 0 ? std::string(c.words) + " (slower without it: a start moved "
                                                      "earlier met other work)"
                             : std::string(c.words),
                   saved});
  }
  const double none = std::max(bound, makespanOf(s, all, allModes));
  out.push_back({kAllAtOnce, exact(base - none)});
  out.push_back({kWhatRemains, exact(none - bound)});
  return out;
}
