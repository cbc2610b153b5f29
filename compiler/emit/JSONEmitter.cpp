//===- JSONEmitter.cpp - The schedule document (docs/scheduling.md) -------===//
//
// Streamed through llvm::json::OStream: a ten-million-instance schedule is
// written without building it in memory first.
//
//===----------------------------------------------------------------------===//

#include "compiler/emit/Emitters.h"

#include "compiler/schedule/Schedule.h"
#include "compiler/support/Chunks.h"
#include "compiler/support/Decimal.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <charconv>
#include <cmath>

using namespace pipec;

namespace {

/// `"key": ` and whatever `write` puts out, as it is: for the arrays that
/// grow with the instances, written without OStream's per-value work.
void rawAttribute(llvm::json::OStream &j, llvm::StringRef key,
                  llvm::function_ref<void(llvm::raw_ostream &)> write) {
  j.attributeBegin(key);
  j.rawValue(write);
  j.attributeEnd();
}

} // namespace

void pipec::writeGraphCosts(llvm::json::OStream &j, const GraphAdvice &g) {
  writeNumberAttribute(j, "streams_replay_us", g.streamsReplayUs);
  writeNumberAttribute(j, "graph_replay_us", g.graphReplayUs);
  writeNumberAttribute(j, "one_time_us", g.oneTimeUs);
  if (g.breakEvenReplays)
    j.attribute("break_even_replays", int64_t(g.breakEvenReplays));
  else
    j.attribute("break_even_replays", nullptr);
  // One graph replayed each iteration: where it pays back, in iterations.
  if (g.breakEvenIterations)
    j.attribute("break_even_iterations", int64_t(g.breakEvenIterations));
  else
    j.attribute("break_even_iterations", nullptr);
  j.attribute("graphs", int64_t(g.graphs));
  if (g.flipsAtGraphLaunchUs >= 0)
    writeNumberAttribute(j, "flips_at_graph_launch_us", g.flipsAtGraphLaunchUs);
  else
    j.attribute("flips_at_graph_launch_us", nullptr);
}

void pipec::writeDeviceUses(llvm::json::OStream &j, llvm::ArrayRef<DeviceUse> devices) {
  j.attributeArray("devices", [&] {
    for (const DeviceUse &d : devices)
      j.object([&] {
        j.attribute("name", d.name);
        writeNumberAttribute(j, "busy_us", d.busyUs);
        writeNumberAttribute(j, "bubble_fraction", d.bubbleFraction);
        writeNumberAttribute(j, "comm_us", d.commUs);
        if (d.commUs > 0)
          writeNumberAttribute(j, "comm_hidden_fraction", d.hiddenCommUs / d.commUs);
        else
          j.attribute("comm_hidden_fraction", nullptr);
      });
  });
}

void pipec::writeNumberAttribute(llvm::json::OStream &j, llvm::StringRef key, double value) {
  rawAttribute(j, key, [&](llvm::raw_ostream &out) { writeNumber(out, value); });
}

void pipec::writeNumber(llvm::raw_ostream &os, double value) {
  if (!std::isfinite(value)) {
    os << "null";
    return;
  }
  if (value == 0)
    value = 0; // no "-0.0"
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  llvm::StringRef text(buffer, result.ptr - buffer);
  os << text;
  if (text.find_first_of(".e") == llvm::StringRef::npos)
    os << ".0";
}

namespace {

class Writer {
public:
  Writer(llvm::raw_ostream &os) : os(os), j(os, 0) {}

  void document(llvm::ArrayRef<const Schedule *> schedules, llvm::StringRef source) {
    j.object([&] {
      j.attribute("format", "pipec-schedule");
      j.attribute("version", 3);
      j.attribute("source", source);
      j.attributeArray("pipelines", [&] {
        for (const Schedule *s : schedules)
          pipeline(*s);
      });
    });
    os << '\n';
  }

private:
  void number(llvm::StringRef key, double value) { writeNumberAttribute(j, key, value); }

  void pipeline(const Schedule &s) {
    j.object([&] {
      j.attribute("name", s.pipeline.name);
      j.attribute("lowering", spelling(s.lowering));
      j.attribute("iterations", int64_t(s.pipeline.iterations));
      j.attributeArray("streams", [&] {
        for (const program::Stream &st : s.streamPlan.streams)
          j.object([&] {
            j.attribute("name", st.name);
            if (st.priorityClass == program::PriorityClass::Raw)
              j.attribute("priority", int64_t(st.rawPriority));
            else
              j.attribute("priority", program::spelling(st.priorityClass));
            j.attribute("cuda_priority", int64_t(st.cudaPriority));
            j.attribute("auto", st.isAuto);
            if (s.pipeline.devices.size() > 1)
              j.attribute("device", s.pipeline.devices[st.device].name);
          });
      });
      j.attribute("sync", s.pipeline.syncDeclared ? "declared" : "inferred");
      j.attributeArray("buffers", [&] {
        for (const program::Buffer &b : s.pipeline.buffers)
          j.object([&] {
            j.attribute("name", b.name);
            j.attribute("slots", int64_t(b.slots));
            j.attribute("bytes", int64_t(b.bytes));
            j.attribute("space", b.host ? "host" : "device");
          });
      });
      // The two long arrays are written directly, from fragments made once
      // per stage and per stream: names are identifiers and need no
      // escaping. The bytes are those json::OStream would write.
      rawAttribute(j, "stages", [&](llvm::raw_ostream &out) { stages(s, out); });
      const bool graphLowering = s.lowering == Lowering::Graph;
      rawAttribute(j, "ops", [&](llvm::raw_ostream &out) {
        ops(s, graphLowering ? s.graphOps : s.ops, out);
      });
      j.attribute("event_objects",
                  int64_t(graphLowering ? s.graphEventObjects : s.eventObjects));
      j.attribute("records", int64_t(s.records));
      j.attribute("waits", int64_t(s.waits));
      j.attribute("syncs", int64_t(s.syncs));
      // Several devices: one host thread each, and the joins between them.
      if (s.pipeline.devices.size() > 1)
        j.attribute("joins", int64_t(s.joins));
      if (s.lowering == Lowering::Graph)
        graph(s);
      else
        j.attribute("graph", nullptr);
      analysis(s);
    });
  }

  static void stages(const Schedule &s, llvm::raw_ostream &out) {
    const Instances &inst = s.instances;
    const program::Pipeline &p = s.pipeline;
    // Per stage: what comes before the instance's name, and after its
    // iteration up to the dependency list.
    std::vector<std::string> head(p.stages.size()), tail(p.stages.size());
    for (size_t k = 0; k < p.stages.size(); ++k) {
      const program::Stage &st = p.stages[k];
      llvm::raw_string_ostream h(head[k]), t(tail[k]);
      h << ",\"name\":\"" << st.name << "\",\"instance\":\"" << st.name;
      if (s.streamPlan.streamOfStage[k] == kHostStream) {
        t << ",\"stream\":null";
        if (p.devices.size() > 1)
          t << ",\"device\":\"" << p.devices[st.cpu().hostDevice].name << '"';
      } else
        t << ",\"stream\":\"" << s.stream(s.streamPlan.streamOfStage[k]).name << '"';
      t << ",\"kind\":\"" << spelling(st.kind()) << "\",\"direction\":";
      if (st.kind() == StageKind::Copy)
        t << '"' << spelling(st.copy().direction) << '"';
      else
        t << "null";
      if (program::isCollective(st))
        t << ",\"collective\":\"" << spelling(st.collective().op)
          << "\",\"ranks\":" << st.collective().parts;
      if (isPeerCopy(st))
        t << ",\"to_device\":\"" << p.devices[st.copy().peerDevice].name << '"';
      t << ",\"duration_us\":";
      writeNumber(t, st.durationUs);
      t << ",\"bytes\":";
      if (st.bytes)
        t << *st.bytes;
      else
        t << "null";
      // Every stage has the grid keys: a kernel's, the defaults for another.
      const auto *kernel = std::get_if<program::KernelWork>(&st.work);
      const program::KernelWork grid = kernel ? *kernel : program::KernelWork{};
      t << ",\"blocks\":" << grid.blocks << ",\"threads\":" << grid.threads
        << ",\"smem\":" << grid.smemBytes << ",\"regs\":" << grid.regs
        << ",\"dynamic\":" << (st.dynamic ? "true" : "false") << ",\"issue_us\":";
      writeNumber(t, st.issueUs);
      if (st.graph >= 0) // version 5: a node of recorded graph launch N
        t << ",\"graph\":" << st.graph;
    }
    const bool indexed = p.iterations > 1;
    // Dependencies are inferred only from reads and writes: without any,
    // every edge is declared and the lists are written straight.
    const bool anyInferred =
        std::any_of(p.stages.begin(), p.stages.end(),
                    [](const program::Stage &st) { return !st.accesses.empty(); });
    out << '[';
    writeInChunks(inst.size(), out, [&](size_t from, size_t to, llvm::raw_ostream &out) {
      for (uint32_t v = uint32_t(from); v < to; ++v) {
        const uint32_t k = inst.stageOf(v), it = inst.iterationOf(v);
        out << (v ? ",{\"id\":" : "{\"id\":") << Decimal(v) << head[k];
        if (indexed)
          out << '[' << Decimal(it) << ']';
        out << "\",\"iteration\":" << Decimal(it) << tail[k];
        const program::Stage &st = p.stages[k];
        if (st.accesses.empty())
          out << ",\"reads\":[],\"writes\":[]";
        else
          for (bool write : {false, true}) {
            out << (write ? ",\"writes\":[" : ",\"reads\":[");
            bool first = true;
            for (const program::Access &a : st.accesses)
              if (a.write == write) {
                const program::Buffer &b = p.buffers[a.buffer];
                out << (first ? "" : ",") << "{\"buffer\":\"" << b.name
                    << "\",\"slot\":" << Decimal(a.slot(it, b.slots)) << '}';
                first = false;
              }
            out << ']';
          }
        out << ",\"depends_on\":[";
        const uint64_t base = inst.deps().begin[v];
        llvm::ArrayRef<uint32_t> row = inst.deps().row(v);
        if (!anyInferred) {
          for (size_t i = 0; i < row.size(); ++i) {
            if (i)
              out << ',';
            out << Decimal(row[i]);
          }
          out << "],\"inferred_from\":[]}";
          continue;
        }
        bool first = true;
        for (size_t i = 0; i < row.size(); ++i)
          if (inst.inferredFrom(base + i) < 0) {
            out << (first ? "" : ",") << Decimal(row[i]);
            first = false;
          }
        out << "],\"inferred_from\":[";
        first = true;
        for (size_t i = 0; i < row.size(); ++i)
          if (int32_t b = inst.inferredFrom(base + i); b >= 0) {
            out << (first ? "" : ",") << "{\"stage\":" << Decimal(row[i]) << ",\"buffer\":\""
                << p.buffers[b].name << "\"}";
            first = false;
          }
        out << "]}";
      }
    });
    out << ']';
  }

  static void ops(const Schedule &s, const std::vector<Op> &list, llvm::raw_ostream &out) {
    std::vector<std::string> launch, record, wait;
    for (const program::Stream &st : s.streamPlan.streams) {
      launch.push_back("{\"op\":\"launch\",\"stream\":\"" + st.name + "\",\"stage\":");
      record.push_back("{\"op\":\"record\",\"stream\":\"" + st.name + "\",\"event\":");
      wait.push_back("{\"op\":\"wait\",\"stream\":\"" + st.name + "\",\"event\":");
    }
    // With several devices, a call off any stream names its host thread's
    // device.
    const program::Pipeline &p = s.pipeline;
    const std::vector<uint32_t> threadOfOp = opThreads(s, list);
    std::vector<std::string> onThread;
    for (size_t d = 0; d < p.deviceCount(); ++d)
      onThread.push_back(p.devices.size() > 1 ? ",\"device\":\"" + p.devices[d].name + '"'
                                              : std::string());
    out << '[';
    writeInChunks(list.size(), out, [&](size_t from, size_t to, llvm::raw_ostream &out) {
      for (size_t i = from; i < to; ++i) {
        const Op &op = list[i];
        if (i)
          out << ',';
        switch (op.kind) {
        case Op::Launch:
          out << launch[op.stream] << Decimal(op.instance) << '}';
          break;
        case Op::Record:
          // In the graph lowering, an event-record node after `stage`.
          if (op.stream == kHostStream)
            out << "{\"op\":\"record\",\"event\":" << Decimal(op.event)
                << ",\"stage\":" << Decimal(op.instance) << '}';
          else
            out << record[op.stream] << Decimal(op.event) << '}';
          break;
        case Op::Wait:
          out << wait[op.stream] << Decimal(op.event) << '}';
          break;
        case Op::Cpu:
          out << "{\"op\":\"cpu\",\"stage\":" << Decimal(op.instance)
              << onThread[threadOfOp[i]] << '}';
          break;
        case Op::Sync:
          out << "{\"op\":\"sync\",\"event\":" << Decimal(op.event) << onThread[threadOfOp[i]]
              << '}';
          break;
        case Op::Join:
          out << "{\"op\":\"join\",\"stage\":" << Decimal(op.instance)
              << onThread[threadOfOp[i]] << '}';
          break;
        case Op::GraphLaunch:
          out << "{\"op\":\"graph_launch\",\"segment\":" << Decimal(op.event) << '}';
          break;
        }
      }
    });
    out << ']';
  }

  /// The graph lowering: its nodes (the device stages), edges and node
  /// priorities, and per segment its nodes and edges.
  void graph(const Schedule &s) {
    std::vector<std::pair<uint32_t, uint32_t>> edges = s.graphEdges();
    // Each segment's nodes and edges, in one pass over each (both sorted).
    std::vector<std::vector<uint32_t>> nodesOf(s.segments), edgesOf(s.segments);
    for (uint32_t v = 0; v < s.instances.size(); ++v)
      if (!s.onHost(v))
        nodesOf[s.segmentOf[v]].push_back(v);
    for (uint32_t e = 0; e < edges.size(); ++e)
      edgesOf[s.segmentOf[edges[e].second]].push_back(e);
    auto nodes = [&](llvm::raw_ostream &out, uint32_t segment) {
      out << '[';
      bool first = true;
      for (uint32_t v = 0; v < s.instances.size(); ++v)
        if (!s.onHost(v) && (segment == kNoSegment || s.segmentOf[v] == segment)) {
          out << (first ? "" : ",") << Decimal(v);
          first = false;
        }
      out << ']';
    };
    auto pairs = [](llvm::raw_ostream &out, auto begin, auto end, auto pairOf) {
      out << '[';
      for (auto it = begin; it != end; ++it) {
        const std::pair<uint32_t, uint32_t> e = pairOf(*it);
        out << (it == begin ? "[" : ",[") << Decimal(e.first) << ',' << Decimal(e.second)
            << ']';
      }
      out << ']';
    };
    auto same = [](const std::pair<uint32_t, uint32_t> &e) { return e; };
    auto edgeAt = [&](uint32_t e) { return edges[e]; };
    j.attributeObject("graph", [&] {
      // Per instance and per edge: written straight, as the stages are.
      rawAttribute(j, "nodes", [&](llvm::raw_ostream &out) { nodes(out, kNoSegment); });
      rawAttribute(j, "edges", [&](llvm::raw_ostream &out) {
        pairs(out, edges.begin(), edges.end(), same);
      });
      rawAttribute(j, "node_priorities", [&](llvm::raw_ostream &out) {
        out << '[';
        bool first = true;
        for (uint32_t v = 0; v < s.instances.size(); ++v)
          if (!s.onHost(v)) {
            out << (first ? "" : ",") << s.stream(s.streamOf(v)).cudaPriority;
            first = false;
          }
        out << ']';
      });
      // Per segment: its nodes and edges, the stream it is launched on, and
      // the orderings into it from other segments (an event-record node
      // there, an event-wait node here).
      j.attributeArray("segments", [&] {
        for (uint32_t g = 0; g < s.segments; ++g)
          j.object([&] {
            rawAttribute(j, "nodes", [&](llvm::raw_ostream &out) {
              out << '[';
              for (size_t k = 0; k < nodesOf[g].size(); ++k)
                out << (k ? "," : "") << Decimal(nodesOf[g][k]);
              out << ']';
            });
            rawAttribute(j, "edges", [&](llvm::raw_ostream &out) {
              pairs(out, edgesOf[g].begin(), edgesOf[g].end(), edgeAt);
            });
            j.attribute("launch_stream", int64_t(g % kGraphLaunchStreams));
            std::vector<std::pair<uint32_t, uint32_t>> waits;
            for (uint32_t v : nodesOf[g])
              for (uint32_t u : s.graphWaits().row(v))
                waits.push_back({u, v});
            std::sort(waits.begin(), waits.end());
            rawAttribute(j, "waits", [&](llvm::raw_ostream &out) {
              pairs(out, waits.begin(), waits.end(), same);
            });
          });
      });
    });
  }

  static void streamOrderDelays(const Schedule &s, llvm::raw_ostream &out) {
    out << '[';
    bool first = true;
    for (const StreamOrderDelay &d : s.analysis.streamOrderOnCriticalPath) {
      out << (first ? "{\"from\":" : ",{\"from\":") << Decimal(d.from)
          << ",\"to\":" << Decimal(d.to) << ",\"stream\":\"" << s.stream(d.stream).name
          << "\",\"delay_us\":";
      writeNumber(out, d.delayUs);
      out << ",\"reason\":\""
          << (d.reason == StreamOrderDelay::Buffer       ? "buffer"
              : d.reason == StreamOrderDelay::CopyEngine ? "copy_engine"
                                                         : "stream_order")
          << '"';
      if (d.reason == StreamOrderDelay::Buffer)
        out << ",\"buffer\":\"" << s.pipeline.buffers[d.buffer].name << '"';
      out << '}';
      first = false;
    }
    out << ']';
  }

  void analysis(const Schedule &s) {
    const Analysis &a = s.analysis;
    j.attributeObject("analysis", [&] {
      number("sequential_us", a.sequentialUs);
      number("critical_path_us", a.criticalPathUs);
      if (!a.devices.empty())
        writeDeviceUses(j, a.devices);
      number("stream_bound_us", a.streamBoundUs);
      number("lower_bound_us", a.lowerBoundUs);
      j.attributeObject("bounds", [&] {
        for (const Bound &b : a.bounds)
          number(b.key, b.us);
      });
      j.attribute("binding", a.bounds.empty() ? "" : a.bounds[a.binding].key);
      number("overlap_ratio", a.overlapRatio);
      j.attribute("cross_stream_dependencies", int64_t(a.crossStreamDependencies));
      j.attribute("redundant_dependencies", int64_t(a.redundantDependencies));
      number("event_density", a.eventDensity);
      j.attribute("device_bytes", int64_t(a.deviceBytes));
      j.attribute("host_bytes", int64_t(a.hostBytes));
      j.attributeObject("graph_advice", [&] {
        const GraphAdvice &g = a.graphAdvice;
        j.attribute("suitable", g.suitable);
        j.attribute("evaluated", g.evaluated);
        j.attributeArray("reasons", [&] {
          for (const std::string &r : g.reasons)
            j.value(r);
        });
        writeGraphCosts(j, g);
      });
      // Both grow with the instances (a quarter of them, on unrolled
      // pipelines): written straight, as the stages and ops are.
      rawAttribute(j, "critical_path", [&](llvm::raw_ostream &out) {
        out << '[';
        for (size_t i = 0; i < a.criticalPath.size(); ++i)
          out << (i ? "," : "") << Decimal(a.criticalPath[i]);
        out << ']';
      });
      rawAttribute(j, "stream_order_on_critical_path",
                   [&](llvm::raw_ostream &out) { streamOrderDelays(s, out); });
      const StreamPlan &p = s.streamPlan;
      j.attributeObject("auto_streams", [&] {
        j.attribute("stages", int64_t(p.autoStages));
        j.attribute("method", spelling(p.method));
        j.attribute("chosen_from", p.chosenFrom);
        j.attribute("evaluations", int64_t(p.evaluations));
        number("model_makespan_us", p.modelMakespanUs);
        j.attribute("matching_chains", int64_t(p.matchingChains));
        j.attribute("matching_bound", int64_t(p.matchingBound));
        j.attribute("cross_stream_edges", int64_t(p.crossStreamAutoEdges));
        j.attribute("forced_orderings", int64_t(p.forcedOrderings));
      });
    });
  }

  llvm::raw_ostream &os;
  llvm::json::OStream j;
};

} // namespace

void pipec::emitJSON(llvm::ArrayRef<const Schedule *> schedules, llvm::StringRef source,
                     llvm::raw_ostream &os) {
  Writer(os).document(schedules, source);
}
