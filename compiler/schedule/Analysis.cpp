//===- Analysis.cpp -------------------------------------------------------===//

#include "compiler/schedule/Analysis.h"

#include "compiler/program/Communication.h"

#include "compiler/program/TimeFormat.h"
#include "compiler/schedule/Schedule.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

using namespace pipec;
using llvm::formatv;

/// The resource bounds: no run on the device model, in any lowering, can
/// finish sooner than any of these (docs/scheduling.md has the argument).
/// Each device has its own SMs, copy engines and host-function executor:
/// with several, each bound is the busiest device's.
static void addResourceBounds(const Schedule &s, const DeviceProfile &p, Analysis &a) {
  const Instances &inst = s.instances;
  const size_t devices = s.pipeline.deviceCount();
  // SM area, per resource: a block holds its share of one SM for T/waves.
  DeviceProfile::BlockUse cap = p.smCapacity();
  struct Use {
    double area[4] = {0, 0, 0, 0}; // threads, slots, shared memory, registers
    // Per direction: the bytes' time, and how many copies (each waits the
    // engine's latency first).
    double copies[3] = {0, 0, 0};
    uint64_t copyCount[3] = {0, 0, 0};
    double host = 0;
  };
  std::vector<Use> use(devices);
  // Each kernel's share of each resource, worked out once per stage (and
  // added up per instance, in order, as before).
  std::vector<std::array<double, 4>> share(s.pipeline.stages.size());
  for (size_t i = 0; i < share.size(); ++i) {
    const program::Stage &st = s.pipeline.stages[i];
    if (st.kind() != StageKind::Kernel)
      continue;
    DeviceProfile::BlockUse block =
        p.blockUse(st.kernel().threads, st.kernel().smemBytes, st.kernel().regs);
    double blockTime =
        double(st.kernel().blocks) * st.durationUs / double(p.waves(st.kernel()));
    share[i] = {blockTime * double(block.threads) / double(cap.threads),
                blockTime * double(block.slots) / double(cap.slots),
                blockTime * double(block.smem) / double(cap.smem),
                blockTime * double(block.regs) / double(cap.regs)};
  }
  for (uint32_t v = 0; v < inst.size(); ++v) {
    const program::Stage &st = inst.stage(v);
    if (s.onHost(v))
      continue; // the host thread: its own bound
    Use &u = use[s.streamPlan.streams[s.streamOf(v)].device];
    switch (st.kind()) {
    case StageKind::Kernel: {
      const std::array<double, 4> &k = share[inst.stageOf(v)];
      for (unsigned r = 0; r < 4; ++r)
        u.area[r] += k[r];
      break;
    }
    case StageKind::Copy:
      u.copies[engineIndex(st.copy().direction)] += st.durationUs;
      ++u.copyCount[engineIndex(st.copy().direction)];
      break;
    case StageKind::Host:
      u.host += st.durationUs;
      break;
    case StageKind::Memset:
    case StageKind::Collective:
      break; // a fill, or NCCL's work: bounded by the paths, not a resource
    case StageKind::Cpu:
      break;
    }
  }
  // The busiest device's, named when there are several.
  auto busiest = [&](auto of, llvm::StringRef words) {
    double most = 0;
    size_t at = 0;
    for (size_t d = 0; d < devices; ++d)
      if (double x = of(use[d]); x > most)
        most = x, at = d;
    std::string said = words.str();
    if (!s.pipeline.devices.empty() && devices > 1)
      said += " of device '" + s.pipeline.devices[at].name + "'";
    return std::make_pair(most, said);
  };
  auto add = [&](const char *key, auto of, llvm::StringRef words) {
    auto [us, said] = busiest(of, words);
    a.bounds.push_back({key, said, us});
  };
  add(
      "sm_area",
      [&](const Use &u) {
        return *std::max_element(u.area, u.area + 4) / double(std::max(1u, p.sms));
      },
      "the SMs' capacity (all kernels' block-time)");
  // One engine: every copy's latency and bytes in turn. Several engines
  // share the direction's bandwidth: the bytes still take their time one
  // after another, but only the first latency is sure to be waited alone.
  auto copyBound = [&](unsigned d) {
    return [&, d](const Use &u) {
      uint64_t latencies = p.copyEngines(static_cast<CopyDirection>(d)) > 1
                               ? std::min<uint64_t>(u.copyCount[d], 1)
                               : u.copyCount[d];
      return u.copies[d] + double(latencies) * p.copyLatencyUs;
    };
  };
  add("copy_h2d", copyBound(0),
      p.copyEnginesH2D > 1 ? "the H2D copy engines" : "the H2D copy engine");
  add("copy_d2h", copyBound(1),
      p.copyEnginesD2H > 1 ? "the D2H copy engines" : "the D2H copy engine");
  add("copy_d2d", copyBound(2), "the D2D copy engine");
  add(
      "host_functions", [](const Use &u) { return u.host; }, "the host-function executor");
}

/// Sorted, disjoint spans covering what `spans` cover.
static std::vector<std::pair<double, double>>
unionOf(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<double, double>> out;
  for (auto [start, end] : spans)
    if (!out.empty() && start <= out.back().second)
      out.back().second = std::max(out.back().second, end);
    else
      out.push_back({start, end});
  return out;
}

/// The time two sets of sorted, disjoint spans share.
static double overlapOf(const std::vector<std::pair<double, double>> &a,
                        const std::vector<std::pair<double, double>> &b) {
  double shared = 0;
  for (size_t i = 0, j = 0; i < a.size() && j < b.size();) {
    shared +=
        std::max(0.0, std::min(a[i].second, b[j].second) - std::max(a[i].first, b[j].first));
    if (a[i].second < b[j].second)
      ++i;
    else
      ++j;
  }
  return shared;
}

std::vector<DeviceUse>
pipec::deviceUses(const Schedule &s,
                  llvm::function_ref<std::pair<double, double>(uint32_t)> spanOf,
                  double stepUs, llvm::function_ref<bool(uint32_t)> communicates) {
  // Per device: its work, and apart, its communication. A stream's
  // instances follow one another, so only work on two streams of one
  // device overlaps.
  using Spans = std::vector<std::pair<double, double>>;
  const program::Pipeline &pipeline = s.pipeline;
  const size_t devices = pipeline.deviceCount();
  std::vector<Spans> work(devices), comm(devices), other(devices);
  for (uint32_t v = 0; v < s.instances.size(); ++v)
    if (!s.onHost(v)) {
      const program::Stage &st = s.instances.stage(v);
      const auto [start, end] = spanOf(v);
      if (!(end > start))
        continue;
      const uint32_t device = s.streamPlan.streams[s.streamOf(v)].device;
      work[device].push_back({start, end});
      const bool talks = communicates ? communicates(v) : program::isCommunication(st);
      (talks ? comm : other)[device].push_back({start, end});
    }
  std::vector<DeviceUse> uses;
  for (size_t k = 0; k < devices; ++k) {
    DeviceUse use;
    use.name = pipeline.devices.empty() ? std::string() : pipeline.devices[k].name;
    Spans busy = unionOf(std::move(work[k]));
    for (auto [start, end] : busy)
      use.busyUs += end - start;
    // Hidden: communication while other work runs on the device.
    Spans talk = unionOf(std::move(comm[k]));
    for (auto [start, end] : talk)
      use.commUs += end - start;
    use.hiddenCommUs = overlapOf(talk, unionOf(std::move(other[k])));
    use.bubbleFraction = stepUs > 0 ? std::max(0.0, 1 - use.busyUs / stepUs) : 0;
    uses.push_back(std::move(use));
  }
  return uses;
}

/// Calls `each(v, predecessors)` for every instance in issue order, with
/// its predecessors that every lowering keeps, for the critical path:
/// dependencies, stream order, the host thread's order of cpu stages, and,
/// for a device stage, the last cpu stage issued before its graph segment
/// is launched (the stream lowering issues it after that one too; a cpu
/// stage issued inside a segment does not hold the segment's later stages
/// back in a graph). Without cpu stages: the reduction.
template <typename Each> static void forEachInstance(const Schedule &s, Each each) {
  const Instances &inst = s.instances;
  const size_t n = inst.size();
  constexpr uint32_t kNone = UINT32_MAX;
  if (!s.hasHostStages()) {
    for (uint32_t v = 0; v < n; ++v)
      each(v, s.reduction.kept.row(v));
    return;
  }
  std::vector<uint32_t> lastOn(s.chains(), kNone);
  std::vector<uint32_t> anchor(s.segments, kNone);
  std::vector<uint8_t> seen(s.segments, 0);
  std::vector<uint32_t> preds;
  // Per device's host thread. Several devices are lowered to streams only:
  // a device stage follows the last cpu stage its thread ran.
  std::vector<uint32_t> lastCpu(s.pipeline.deviceCount(), kNone);
  const bool several = lastCpu.size() > 1;
  for (uint32_t v = 0; v < n; ++v) {
    llvm::ArrayRef<uint32_t> deps = inst.deps().row(v);
    preds.assign(deps.begin(), deps.end());
    uint32_t &previous = lastOn[s.streamOf(v)];
    if (previous != kNone)
      preds.push_back(previous);
    previous = v;
    if (s.onHost(v)) {
      lastCpu[s.threadOf(v)] = v;
    } else if (several) {
      if (lastCpu[s.threadOf(v)] != kNone)
        preds.push_back(lastCpu[s.threadOf(v)]);
    } else {
      uint32_t segment = s.segmentOf[v];
      if (!seen[segment]) {
        seen[segment] = 1;
        anchor[segment] = lastCpu[0];
      }
      if (anchor[segment] != kNone)
        preds.push_back(anchor[segment]);
    }
    each(v, llvm::ArrayRef<uint32_t>(preds));
  }
}

Analysis pipec::analyzeSchedule(const Schedule &s, const DeviceProfile &profile) {
  Analysis a;
  const Instances &inst = s.instances;
  const size_t n = inst.size();
  a.streamBusyUs.assign(s.streamPlan.streams.size(), 0);
  a.hostBusyUs.assign(s.pipeline.deviceCount(), 0);
  for (uint32_t v = 0; v < n; ++v) {
    double d = inst.stage(v).durationUs;
    a.sequentialUs += d;
    if (s.onHost(v))
      a.hostBusyUs[s.threadOf(v)] += d;
    else
      a.streamBusyUs[s.streamOf(v)] += d;
  }
  for (double busy : a.streamBusyUs)
    a.streamBoundUs = std::max(a.streamBoundUs, busy);

  // Longest path through what every lowering keeps (the reduction keeps
  // every longest path of dependencies and stream order: durations are not
  // negative).
  constexpr uint32_t kNone = UINT32_MAX;
  std::vector<double> finish(n, 0);
  std::vector<uint32_t> via(n, kNone);
  uint32_t last = kNone;
  // A collective's parts, issued one after another (consecutive ids): each
  // may start when its own predecessors are done, and every part ends the
  // collective's time after the last of them started (NCCL's semantics).
  std::vector<double> partStart;
  forEachInstance(s, [&](uint32_t v, llvm::ArrayRef<uint32_t> preds) {
    double start = 0;
    for (uint32_t u : preds)
      if (via[v] == kNone || finish[u] > start) {
        start = finish[u];
        via[v] = u;
      }
    const program::Stage &st = inst.stage(v);
    if (program::collectiveParts(st) > 1) {
      partStart.push_back(start);
      if (partStart.size() < st.collective().parts)
        return;
      const uint32_t first = v + 1 - st.collective().parts;
      size_t latest = std::max_element(partStart.begin(), partStart.end()) - partStart.begin();
      for (uint32_t w = first; w <= v; ++w) {
        finish[w] = partStart[latest] + st.durationUs;
        if (partStart[w - first] < partStart[latest])
          via[w] = via[first + latest]; // held back by another part's start
        if (last == kNone || finish[w] > finish[last])
          last = w;
      }
      partStart.clear();
      return;
    }
    finish[v] = start + st.durationUs;
    if (last == kNone || finish[v] > finish[last])
      last = v;
  });
  for (uint32_t v = last; v != kNone; v = via[v])
    a.criticalPath.push_back(v);
  std::reverse(a.criticalPath.begin(), a.criticalPath.end());
  a.criticalPathUs = last == kNone ? 0 : finish[last];

  // Each declared device: the time its streams' work covers on that
  // timeline, and the rest of the span (its bubble).
  if (!s.pipeline.devices.empty())
    a.devices = deviceUses(
        s,
        [&](uint32_t v) {
          return std::make_pair(finish[v] - inst.stage(v).durationUs, finish[v]);
        },
        a.criticalPathUs);

  // Stream-order edges on the critical path, and what each costs: how much
  // later its consumer starts than its declared dependencies alone allow.
  for (size_t i = 1; i < a.criticalPath.size(); ++i) {
    uint32_t u = a.criticalPath[i - 1], v = a.criticalPath[i];
    llvm::ArrayRef<uint32_t> deps = inst.deps().row(v);
    // (Another stream's: a collective's part held back by another part.)
    if (std::binary_search(deps.begin(), deps.end(), u) || s.onHost(u) || s.onHost(v) ||
        s.streamOf(u) != s.streamOf(v))
      continue;
    double allowed = 0;
    for (uint32_t d : deps)
      allowed = std::max(allowed, finish[d]);
    double delay = finish[u] - allowed;
    if (delay <= 0)
      continue;
    StreamOrderDelay d{u, v, s.streamOf(v), delay};
    const program::Stage &from = inst.stage(u), &to = inst.stage(v);
    if (from.kind() == StageKind::Copy && to.kind() == StageKind::Copy &&
        from.copy().direction == to.copy().direction &&
        from.copy().direction != program::CopyDirection::P2P &&
        profile.copyEngines(from.copy().direction) == 1) {
      d.reason = StreamOrderDelay::CopyEngine;
    } else if (s.pipeline.syncDeclared) {
      // A slot both touch, one writing: the stream order is its only order.
      const uint32_t iu = inst.iterationOf(u), iv = inst.iterationOf(v);
      for (const program::Access &x : from.accesses)
        for (const program::Access &y : to.accesses) {
          const uint32_t slots = s.pipeline.buffers[x.buffer].slots;
          if (d.reason == StreamOrderDelay::StreamOrder && x.buffer == y.buffer &&
              (x.write || y.write) && x.slot(iu, slots) == y.slot(iv, slots)) {
            d.reason = StreamOrderDelay::Buffer;
            d.buffer = x.buffer;
          }
        }
    }
    a.streamOrderOnCriticalPath.push_back(d);
  }

  a.bounds.push_back({"critical_path", "the critical path", a.criticalPathUs});
  uint32_t busiest = 0;
  for (uint32_t i = 0; i < a.streamBusyUs.size(); ++i)
    if (a.streamBusyUs[i] > a.streamBusyUs[busiest])
      busiest = i;
  a.bounds.push_back({"streams",
                      a.streamBusyUs.empty() ? std::string("the busiest stream")
                                             : "stream '" + s.stream(busiest).name + "'",
                      a.streamBoundUs});
  addResourceBounds(s, profile, a);
  // A host thread runs each of its cpu stages in turn, in every lowering.
  const size_t thread =
      std::max_element(a.hostBusyUs.begin(), a.hostBusyUs.end()) - a.hostBusyUs.begin();
  a.bounds.push_back(
      {"host",
       s.pipeline.devices.size() > 1
           ? "the cpu work of " + s.pipeline.devices[thread].name + "'s host thread"
           : std::string("the host thread's cpu work"),
       a.hostBusyUs[thread]});
  a.binding = 0;
  for (size_t i = 1; i < a.bounds.size(); ++i)
    if (a.bounds[i].us > a.bounds[a.binding].us)
      a.binding = i;
  a.lowerBoundUs = a.bounds[a.binding].us;
  a.overlapRatio = a.sequentialUs > 0 ? 1 - a.lowerBoundUs / a.sequentialUs : 0;
  for (uint32_t v = 0; v < n; ++v)
    for (uint32_t u : inst.deps().row(v))
      a.crossStreamDependencies +=
          s.streamOf(u) != s.streamOf(v) && !s.onHost(u) && !s.onHost(v);
  // Declared dependencies only: an inferred one the reduction drops is just
  // one the data needed and something else already gives.
  a.redundantDependencies = 0;
  for (uint64_t e = 0; e < s.reduction.declaredKept.size(); ++e)
    a.redundantDependencies += !s.reduction.declaredKept[e] && inst.inferredFrom(e) < 0;
  a.eventDensity = n ? double(s.records) / double(n) : 0;
  for (const program::Buffer &b : s.pipeline.buffers)
    (b.host ? a.hostBytes : a.deviceBytes) += b.bytes * b.slots;
  return a;
}

std::string pipec::describeStreamOrderDelay(const Schedule &s, const StreamOrderDelay &d) {
  std::string words = formatv("stream order puts '{0}' before '{1}' on stream '{2}': on the "
                              "critical path, '{1}' starts {3} later than its own "
                              "dependencies allow",
                              s.instances.name(d.from), s.instances.name(d.to),
                              s.stream(d.stream).name, formatTime(d.delayUs));
  switch (d.reason) {
  case StreamOrderDelay::StreamOrder:
    break;
  case StreamOrderDelay::Buffer:
    words += formatv("; that order is what keeps buffer '{0}' race-free (sync declared): "
                     "moving either stage to another stream would race",
                     s.pipeline.buffers[d.buffer].name);
    break;
  case StreamOrderDelay::CopyEngine: {
    const program::Stage &st = s.instances.stage(d.from);
    words += formatv("; both are {0} copies, and the device's one {0} copy engine runs them "
                     "one at a time on any stream: another stream would not start it sooner",
                     spelling(st.copy().direction));
    break;
  }
  }
  return words;
}

std::vector<std::string> pipec::describeStreamOrderDelays(const Schedule &s, size_t most) {
  const Analysis &a = s.analysis;
  struct OnStream {
    const StreamOrderDelay *longest = nullptr;
    size_t edges = 0;
    double totalUs = 0;
  };
  std::map<uint32_t, OnStream> byStream;
  for (const StreamOrderDelay &d : a.streamOrderOnCriticalPath) {
    if (s.instances.deps().row(d.to).empty())
      continue;
    OnStream &o = byStream[d.stream];
    ++o.edges;
    o.totalUs += d.delayUs;
    if (!o.longest || d.delayUs > o.longest->delayUs)
      o.longest = &d;
  }
  std::vector<const OnStream *> order;
  for (const auto &[stream, o] : byStream)
    order.push_back(&o);
  std::stable_sort(order.begin(), order.end(), [](const OnStream *x, const OnStream *y) {
    return x->longest->delayUs > y->longest->delayUs;
  });
  std::vector<std::string> out;
  for (size_t i = 0; i < order.size() && i < most; ++i) {
    const OnStream &o = *order[i];
    std::string line = describeStreamOrderDelay(s, *o.longest);
    if (o.edges > 1)
      line += formatv(" (the longest of {0} such waits on stream '{1}', {2} in all)", o.edges,
                      s.stream(o.longest->stream).name, formatTime(o.totalUs));
    out.push_back(std::move(line));
  }
  if (order.size() > most)
    out.push_back(formatv("stream order holds the critical path back on {0} more stream(s)",
                          order.size() - most));
  return out;
}

std::vector<std::string> pipec::describeGraphAdvice(const GraphAdvice &g, unsigned replays) {
  std::vector<std::string> out;
  if (!g.evaluated) {
    out.push_back("not evaluated (no cost model was given)");
    return out;
  }
  out.push_back(formatv("one replay takes {0} as stream launches and {1} as a "
                        "graph launch (host's first call to last stage end)",
                        formatTime(g.streamsReplayUs), formatTime(g.graphReplayUs)));
  // What a graph gains and loses: the host's dispatch and calls, and what
  // the device side makes of it.
  const double hostSaved = g.streamsHostCallsUs - g.graphHostCallsUs;
  const double replaySaved = g.streamsReplayUs - g.graphReplayUs;
  if (hostSaved > 0 && (g.streamsHostCallsUs > 0 || g.graphHostCallsUs > 0)) {
    std::string line = formatv("on the host, a replay spends {0} less in dispatch and launch "
                               "calls ({1} -> {2})",
                               formatTime(hostSaved), formatTime(g.streamsHostCallsUs),
                               formatTime(g.graphHostCallsUs));
    if (replaySaved < 0)
      line += formatv("; the replay still ends {0} later: the device side costs more "
                      "(a graph releases each segment's nodes at once, and a segment "
                      "waits for its launch stream)",
                      formatTime(-replaySaved));
    else if (replaySaved + kMinGainUs < hostSaved)
      line += formatv("; the replay ends only {0} sooner: the rest was hidden behind "
                      "device work",
                      formatTime(replaySaved));
    out.push_back(line);
  }
  if (g.graphs && g.graphs < g.segments)
    out.push_back(formatv("its {0} segments are {1} distinct graph(s), each captured, "
                          "instantiated and uploaded once and replayed where it recurs (as "
                          "a loop's body is)",
                          g.segments, g.graphs));
  if (g.breakEvenIterations)
    out.push_back(formatv("the graph pays back its one-time cost ({0}: capture, "
                          "instantiation and first upload) after {1} iteration(s), within "
                          "{2} replay(s) of the {3} iterations",
                          formatTime(g.oneTimeUs), g.breakEvenIterations, g.breakEvenReplays,
                          g.iterations));
  else if (g.breakEvenReplays)
    out.push_back(formatv("the graph pays back its one-time cost ({0}: capture, "
                          "instantiation and first upload) after {1} "
                          "replay(s)",
                          formatTime(g.oneTimeUs), g.breakEvenReplays));
  else
    out.push_back("a graph replay is no faster: the graph never pays back its "
                  "one-time cost");
  if (g.breakEvenReplays && g.breakEvenReplays > replays)
    out.push_back(formatv("that is more than the {0} replays assumed", replays));
  else if (g.breakEvenReplays && !worthIt(g.streamsReplayUs, g.graphReplayUs))
    out.push_back(formatv("but it saves {0} a replay, under the {1} (and {2}) worth a "
                          "change: the stream launches stay",
                          formatTime(g.streamsReplayUs - g.graphReplayUs),
                          formatPercent(kMinGainFraction), formatTime(kMinGainUs)));
  if (!g.heldOutBy.empty())
    out.push_back(formatv("but no graph can hold {0}: a pageable copy's call is synchronous, "
                          "and stream capture refuses it (pin its memory first)",
                          g.heldOutBy));
  if (g.flipsAtGraphLaunchUs >= 0 && g.heldOutBy.empty())
    out.push_back(formatv("near the line: the verdict flips if a graph launch call takes {0} "
                          "{1} (graph_launch_us; the profile has {2}): `pipec calibrate` "
                          "measures it",
                          g.suitable ? "more than" : "less than",
                          formatTime(g.flipsAtGraphLaunchUs), formatTime(g.graphLaunchUs)));
  return out;
}
