//===- DotEmitter.cpp - Graphviz: streams as clusters, waits highlighted --===//

#include "compiler/emit/Emitters.h"

#include "compiler/program/TimeFormat.h"
#include "compiler/schedule/Schedule.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace pipec;

static std::string quote(llvm::StringRef text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n"; // a line break inside a label
      continue;
    }
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + '"';
}

/// One pipeline: a cluster of stream clusters; node ids carry the
/// pipeline's index, so that several pipelines make one valid graph.
static void pipelineCluster(const Schedule &s, unsigned index, llvm::raw_ostream &os) {
  const Instances &inst = s.instances;
  const std::string p = "p" + std::to_string(index);
  os << "  subgraph cluster_" << p << " {\n"
     << "    label=" << quote("pipeline " + s.pipeline.name) << ";\n";
  // The streams, and each host thread that runs cpu stages.
  for (uint32_t st = 0; st < s.chains(); ++st) {
    const bool host = st >= s.hostChain();
    if (host && !s.hasHostStages(s.threadOfChain(st)))
      continue;
    os << "  subgraph cluster_" << p << "_" << st << " {\n"
       << "    label="
       << quote(host ? s.pipeline.devices.size() > 1
                           ? "host thread of " + s.pipeline.devices[s.threadOfChain(st)].name
                           : std::string("host thread")
                     : s.stream(st).name +
                           (s.pipeline.devices.empty()
                                ? std::string()
                                : " on " + s.pipeline.devices[s.stream(st).device].name) +
                           " (priority " + std::to_string(s.stream(st).cudaPriority) + ")")
       << ";\n    style=dashed;\n";
    std::vector<uint32_t> lane;
    for (uint32_t v = 0; v < inst.size(); ++v) {
      if (s.streamOf(v) != st)
        continue;
      lane.push_back(v);
      const program::Stage &stage = inst.stage(v);
      std::string work = program::isCollective(stage) ? spelling(stage.collective().op)
                                                      : spelling(stage.kind());
      if (stage.kind() == StageKind::Copy)
        work += std::string(" ") + spelling(stage.copy().direction);
      if (isPeerCopy(stage))
        work += " to " + s.pipeline.devices[stage.copy().peerDevice].name;
      os << "    " << p << "n" << v << " [label="
         << quote(inst.name(v) + "\n" + work + " " + formatTime(stage.durationUs)) << "];\n";
    }
    // The lane's order, where no drawn edge gives it (the reduction drops
    // stream order that a path implies): invisible edges, so that Graphviz
    // lays out each stream's instances in issue order, iteration after
    // iteration.
    for (size_t i = 1; i < lane.size(); ++i) {
      llvm::ArrayRef<uint32_t> kept = s.reduction.kept.row(lane[i]);
      if (std::find(kept.begin(), kept.end(), lane[i - 1]) == kept.end())
        os << "    " << p << "n" << lane[i - 1] << " -> " << p << "n" << lane[i]
           << " [style=invis];\n";
    }
    os << "  }\n";
  }
  // The event each wait uses, by (producer, consumer): a wait belongs to
  // the launch that follows it.
  std::map<std::pair<uint32_t, uint32_t>, uint32_t> eventOf;
  std::vector<const Op *> pendingWaits;
  for (const Op &op : s.ops) {
    if (op.kind == Op::Wait || op.kind == Op::Sync)
      pendingWaits.push_back(&op);
    if (op.kind != Op::Launch && op.kind != Op::Cpu)
      continue;
    for (const Op *wait : pendingWaits)
      eventOf[{wait->instance, op.instance}] = wait->event;
    pendingWaits.clear();
  }
  // The buffer an edge was inferred from (sync inferred), or none.
  auto inferredFrom = [&](uint32_t from, uint32_t to) -> int32_t {
    llvm::ArrayRef<uint32_t> row = inst.deps().row(to);
    auto it = std::lower_bound(row.begin(), row.end(), from);
    if (it == row.end() || *it != from)
      return -1;
    return inst.inferredFrom(inst.deps().begin[to] + (it - row.begin()));
  };
  // The stream lowering's edges: the reduction, host synchronisations and
  // host program order included; the graph lowering's: each segment's.
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  if (s.lowering == Lowering::Graph) {
    edges = s.graphEdges();
  } else {
    for (uint32_t v = 0; v < inst.size(); ++v)
      for (uint32_t u : s.reduction.kept.row(v))
        edges.push_back({u, v});
    std::sort(edges.begin(), edges.end());
  }
  for (auto [from, to] : edges) {
    os << "  " << p << "n" << from << " -> " << p << "n" << to;
    int32_t buffer = inferredFrom(from, to);
    std::string style = buffer < 0 ? ""
                                   : ", style=dashed, label=" +
                                         quote("'" + s.pipeline.buffers[buffer].name + "'");
    if (s.streamOf(from) == s.streamOf(to)) {
      os << " [color=gray50" << style << "]";
    } else {
      os << " [color=red, penwidth=2";
      auto it = eventOf.find({from, to});
      if (it != eventOf.end() && buffer < 0)
        os << ", label=\"e" << it->second << "\"";
      else if (it != eventOf.end())
        os << ", style=dashed, label="
           << quote("e" + std::to_string(it->second) + " '" + s.pipeline.buffers[buffer].name +
                    "'");
      else
        os << style;
      os << "]";
    }
    os << ";\n";
  }
  os << "  }\n";
}

void pipec::emitDot(llvm::ArrayRef<const Schedule *> schedules, llvm::raw_ostream &os) {
  os << "digraph pipec {\n"
     << "  rankdir=LR;\n"
     << "  node [shape=box, style=rounded, fontname=\"Helvetica\"];\n"
     << "  edge [fontname=\"Helvetica\"];\n";
  for (unsigned i = 0; i < schedules.size(); ++i)
    pipelineCluster(*schedules[i], i, os);
  os << "}\n";
}
