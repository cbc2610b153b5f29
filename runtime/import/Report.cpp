//===- Report.cpp ---------------------------------------------------------===//

#include "runtime/import/Report.h"

#include "compiler/emit/Emitters.h"
#include "compiler/program/Communication.h"
#include "compiler/program/TimeFormat.h"
#include "model/GraphCost.h"
#include "model/Model.h"
#include "runtime/Backend.h"
#include "runtime/import/StepData.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace pipec;
using namespace pipec::importer;
using llvm::formatv;

namespace {

/// The first start and last end of the device's stages (the cpu stages
/// left out): the window `recorded.span_us` measures.
std::pair<double, double> deviceWindow(const Schedule &s, const std::vector<double> &start,
                                       const std::vector<double> &end) {
  double first = std::numeric_limits<double>::infinity(), last = 0;
  for (uint32_t v = 0; v < start.size(); ++v)
    if (!s.onHost(v)) {
      first = std::min(first, start[v]);
      last = std::max(last, end[v]);
    }
  return std::isfinite(first) ? std::make_pair(first, last) : std::make_pair(0.0, 0.0);
}

/// A run's span over the GPU ops' window and its op ends against the
/// recorded ones (both measured from the first GPU op's start).
StepReport::Fidelity against(const ImportedStep &step, const Schedule &s,
                             const std::vector<double> &start,
                             const std::vector<double> &end) {
  StepReport::Fidelity f;
  if (start.empty())
    return f;
  auto [first, last] = deviceWindow(s, start, end);
  f.spanUs = last - first;
  std::vector<double> errors;
  for (uint32_t v = 0; v < end.size(); ++v) {
    const ImportedStage &st = step.stages[s.instances.stageOf(v)];
    if (!st.onHost() && !st.idle)
      errors.push_back(std::fabs((end[v] - first) - st.endUs));
  }
  std::tie(f.medianErrorUs, f.p95ErrorUs) = runtime::medianAndP95(errors);
  return f;
}

/// The step's communication and the part of it other work hid, with each
/// instance's [start, end) as `spanOf` gives it.
StepReport::Comm commOf(const ImportedStep &step, const Schedule &s,
                        llvm::function_ref<std::pair<double, double>(uint32_t)> spanOf) {
  auto stageOf = [&](uint32_t v) -> const ImportedStage & {
    return step.stages[s.instances.stageOf(v)];
  };
  std::vector<DeviceUse> uses = deviceUses(
      s, [&](uint32_t v) { return stageOf(v).idle ? std::make_pair(0.0, 0.0) : spanOf(v); }, 0,
      [&](uint32_t v) { // (a gpu_idle wait has no span: never asked)
        return program::isCommunication(s.instances.stage(v),
                                        step.names[step.opOf(stageOf(v)).name]);
      });
  StepReport::Comm c;
  for (const DeviceUse &use : uses)
    c.us += use.commUs, c.hiddenUs += use.hiddenCommUs;
  return c;
}

} // namespace

StepReport importer::reportRecorded(const ImportedStep &step, const Schedule &s) {
  StepReport r;
  r.streams = step.streams.size();
  r.waitsIssued = step.waitsIssued;
  r.hostSyncs = step.hostSyncs;
  r.backlogOps = step.backlogOps;
  r.periodUs = step.periodUs;

  // The recorded timeline: span, busy time (the union of the ops), and the
  // idle gaps the host left (the op that ended a gap was issued after it
  // began; a backlog op was issued before the step).
  std::vector<const ImportedStage *> byStart;
  for (const ImportedStage &st : step.stages) {
    if (st.onHost()) {
      r.hostWorkUs += st.cpuUs;
      continue;
    }
    if (st.idle)
      continue; // not an op: the GPU's unexplained wait
    ++r.ops;
    r.spanUs = std::max(r.spanUs, st.endUs);
    r.dispatchUs += st.dispatchUs;
    byStart.push_back(&st);
  }
  std::stable_sort(byStart.begin(), byStart.end(),
                   [](auto *a, auto *b) { return a->startUs < b->startUs; });
  double coveredTo = 0;
  for (const ImportedStage *st : byStart) {
    if (st->startUs > coveredTo && !st->backlog && st->hostUs >= coveredTo)
      r.hostWaitUs += st->startUs - coveredTo;
    r.busyUs += std::max(0.0, st->endUs - std::max(coveredTo, st->startUs));
    coveredTo = std::max(coveredTo, st->endUs);
  }
  r.recordedComm = commOf(step, s, [&](uint32_t v) {
    const ImportedStage &st = step.stages[s.instances.stageOf(v)];
    return std::make_pair(double(st.startUs), double(st.endUs));
  });
  return r;
}

StepReport importer::reportStep(const ImportedStep &step, const Schedule &s,
                                const DeviceProfile &profile, unsigned replays) {
  StepReport r = reportRecorded(step, s);
  r.modelled = true;
  r.contendedKernels = step.contendedKernels;
  r.contentionUs = step.contentionUs;
  const Analysis &a = s.analysis;
  r.criticalPathUs = a.criticalPathUs;
  r.lowerBoundUs = a.lowerBoundUs;
  r.binding = a.bounds.empty() ? "" : a.bounds[a.binding].words;
  r.waitsFewest = s.waits;
  r.syncsFewest = s.syncs;
  r.graphSegments = s.segments;

  // pipec's own issue of the imported program, host included, both
  // lowerings; then without the recorded dispatch.
  runtime::RunOptions options;
  options.replays = replays;
  options.recordHost = false;
  auto compare = [&](runtime::Backend &model, GraphAdvice &advice, bool spans) {
    auto streams = model.run(s, Lowering::Streams, options);
    auto graph = model.run(s, Lowering::Graph, options);
    if (!streams || !graph) {
      llvm::consumeError(streams.takeError());
      llvm::consumeError(graph.takeError());
      return;
    }
    advice = runtime::compareLowerings(*streams, *graph, replays);
    if (!spans)
      return;
    auto [sFirst, sLast] = deviceWindow(s, streams->start, streams->end);
    auto [gFirst, gLast] = deviceWindow(s, graph->start, graph->end);
    r.streamsMakespanUs = sLast - sFirst;
    r.graphMakespanUs = gLast - gFirst;
    r.streamsHostUs = streams->hostUs;
    // The step's period: the host's time for it (dispatch, calls, cpu
    // stages, waits: the model's host is never idle). Where the recorded
    // step's launches blocked on a full launch queue, the device set the
    // pace: the queue held launches of earlier steps too, which one step's
    // run does not start with, so the period is the device's busy time
    // where that is longer (a gpu_idle wait is not the device's work).
    if (step.periodUs > 0 && step.device.launchQueueDepth == 0) {
      r.predictedPeriodUs = streams->hostUs.issue + streams->hostUs.api + streams->hostUs.cpu +
                            streams->hostUs.blocked;
    } else if (step.periodUs > 0) {
      double deviceBusyUs = 0;
      for (const DeviceUse &use : deviceUses(
               s,
               [&](uint32_t v) {
                 return step.stages[s.instances.stageOf(v)].idle
                            ? std::make_pair(0.0, 0.0)
                            : std::make_pair(streams->start[v], streams->end[v]);
               },
               0))
        deviceBusyUs = std::max(deviceBusyUs, use.busyUs);
      r.predictedPeriodUs = std::max(streams->hostUs.issue + streams->hostUs.api +
                                         streams->hostUs.cpu + streams->hostUs.blocked,
                                     deviceBusyUs);
    }
    r.free = against(step, s, streams->start, streams->end);
    if (!streams->start.empty())
      r.predictedComm = commOf(step, s, [&](uint32_t v) {
        return std::make_pair(streams->start[v], streams->end[v]);
      });
  };
  const model::Model model(profile);
  compare(*model.backend(), r.graph, true);
  // The same schedule, its launches without the recorded dispatch: a mode
  // of the model, not a second program (nothing else depends on issue=).
  compare(*model.backendWithoutDispatch(), r.graphOwnLaunches, false);

  // The recorded issue: each launch returns no sooner than its call did,
  // each cpu stage begins no sooner than the host began it.
  const size_t n = s.instances.size();
  double earliest = 0;
  for (const ImportedStage &st : step.stages)
    earliest = std::min(earliest, st.hostUs);
  std::vector<double> issueAt(n, 0);
  for (uint32_t v = 0; v < n; ++v)
    issueAt[v] = step.stages[s.instances.stageOf(v)].hostUs - earliest;
  const model::Model::Times t = model.times(s, &issueAt);
  r.pinned = against(step, s, t.start, t.end);
  return r;
}

namespace {

/// The graph's verdict in words: "pays back after N replay(s)", or never.
std::string verdict(const GraphAdvice &g) {
  if (!g.evaluated)
    return "not evaluated";
  // (What no graph can hold is said whatever it would gain: compile, run
  // and advise give the same verdict.)
  const std::string heldOut = g.heldOutBy.empty() ? std::string()
                                                  : "; but no graph can hold " + g.heldOutBy +
                                                        " (pin its memory first)";
  if (g.breakEvenReplays)
    return formatv("{0} a replay; pays back its one-time {1} after {2} replay(s){3}",
                   formatPercent(
                       g.streamsReplayUs > 0 ? 1 - g.graphReplayUs / g.streamsReplayUs : 0),
                   formatTime(g.oneTimeUs), g.breakEvenReplays, heldOut)
        .str();
  return "never pays back its one-time cost" + heldOut;
}

} // namespace

void importer::printStepReport(const StepReport &r, const ImportedStep &step,
                               const DeviceProfile &profile, llvm::raw_ostream &os) {
  auto row = [&](llvm::StringRef label, const std::string &value, llvm::StringRef note) {
    os << "  " << llvm::left_justify(label, 24) << llvm::left_justify(value, 12) << "  "
       << note << '\n';
  };
  auto more = [&](llvm::StringRef note) {
    os << "  " << std::string(24 + 12 + 2, ' ') << note << '\n';
  };
  auto share = [&](double us) { return formatPercent(r.spanUs > 0 ? us / r.spanUs : 0); };
  os << "recorded step";
  if (step.step)
    os << " (" << stepLabel(step) << ")";
  os << formatv(": {0} GPU ops on {1} stream(s)", r.ops, r.streams);
  if (!step.device.name.empty())
    os << ", " << step.device.name;
  os << '\n';
  row("span", formatTime(r.spanUs), "first GPU op start to last GPU op end");
  if (r.periodUs > 0)
    row("step period", formatTime(r.periodUs),
        "the step's host range, as users time it (host work before the first launch and "
        "after the last call included)" +
            (r.modelled && r.predictedPeriodUs > 0
                 ? formatv("; the model: {0} ({1})", formatTime(r.predictedPeriodUs),
                           formatPercent(r.predictedPeriodUs / r.periodUs - 1, 1))
                       .str()
                 : std::string()));
  row("GPU busy", share(r.busyUs), formatTime(r.busyUs) + " with at least one op running");
  row("GPU waiting for host", formatTime(r.hostWaitUs),
      share(r.hostWaitUs) + " of the span idle until the host issued the next op");
  if (r.backlogOps)
    row("previous step's backlog", std::to_string(r.backlogOps),
        "ops issued before the step, still running in it");
  auto hidden = [](const StepReport::Comm &c) {
    return formatPercent(c.us > 0 ? c.hiddenUs / c.us : 0);
  };
  if (r.recordedComm.us > 0 || r.predictedComm.us > 0)
    row("communication", formatTime(r.recordedComm.us),
        hidden(r.recordedComm) + " hidden under computation" +
            (r.modelled ? formatv("; the model: {0}, {1} hidden",
                                  formatTime(r.predictedComm.us), hidden(r.predictedComm))
                              .str()
                        : std::string()));
  row("host dispatch", formatTime(r.dispatchUs),
      "host time before the launch calls returned (issue= and the calls)");
  row("host work", formatTime(r.hostWorkUs), "host time outside runtime calls (cpu stages)");
  row("stream waits issued", std::to_string(r.waitsIssued),
      r.modelled ? formatv("the fewest its orderings need: {0}", r.waitsFewest).str()
                 : std::string());
  row("host synchronisations", std::to_string(r.hostSyncs),
      "stream, event and device syncs, blocking copies and polls" +
          (r.modelled ? formatv("; the fewest: {0}", r.syncsFewest).str() : std::string()));
  if (const std::optional<DataLink> &d = step.data)
    row("data", formatv("{0} of {1} ops", d->linkedOps, d->stepOps).str(),
        formatv("linked to the execution trace by {0}; {1} with data, in {2} buffers; {3} "
                "same-stream orderings left to the data{4}",
                linkMethodName(d->by), d->dataOps, d->buffers, d->streamOrders,
                d->contradicted ? formatv("; {0} accesses the recording contradicts left out",
                                          d->contradicted)
                                      .str()
                                : std::string())
            .str());
  if (!r.modelled) {
    os << "the model: pipec models CUDA devices; this trace is " << step.foreignPlatform
       << ": nothing is predicted for it\n";
    return;
  }
  os << "what bounds it:\n";
  row("critical path", formatTime(r.criticalPathUs),
      "the longest chain through the recorded orderings, host order included");
  row("lower bound", formatTime(r.lowerBoundUs), "set by " + r.binding);
  os << "the imported program on the device model (" << profile.name << "):\n";
  if (r.contendedKernels)
    row("contention taken out", formatTime(r.contentionUs),
        formatv("{0} kernel(s) recorded beside others, written as their time alone",
                r.contendedKernels)
            .str());
  row("as stream launches", formatTime(r.streamsMakespanUs),
      formatv("span, {0} of the recorded; {1} a replay (host's first call to last end)",
              formatPercent(r.spanUs > 0 ? r.streamsMakespanUs / r.spanUs - 1 : 0, 1),
              formatTime(r.graph.streamsReplayUs))
          .str());
  more(formatv("host per replay: dispatch {0}, API calls {1}, cpu stages {2}, blocked {3}",
               formatTime(r.streamsHostUs.issue), formatTime(r.streamsHostUs.api),
               formatTime(r.streamsHostUs.cpu), formatTime(r.streamsHostUs.blocked))
           .str());
  row("as CUDA graphs", formatTime(r.graphMakespanUs),
      formatv("span; {0} a replay, {1} graph segment(s) between host syncs",
              formatTime(r.graph.graphReplayUs), r.graphSegments)
          .str());
  row("graph, recorded host", "",
      "against the streams issued with the recorded dispatch: " + verdict(r.graph));
  row("graph, pipec's launches", "",
      formatv("against the same streams issued by pipec with no dispatch ({0} a replay): {1}",
              formatTime(r.graphOwnLaunches.streamsReplayUs), verdict(r.graphOwnLaunches))
          .str());
  auto fidelity = [&](const StepReport::Fidelity &f) {
    row("predicted span", formatTime(f.spanUs),
        formatv("{0} of the recorded {1}",
                formatPercent(r.spanUs > 0 ? f.spanUs / r.spanUs - 1 : 0, 1),
                formatTime(r.spanUs))
            .str());
    row("op end error", formatTime(f.medianErrorUs),
        formatv("median |predicted - recorded|, {0} of the span; p95 {1}",
                formatPercent(r.spanUs > 0 ? f.medianErrorUs / r.spanUs : 0, 1),
                formatTime(f.p95ErrorUs))
            .str());
  };
  os << "the model against the recording (its own run of the imported program, host "
        "included):\n";
  fidelity(r.free);
  os << "secondary check, pinned (each launch returning when its recorded call did):\n";
  fidelity(r.pinned);
}

void importer::writeStepReportJSON(const StepReport &r, const ImportedStep &step,
                                   const DeviceProfile &profile, llvm::raw_ostream &os) {
  llvm::json::OStream j(os, 2);
  auto number = [&](llvm::StringRef key, double value) {
    writeNumberAttribute(j, key, value);
  };
  auto graph = [&](const GraphAdvice &g) {
    number("streams_replay_us", g.streamsReplayUs);
    number("graph_replay_us", g.graphReplayUs);
    if (g.breakEvenReplays)
      j.attribute("break_even_replays", int64_t(g.breakEvenReplays));
    else
      j.attribute("break_even_replays", nullptr);
    if (!g.heldOutBy.empty())
      j.attribute("held_out_by", g.heldOutBy);
  };
  auto comm = [&](const StepReport::Comm &c) {
    number("comm_us", c.us);
    if (c.us > 0)
      number("comm_hidden_fraction", c.hiddenUs / c.us);
    else
      j.attribute("comm_hidden_fraction", nullptr);
  };
  j.object([&] {
    j.attribute("format", "pipec-import-report");
    j.attribute("version", 4);
    if (step.step)
      j.attribute("step", *step.step);
    else
      j.attribute("step", nullptr);
    j.attribute("device", step.device.name);
    j.attribute("platform", step.foreignPlatform.empty() ? "CUDA" : step.foreignPlatform);
    j.attributeObject("recorded", [&] {
      j.attribute("ops", int64_t(r.ops));
      j.attribute("streams", int64_t(r.streams));
      j.attribute("backlog_ops", int64_t(r.backlogOps));
      number("span_us", r.spanUs);
      number("busy_us", r.busyUs);
      number("busy_fraction", r.spanUs > 0 ? r.busyUs / r.spanUs : 0);
      number("host_wait_us", r.hostWaitUs);
      number("host_bound_fraction", r.spanUs > 0 ? r.hostWaitUs / r.spanUs : 0);
      number("dispatch_us", r.dispatchUs);
      number("host_work_us", r.hostWorkUs);
      if (r.periodUs > 0)
        number("period_us", r.periodUs);
      else
        j.attribute("period_us", nullptr);
      number("window_us", step.windowUs);
      j.attribute("waits_issued", int64_t(r.waitsIssued));
      j.attribute("host_syncs", int64_t(r.hostSyncs));
      j.attribute("sync_events", step.syncEvents);
      comm(r.recordedComm);
    });
    if (const std::optional<DataLink> &d = step.data) {
      j.attributeObject("data", [&] {
        j.attribute("linked_by", linkMethodName(d->by));
        j.attribute("step_ops", int64_t(d->stepOps));
        j.attribute("linked_ops", int64_t(d->linkedOps));
        j.attribute("data_ops", int64_t(d->dataOps));
        j.attribute("buffers", int64_t(d->buffers));
        j.attribute("stream_orders_freed", int64_t(d->streamOrders));
        j.attribute("contradicted_accesses", int64_t(d->contradicted));
        j.attribute("framework_ops", int64_t(d->cpuOps));
        j.attribute("framework_ops_linked", int64_t(d->linkedCpuOps));
      });
    } else {
      j.attribute("data", nullptr);
    }
    if (!r.modelled) {
      // The recorded half only: pipec models CUDA devices.
      j.attribute("analysis", nullptr);
      j.attribute("predicted", nullptr);
      j.attribute("fidelity", nullptr);
      j.attributeArray("notes", [&] {
        for (const std::string &note : step.notes)
          j.value(note);
      });
      return;
    }
    j.attributeObject("analysis", [&] {
      number("critical_path_us", r.criticalPathUs);
      number("lower_bound_us", r.lowerBoundUs);
      j.attribute("binding", r.binding);
      j.attribute("waits_fewest", int64_t(r.waitsFewest));
      j.attribute("syncs_fewest", int64_t(r.syncsFewest));
    });
    j.attributeObject("predicted", [&] {
      j.attribute("profile", profile.name);
      number("streams_makespan_us", r.streamsMakespanUs);
      number("graph_makespan_us", r.graphMakespanUs);
      if (r.predictedPeriodUs > 0)
        number("period_us", r.predictedPeriodUs);
      else
        j.attribute("period_us", nullptr);
      j.attributeObject("host_us", [&] {
        number("cpu", r.streamsHostUs.cpu);
        number("issue", r.streamsHostUs.issue);
        number("api", r.streamsHostUs.api);
        number("blocked", r.streamsHostUs.blocked);
      });
      j.attribute("graph_segments", int64_t(r.graphSegments));
      // Against the recorded host time: the imported program as it is.
      graph(r.graph);
      j.attributeObject("own_launches", [&] { graph(r.graphOwnLaunches); });
      // The kernels written as their time alone, and what that took out.
      j.attribute("contended_kernels", int64_t(r.contendedKernels));
      number("contention_us", r.contentionUs);
      comm(r.predictedComm);
    });
    // The free run is the headline (version 4); the pinned replay, which
    // the recording paces, a secondary check.
    auto fidelity = [&](const StepReport::Fidelity &f) {
      number("replayed_span_us", f.spanUs);
      number("span_error", r.spanUs > 0 ? f.spanUs / r.spanUs - 1 : 0);
      number("median_op_end_error_us", f.medianErrorUs);
      number("p95_op_end_error_us", f.p95ErrorUs);
    };
    j.attributeObject("fidelity", [&] {
      j.attribute("run", "free");
      fidelity(r.free);
      j.attributeObject("pinned", [&] { fidelity(r.pinned); });
    });
    j.attributeArray("notes", [&] {
      for (const std::string &note : step.notes)
        j.value(note);
    });
  });
  os << '\n';
}
