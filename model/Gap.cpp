//===- Gap.cpp - Why a run takes longer than its lower bound --------------===//
//
// The lower bound counts work (the critical path, a busy resource); a run
// pays costs beside it. The device model measures each: the makespan with
// that cost taken away alone; with every one taken away (all at once), and
// what remains (orderings and overlap the bound does not see), which add up
// to the gap. Costs overlap and interact (stream gaps show only once
// launches are gone), so the parts alone need not add up: each cause's fair
// share of "all at once" is its Shapley value, the mean of what taking it
// away saves over every order of taking the causes away; the shares add up.

#include "model/Gap.h"

#include "compiler/program/TimeFormat.h"
#include "model/DeviceModel.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>

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

struct Cause {
  const char *words, *shortWords;
  /// The profile key the cost rests on (null: a mode of the model), and
  /// its value as words.
  const char *key;
  std::function<std::string(const DeviceProfile &)> value;
  std::function<void(DeviceProfile &, sim::ModelOptions &)> takeAway;
  /// Whether the schedule has what the cost is paid on (else taking it
  /// away changes no run: a null player of the game).
  std::function<bool(const Schedule &, const DeviceProfile &)> paid;
};

/// Counts of what the costs are paid on.
struct Has {
  size_t launches = 0, hostFunctions = 0, copies = 0, kernelStreams = 0;
};

Has whatItHas(const Schedule &s) {
  Has h;
  for (const Op &op : s.ops)
    h.launches += op.kind == Op::Launch;
  std::vector<uint8_t> kernels(s.streamPlan.streams.size(), 0);
  for (uint32_t v = 0; v < s.instances.size(); ++v) {
    if (s.onHost(v))
      continue;
    const StageKind kind = s.instances.stage(v).kind();
    h.hostFunctions += kind == StageKind::Host;
    h.copies += kind == StageKind::Copy;
    const uint32_t stream = s.streamOf(v);
    if (kind == StageKind::Kernel || kind == StageKind::Memset ||
        kind == StageKind::Collective)
      kernels[stream] = 1;
  }
  h.kernelStreams = size_t(std::count(kernels.begin(), kernels.end(), 1));
  return h;
}

std::vector<Cause> causes(const Has &has) {
  return {
      {"launch and dispatch on the host (issue=, launch, record and wait calls)", "launches",
       "launch_us", [](const DeviceProfile &p) { return formatTime(p.launchUs); },
       [](DeviceProfile &p, sim::ModelOptions &modes) {
         p.launchUs = p.recordUs = p.waitUs = 0;
         modes.dispatch = false;
       },
       [](const Schedule &, const DeviceProfile &) { return true; }},
      {"the host blocked (sync wake-ups, a full launch queue)", "the host blocked",
       "sync_latency_us", [](const DeviceProfile &p) { return formatTime(p.syncLatencyUs); },
       [](DeviceProfile &p, sim::ModelOptions &) {
         p.syncLatencyUs = 0;
         p.launchQueueDepth = std::numeric_limits<unsigned>::max();
       },
       [has](const Schedule &s, const DeviceProfile &p) {
         return s.syncs || s.joins || has.launches > p.launchQueueDepth;
       }},
      {"cross-stream waits resolving", "cross-stream waits", "wait_latency_us",
       [](const DeviceProfile &p) { return formatTime(p.waitLatencyUs); },
       [](DeviceProfile &p, sim::ModelOptions &) { p.waitLatencyUs = 0; },
       [](const Schedule &s, const DeviceProfile &) { return s.waits > 0; }},
      {"host-function latency", "host-function latency", "host_func_latency_us",
       [](const DeviceProfile &p) { return formatTime(p.hostFuncLatencyUs); },
       [](DeviceProfile &p, sim::ModelOptions &) { p.hostFuncLatencyUs = 0; },
       [has](const Schedule &, const DeviceProfile &) { return has.hostFunctions > 0; }},
      {"copy engines starting transfers", "copy-engine starts", "copy_latency_us",
       [](const DeviceProfile &p) { return formatTime(p.copyLatencyUs); },
       [](DeviceProfile &p, sim::ModelOptions &) { p.copyLatencyUs = 0; },
       [has](const Schedule &, const DeviceProfile &) { return has.copies > 0; }},
      {"gaps between back-to-back stages of a stream", "stream gaps", "stream_gap_us",
       [](const DeviceProfile &p) { return formatTime(p.streamGapUs); },
       [](DeviceProfile &p, sim::ModelOptions &) { p.streamGapUs = 0; },
       // Paid wherever a stage ends: the stream's next wake-up moves, and
       // with it when other streams' blocks are placed.
       [](const Schedule &, const DeviceProfile &) { return true; }},
      // A mode of the model: a queue per stream, no two sharing one.
      {"streams sharing hardware queues", "queue sharing", "hardware_queues",
       [](const DeviceProfile &p) { return std::to_string(p.hardwareQueues); },
       [](DeviceProfile &, sim::ModelOptions &modes) { modes.queuePerStream = true; },
       [](const Schedule &s, const DeviceProfile &p) {
         return s.streamPlan.streams.size() > p.hardwareQueues;
       }},
      // A mode of the model: each kernel has its device's SMs to itself.
      {"kernels sharing the SMs", "SM sharing", nullptr, nullptr,
       [](DeviceProfile &, sim::ModelOptions &modes) { modes.smsPerKernel = true; },
       [has](const Schedule &, const DeviceProfile &) { return has.kernelStreams >= 2; }},
  };
}

} // namespace

std::string runtime::gapPartNotes(const GapPart &part) {
  std::string notes;
  if (!part.with.empty())
    notes += " (saves it with " + part.with + ")";
  if (!part.assumed.empty())
    notes += " [" + part.assumed + ": a default, not measured]";
  return notes;
}

std::vector<GapPart> runtime::explainGap(const Schedule &s, const DeviceProfile &profile,
                                         double shareBudget) {
  const std::vector<Cause> all = causes(whatItHas(s));
  const size_t n = all.size();
  // What taking the causes of `mask` away saves, counted down to the bound
  // (taking the SMs' sharing away can take a run below a bound that counts
  // the SMs, and no fix makes a run beat its bound); memoized.
  const double bound = s.analysis.lowerBoundUs;
  std::map<uint32_t, double> makespans;
  auto makespanWithout = [&](uint32_t mask) {
    auto [it, added] = makespans.try_emplace(mask, 0.0);
    if (added) {
      DeviceProfile p = profile;
      sim::ModelOptions modes;
      for (size_t i = 0; i < n; ++i)
        if (mask >> i & 1)
          all[i].takeAway(p, modes);
      it->second = std::max(bound, makespanOf(s, p, modes));
    }
    return it->second;
  };
  // To the picosecond: a cause that changes nothing is 0, not 1e-14.
  auto exact = [](double us) { return std::round(us * 1e6) / 1e6; };
  const double base = makespanWithout(0);
  auto saves = [&](uint32_t mask) { return base - makespanWithout(mask); };

  // The causes paid on something: the others are null players (taking
  // them away changes no run). Held to that: every cause at once must
  // save what the paid ones at once do, else none is left out.
  const uint32_t everything = (1u << n) - 1;
  uint32_t paid = 0;
  for (size_t i = 0; i < n; ++i)
    if (all[i].paid(s, profile))
      paid |= 1u << i;
  if (makespanWithout(everything) != makespanWithout(paid))
    paid = everything;
  std::vector<size_t> players;
  for (size_t i = 0; i < n; ++i)
    if (paid >> i & 1)
      players.push_back(i);
  const size_t m = players.size();
  std::vector<double> share(n, 0.0);
  auto maskOf = [&](uint32_t subset) { // a subset of the players, as causes
    uint32_t mask = 0;
    for (size_t k = 0; k < m; ++k)
      if (subset >> k & 1)
        mask |= 1u << players[k];
    return mask;
  };
  const double instances = double(std::max<size_t>(1, s.instances.size()));
  size_t orders = 0; // 0: every coalition
  if (double(1u << m) * instances > shareBudget && m > 3)
    orders = std::clamp<size_t>(size_t(shareBudget / (double(m) * instances)), 2, 2 * m);
  if (!orders) {
    // Shapley: each coalition's marginal saving, weighted |S|!(m-|S|-1)!/m!.
    std::vector<double> factorial(m + 1, 1.0);
    for (size_t k = 1; k <= m; ++k)
      factorial[k] = factorial[k - 1] * double(k);
    for (uint32_t subset = 0; subset < (1u << m); ++subset) {
      const size_t size = size_t(__builtin_popcount(subset));
      for (size_t k = 0; k < m; ++k)
        if (!(subset >> k & 1)) {
          const double weight = factorial[size] * factorial[m - size - 1] / factorial[m];
          share[players[k]] +=
              weight * (saves(maskOf(subset | 1u << k)) - saves(maskOf(subset)));
        }
    }
  } else {
    // The orders k, k+1, ... (round the players) and their reverses.
    for (size_t o = 0; o < orders; ++o) {
      const size_t first = (o / 2) * m / ((orders + 1) / 2);
      const bool reverse = o % 2 == 1;
      uint32_t subset = 0;
      for (size_t step = 0; step < m; ++step) {
        const size_t k = reverse ? (first + m - step) % m : (first + step) % m;
        const double before = saves(maskOf(subset));
        subset |= 1u << k;
        share[players[k]] += (saves(maskOf(subset)) - before) / double(orders);
      }
    }
  }

  std::vector<GapPart> out;
  for (size_t i = 0; i < n; ++i) {
    const double alone = exact(saves(1u << i));
    GapPart part;
    part.cause = alone < 0 ? std::string(all[i].words) +
                                 " (slower without it: a start moved earlier met other work)"
                           : std::string(all[i].words);
    part.us = alone;
    part.shareUs = exact(share[i]);
    if (all[i].key && profile.assumed(all[i].key))
      part.assumed = std::string(all[i].key) + " = " + all[i].value(profile);
    // A cause that saves little alone but has a share saves it with
    // another: the one whose company adds most to what it saves.
    if (std::fabs(alone) < 0.5 * std::fabs(part.shareUs)) {
      double best = 0;
      for (size_t j : players)
        if (j != i) {
          const double together = saves(1u << i | 1u << j) - saves(1u << j) - alone;
          if (together > best + 1e-9) {
            best = together;
            part.with = all[j].shortWords;
          }
        }
    }
    out.push_back(std::move(part));
  }
  const double none = makespanWithout(everything);
  auto line = [&](std::string cause, double us) {
    GapPart part;
    part.cause = std::move(cause);
    part.us = part.shareUs = exact(us);
    out.push_back(std::move(part));
  };
  line(orders ? std::string(kAllAtOnce) + " (the shares estimated over " +
                    std::to_string(orders) + " orders of taking them away)"
              : std::string(kAllAtOnce),
       base - none);
  line(kWhatRemains, none - bound);
  return out;
}
