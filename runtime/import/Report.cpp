//===- Report.cpp ---------------------------------------------------------===//

#include "runtime/import/Report.h"

#include "compiler/emit/Emitters.h"
#include "compiler/program/TimeFormat.h"
#include "runtime/Backend.h"
#include "runtime/cost/GraphCost.h"
#include "runtime/sim/DeviceModel.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace pipec;
using namespace pipec::importer;
using llvm::formatv;

StepReport importer::reportStep(const ImportedStep &step, const Schedule &s,
                                const DeviceProfile &profile, unsigned replays) {
  StepReport r;
  r.ops = step.stages.size();
  r.streams = step.streams.size();
  r.waitsIssued = step.waitsIssued;
  r.hostSyncs = step.hostSyncs;

  // The recorded timeline: span, busy time (the union of the ops), and the
  // idle gaps the host left (the op that ended a gap was issued after it
  // began).
  std::vector<const ImportedStage *> byStart;
  for (const ImportedStage &st : step.stages) {
    r.spanUs = std::max(r.spanUs, st.endUs);
    byStart.push_back(&st);
  }
  std::stable_sort(byStart.begin(), byStart.end(),
                   [](auto *a, auto *b) { return a->startUs < b->startUs; });
  double coveredTo = 0;
  for (const ImportedStage *st : byStart) {
    if (st->startUs > coveredTo) {
      if (st->issueUs >= coveredTo)
        r.hostWaitUs += st->startUs - coveredTo;
    }
    r.busyUs += std::max(0.0, st->endUs - std::max(coveredTo, st->startUs));
    coveredTo = std::max(coveredTo, st->endUs);
  }

  const Analysis &a = s.analysis;
  r.criticalPathUs = a.criticalPathUs;
  r.lowerBoundUs = a.lowerBoundUs;
  r.binding = a.bounds.empty() ? "" : a.bounds[a.binding].words;
  r.waitsFewest = s.waits;

  // pipec's own issue, both lowerings.
  auto model = runtime::makeSimBackend(profile);
  runtime::RunOptions options;
  options.replays = replays;
  options.recordHost = false;
  auto streams = model->run(s, Lowering::Streams, options);
  auto graph = model->run(s, Lowering::Graph, options);
  if (streams && graph) {
    r.streamsMakespanUs = streams->makespanUs;
    r.graphMakespanUs = graph->makespanUs;
    r.graph = runtime::compareLowerings(*streams, *graph, replays);
  } else {
    llvm::consumeError(streams.takeError());
    llvm::consumeError(graph.takeError());
  }

  // The recorded issue: each launch no sooner than it was issued.
  const size_t n = s.instances.size();
  double earliest = 0;
  for (const ImportedStage &st : step.stages)
    earliest = std::min(earliest, st.issueUs);
  std::vector<double> issueAt(n, 0);
  for (uint32_t v = 0; v < n && v < step.stages.size(); ++v)
    issueAt[v] = step.stages[v].issueUs - earliest;
  sim::ModelOptions replay;
  replay.recordHost = false;
  replay.issueAt = &issueAt;
  sim::ReplayTrace t = sim::simulate(s, Lowering::Streams, profile, replay);
  if (!t.start.empty()) {
    double first = *std::min_element(t.start.begin(), t.start.end());
    double last = *std::max_element(t.end.begin(), t.end.end());
    r.replayedSpanUs = last - first;
    std::vector<double> errors;
    for (uint32_t v = 0; v < n && v < step.stages.size(); ++v)
      errors.push_back(std::fabs((t.end[v] - first) - step.stages[v].endUs));
    std::tie(r.medianErrorUs, r.p95ErrorUs) = runtime::medianAndP95(errors);
  }
  return r;
}

void importer::printStepReport(const StepReport &r, const ImportedStep &step,
                               const DeviceProfile &profile, llvm::raw_ostream &os) {
  auto row = [&](llvm::StringRef label, const std::string &value, llvm::StringRef note) {
    os << "  " << llvm::left_justify(label, 24) << llvm::left_justify(value, 12) << "  "
       << note << '\n';
  };
  os << "recorded step";
  if (step.step)
    os << " (ProfilerStep#" << *step.step << ")";
  os << formatv(": {0} GPU ops on {1} stream(s)", r.ops, r.streams);
  if (!step.device.name.empty())
    os << ", " << step.device.name;
  os << '\n';
  row("span", formatTime(r.spanUs), "first GPU op start to last GPU op end");
  row("GPU busy", formatPercent(r.spanUs > 0 ? r.busyUs / r.spanUs : 0),
      formatTime(r.busyUs) + " with at least one op running");
  row("GPU waiting for host", formatTime(r.hostWaitUs),
      formatPercent(r.spanUs > 0 ? r.hostWaitUs / r.spanUs : 0) +
          " of the span idle until the host issued the next op");
  row("stream waits issued", std::to_string(r.waitsIssued),
      formatv("the fewest its orderings need: {0}", r.waitsFewest).str());
  row("host synchronisations", std::to_string(r.hostSyncs),
      "event, stream and device syncs in the step");
  os << "what bounds it:\n";
  row("critical path", formatTime(r.criticalPathUs),
      "the longest chain of GPU work through the recorded orderings");
  row("lower bound", formatTime(r.lowerBoundUs), "set by " + r.binding);
  os << "the same work issued by pipec (device model: " << profile.name << "):\n";
  row("as stream launches", formatTime(r.streamsMakespanUs),
      formatv("makespan; {0} replay (host's first call to last end)",
              formatTime(r.graph.streamsReplayUs))
          .str());
  row("as a CUDA graph", formatTime(r.graphMakespanUs),
      formatv("makespan; {0} replay", formatTime(r.graph.graphReplayUs)).str());
  for (const std::string &reason : r.graph.reasons)
    os << "  " << std::string(24, ' ') << std::string(12, ' ') << "  " << reason << '\n';
  os << "the model against the recording (each op issued at its recorded launch time):\n";
  row("predicted span", formatTime(r.replayedSpanUs),
      formatv("{0} of the recorded {1}",
              formatPercent(r.spanUs > 0 ? r.replayedSpanUs / r.spanUs - 1 : 0, 1),
              formatTime(r.spanUs))
          .str());
  row("op end error", formatTime(r.medianErrorUs),
      formatv("median |predicted - recorded|; p95 {0}", formatTime(r.p95ErrorUs)).str());
}

void importer::writeStepReportJSON(const StepReport &r, const ImportedStep &step,
                                   const DeviceProfile &profile, llvm::raw_ostream &os) {
  llvm::json::OStream j(os, 2);
  auto number = [&](llvm::StringRef key, double value) {
    writeNumberAttribute(j, key, value);
  };
  j.object([&] {
    j.attribute("format", "pipec-import-report");
    j.attribute("version", 1);
    if (step.step)
      j.attribute("step", *step.step);
    else
      j.attribute("step", nullptr);
    j.attribute("device", step.device.name);
    j.attributeObject("recorded", [&] {
      j.attribute("ops", int64_t(r.ops));
      j.attribute("streams", int64_t(r.streams));
      number("span_us", r.spanUs);
      number("busy_us", r.busyUs);
      number("busy_fraction", r.spanUs > 0 ? r.busyUs / r.spanUs : 0);
      number("host_wait_us", r.hostWaitUs);
      j.attribute("waits_issued", int64_t(r.waitsIssued));
      j.attribute("host_syncs", int64_t(r.hostSyncs));
    });
    j.attributeObject("analysis", [&] {
      number("critical_path_us", r.criticalPathUs);
      number("lower_bound_us", r.lowerBoundUs);
      j.attribute("binding", r.binding);
      j.attribute("waits_fewest", int64_t(r.waitsFewest));
    });
    j.attributeObject("predicted", [&] {
      j.attribute("profile", profile.name);
      number("streams_makespan_us", r.streamsMakespanUs);
      number("graph_makespan_us", r.graphMakespanUs);
      number("streams_replay_us", r.graph.streamsReplayUs);
      number("graph_replay_us", r.graph.graphReplayUs);
      if (r.graph.breakEvenReplays)
        j.attribute("break_even_replays", int64_t(r.graph.breakEvenReplays));
      else
        j.attribute("break_even_replays", nullptr);
    });
    j.attributeObject("fidelity", [&] {
      number("replayed_span_us", r.replayedSpanUs);
      number("span_error", r.spanUs > 0 ? r.replayedSpanUs / r.spanUs - 1 : 0);
      number("median_op_end_error_us", r.medianErrorUs);
      number("p95_op_end_error_us", r.p95ErrorUs);
    });
  });
  os << '\n';
}
