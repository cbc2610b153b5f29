//===- TextEmitter.cpp - The schedule for a person to read ----------------===//

#include "compiler/emit/Emitters.h"

#include "compiler/program/TimeFormat.h"
#include "compiler/schedule/Schedule.h"
#include "compiler/support/Decimal.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <array>

using namespace pipec;
using llvm::formatv;

namespace {

std::string priorityText(const program::Stream &s) {
  if (s.priorityClass == program::PriorityClass::Raw)
    return std::to_string(s.rawPriority);
  return program::spelling(s.priorityClass);
}

std::string us(double value) { return formatTime(value); }

void streams(const Schedule &s, llvm::raw_ostream &os) {
  size_t width = 0;
  for (const program::Stream &st : s.streamPlan.streams)
    width = std::max(width, st.name.size());
  os << "streams:\n";
  for (uint32_t i = 0; i < s.streamPlan.streams.size(); ++i) {
    const program::Stream &st = s.streamPlan.streams[i];
    os << "  " << llvm::left_justify(st.name, width) << "  priority "
       << llvm::left_justify(priorityText(st), 6) << " "
       << llvm::left_justify("(cuda " + std::to_string(st.cudaPriority) + ")", 9);
    if (st.isAuto)
      os << "  created by pipec";
    if (!s.pipeline.devices.empty())
      os << "  on " << s.pipeline.devices[st.device].name;
    os << "  busy " << us(s.analysis.streamBusyUs[i]) << '\n';
  }
  if (!s.hasHostStages())
    return;
  // Each device's host thread that runs cpu stages.
  const program::Pipeline &p = s.pipeline;
  for (size_t d = 0; d < p.deviceCount(); ++d)
    if (p.devices.size() <= 1 || s.hasHostStages(uint32_t(d)))
      os << "  " << llvm::left_justify("host thread", width) << "  cpu stages, in issue order"
         << (p.devices.size() > 1 ? "  on " + p.devices[d].name : std::string()) << "  busy "
         << us(s.analysis.hostBusyUs[d]) << '\n';
}

std::string bytes(uint64_t n) { return formatBytes(n); }

/// The buffers, and the dependencies the data needs (sync inferred) with
/// the buffer that requires each, stage by stage.
void buffers(const Schedule &s, llvm::raw_ostream &os) {
  const program::Pipeline &p = s.pipeline;
  if (p.buffers.empty())
    return;
  os << "\nbuffers (sync " << (p.syncDeclared ? "declared" : "inferred") << "):\n";
  size_t width = 0;
  for (const program::Buffer &b : p.buffers)
    width = std::max(width, b.name.size());
  for (const program::Buffer &b : p.buffers)
    os << "  " << llvm::left_justify(b.name, width) << "  " << (b.host ? "host  " : "device")
       << "  " << b.slots << " slot" << (b.slots == 1 ? " " : "s") << " of " << bytes(b.bytes)
       << '\n';
  if (p.syncDeclared) {
    os << "  every conflicting pair of accesses is ordered by the declared "
          "dependencies and stream order (checked)\n";
    return;
  }
  // (stage, what it depends on, buffer), aligned in columns.
  std::vector<std::array<std::string, 3>> rows;
  size_t w0 = 0, w1 = 0;
  for (const program::Stage &st : p.stages)
    for (const program::Dependency &d : st.deps) {
      if (!d.inferred())
        continue;
      std::string on = p.stages[d.stage].name;
      if (d.distance == 1)
        on += "@prev";
      else if (d.distance > 1)
        on += formatv("@prev({0})", d.distance).str();
      rows.push_back({st.name, on, p.buffers[d.inferredFrom].name});
      w0 = std::max(w0, st.name.size());
      w1 = std::max(w1, on.size());
    }
  std::vector<std::string> lines;
  for (const auto &r : rows)
    lines.push_back(formatv("  {0} on {1}  buffer '{2}'", llvm::left_justify(r[0], w0),
                            llvm::left_justify(r[1], w1), r[2])
                        .str());
  if (lines.empty()) {
    os << "  the data needs no dependency beyond the declared ones\n";
    return;
  }
  os << "dependencies the data needs, added (beyond the declared ones):\n";
  for (const std::string &line : lines)
    os << line << '\n';
}

void hostCalls(const Schedule &s, llvm::raw_ostream &os) {
  size_t width = 0;
  for (const program::Stream &st : s.streamPlan.streams)
    width = std::max(width, st.name.size());
  // Per stream, the text before each call's name, made once.
  std::vector<std::string> launch, record, wait;
  for (const program::Stream &st : s.streamPlan.streams) {
    std::string padded = st.name + std::string(width - st.name.size(), ' ');
    launch.push_back("  launch  " + padded + "  ");
    record.push_back("  record  " + padded + "  e");
    wait.push_back("  wait    " + padded + "  e");
  }
  // With several devices, a host call off any stream names its thread's
  // device where a stream's name goes.
  const program::Pipeline &p = s.pipeline;
  for (const program::Device &d : p.devices)
    width = std::max(width, d.name.size());
  std::vector<std::string> thread;
  for (size_t d = 0; d < p.deviceCount(); ++d) {
    const std::string name = p.devices.size() > 1 ? p.devices[d].name : std::string();
    thread.push_back(name + std::string(width - name.size(), ' '));
  }
  const std::vector<uint32_t> threadOfOp = opThreads(s, s.ops);
  os << "\nhost calls, in issue order:\n";
  for (size_t i = 0; i < s.ops.size(); ++i) {
    const Op &op = s.ops[i];
    const std::string &padding = thread[threadOfOp[i]];
    switch (op.kind) {
    case Op::Launch:
      os << launch[op.stream];
      break;
    case Op::Record:
      os << record[op.stream] << Decimal(op.event) << " after ";
      break;
    case Op::Wait:
      os << wait[op.stream] << Decimal(op.event) << " for ";
      break;
    case Op::Cpu:
      os << "  cpu     " << padding << "  ";
      break;
    case Op::Sync:
      os << "  sync    " << padding << "  e" << Decimal(op.event) << " for ";
      break;
    case Op::Join:
      os << "  join    " << padding << "  ";
      break;
    case Op::GraphLaunch:
      break;
    }
    s.instances.writeName(os, op.instance);
    os << '\n';
  }
  os << formatv("\nevents: {0} object{1}, {2} record{3}, {4} wait{5}", s.eventObjects,
                s.eventObjects == 1 ? "" : "s", s.records, s.records == 1 ? "" : "s", s.waits,
                s.waits == 1 ? "" : "s");
  if (s.hasHostStages())
    os << formatv(", {0} host synchronisation{1}", s.syncs, s.syncs == 1 ? "" : "s");
  if (s.joins)
    os << formatv(", {0} join{1} of another device's host thread", s.joins,
                  s.joins == 1 ? "" : "s");
  os << '\n';
}

void graph(const Schedule &s, llvm::raw_ostream &os) {
  auto edges = s.graphEdges();
  size_t nodes = 0;
  for (uint32_t v = 0; v < s.instances.size(); ++v)
    nodes += !s.onHost(v);
  os << formatv("\ngraph: {0} nodes, {1} edges (the transitive reduction of "
                "dependencies and stream order)",
                nodes, edges.size());
  if (s.hasHostStages())
    os << formatv(", in {0} segment{1} between host synchronisations", s.segments,
                  s.segments == 1 ? "" : "s");
  os << '\n';
  for (uint32_t v = 0; v < s.instances.size(); ++v) {
    if (s.onHost(v))
      continue;
    const program::Stream &st = s.stream(s.streamOf(v));
    os << "  node " << Decimal(v) << "  ";
    s.instances.writeName(os, v);
    os << "  (" << spelling(s.instances.stage(v).kind()) << ", priority " << st.cudaPriority
       << ")\n";
  }
  for (auto [from, to] : edges) {
    os << "  edge ";
    s.instances.writeName(os, from);
    os << " -> ";
    s.instances.writeName(os, to);
    os << '\n';
  }
  if (!s.hasHostStages())
    return;
  size_t waits = s.graphWaits().edges();
  if (s.segments > 1)
    os << formatv("segments launched in turn on {0} stream(s); {1} wait(s) between "
                  "segments (an event-record node after the first, an event-wait node "
                  "before the second)\n",
                  std::min(s.segments, kGraphLaunchStreams), waits);
  for (uint32_t v = 0; v < s.instances.size() && waits; ++v)
    for (uint32_t u : s.graphWaits().row(v)) {
      os << "  wait ";
      s.instances.writeName(os, u);
      os << " -> ";
      s.instances.writeName(os, v);
      os << formatv("  (segment {0} -> {1})\n", s.segmentOf[u], s.segmentOf[v]);
    }
  os << "\nhost calls per replay:\n";
  for (const Op &op : s.graphOps) {
    switch (op.kind) {
    case Op::GraphLaunch:
      os << "  graph launch  segment " << Decimal(op.event) << " (from ";
      s.instances.writeName(os, op.instance);
      os << ")\n";
      continue;
    case Op::Record:
      os << "  record        e" << Decimal(op.event) << " after ";
      s.instances.writeName(os, op.instance);
      os << " (a node of its segment)\n";
      continue;
    case Op::Sync:
      os << "  sync          e" << Decimal(op.event) << '\n';
      continue;
    case Op::Cpu:
      os << "  cpu           ";
      s.instances.writeName(os, op.instance);
      os << '\n';
      continue;
    default:
      continue;
    }
  }
}

void analysis(const Schedule &s, llvm::raw_ostream &os) {
  const Analysis &a = s.analysis;
  auto line = [&](llvm::StringRef label, const std::string &value, llvm::StringRef note = "") {
    os << "  " << llvm::left_justify(label, 22);
    if (note.empty())
      os << value << '\n';
    else
      os << llvm::left_justify(value, 12) << "  " << note << '\n';
  };
  os << "\nanalysis:\n";
  line("sequential", us(a.sequentialUs), "every stage one after another");
  std::string busiest;
  for (uint32_t i = 0; i < a.streamBusyUs.size(); ++i)
    if (a.streamBusyUs[i] == a.streamBoundUs && busiest.empty())
      busiest = s.stream(i).name;
  line("per-stream bound", us(a.streamBoundUs), "busiest stream: " + busiest);
  std::string path;
  const size_t shown = 8;
  for (size_t i = 0; i < a.criticalPath.size(); ++i) {
    if (a.criticalPath.size() > 2 * shown && i == shown) {
      path += formatv("... ({0} more) -> ", a.criticalPath.size() - 2 * shown);
      i = a.criticalPath.size() - shown;
    }
    path += s.instances.name(a.criticalPath[i]);
    if (i + 1 < a.criticalPath.size())
      path += " -> ";
  }
  line("critical path", us(a.criticalPathUs), path);
  // Each device's share of that span (version 4).
  for (size_t d = 0; d < a.devices.size(); ++d)
    line(d ? "" : "devices", a.devices[d].name,
         describeDeviceUse(a.devices[d], "the critical path"));
  if (!a.bounds.empty()) {
    line("lower bound", us(a.lowerBoundUs),
         "set by " + a.bounds[a.binding].words +
             "; no run of this program, in any lowering, finishes sooner");
    std::string all;
    for (const Bound &b : a.bounds)
      all += (all.empty() ? "" : ", ") + std::string(b.key) + " " + us(b.us);
    line("bounds", "", all);
  }
  line("overlap ratio", formatPercent(a.overlapRatio, 1),
       "of the sequential time that the lower bound leaves to overlap");
  line("cross-stream deps", std::to_string(a.crossStreamDependencies));
  line("redundant deps", std::to_string(a.redundantDependencies),
       "declared, already implied by others and stream order");
  line("event density", formatv("{0:f2}", a.eventDensity).str(), "records per stage instance");
  if (!s.pipeline.buffers.empty())
    line("memory", bytes(a.deviceBytes) + " device",
         bytes(a.hostBytes) + " pinned host; every ring slot counted");
  const StreamPlan &p = s.streamPlan;
  if (p.autoStages) {
    uint64_t autoStreams = p.streams.size() - s.pipeline.streams.size();
    std::string how =
        formatv("for {0} stage(s), by {1}", p.autoStages, spelling(p.method)).str();
    if (p.evaluations)
      how += formatv(" ({0}; {1} assignment(s) run on the device model, "
                     "makespan {2})",
                     p.chosenFrom, p.evaluations, us(p.modelMakespanUs))
                 .str();
    line("automatic streams", std::to_string(autoStreams), how);
    line("", "",
         formatv("{0} reduced edge(s) between them cross streams; an "
                 "assignment that adds no ordering needs at least {1} "
                 "(Nimble's matching){2}",
                 p.crossStreamAutoEdges, p.matchingBound,
                 p.forcedOrderings ? formatv("; {0} chain(s) queued behind unordered ones "
                                             "to respect --max-streams",
                                             p.forcedOrderings)
                                         .str()
                                   : "")
             .str());
  }
  const GraphAdvice &g = a.graphAdvice;
  line("cuda graph",
       !g.evaluated ? "-"
       : g.suitable ? "worth it"
                    : "not worth it",
       g.reasons.empty() ? "" : g.reasons.front());
  for (size_t i = 1; i < g.reasons.size(); ++i)
    os << std::string(36, ' ') << "  " << g.reasons[i] << '\n';
  for (const std::string &note : describeStreamOrderDelays(s))
    os << "  note: " << note << '\n';
}

} // namespace

std::string pipec::describeDeviceUse(const DeviceUse &use, llvm::StringRef span) {
  std::string words = "busy " + formatTime(use.busyUs) + ", bubble " +
                      formatPercent(use.bubbleFraction, 1) + " of " + span.str();
  if (use.commUs > 0)
    words += "; communication " + formatTime(use.commUs) + ", " +
             formatPercent(use.hiddenCommUs / use.commUs, 1) + " hidden";
  return words;
}

void pipec::emitText(const Schedule &s, llvm::raw_ostream &os) {
  os << formatv("pipeline '{0}': {1} stage instance{2}, {3} iteration{4}, "
                "lowered to {5}\n\n",
                s.pipeline.name, s.instances.size(), s.instances.size() == 1 ? "" : "s",
                s.pipeline.iterations, s.pipeline.iterations == 1 ? "" : "s",
                spelling(s.lowering));
  streams(s, os);
  buffers(s, os);
  if (s.lowering == Lowering::Streams)
    hostCalls(s, os);
  else
    graph(s, os);
  analysis(s, os);
}
