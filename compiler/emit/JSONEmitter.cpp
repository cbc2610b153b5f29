//===- JSONEmitter.cpp - The schedule document of SCHEDULE.md -------------===//
//
// Streamed through llvm::json::OStream: a ten-million-instance schedule is
// written without building it in memory first.
//
//===----------------------------------------------------------------------===//

#include "compiler/emit/Emitters.h"

#include "compiler/schedule/Schedule.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>
#include <cmath>

using namespace pipec;

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

  void document(llvm::ArrayRef<const Schedule *> schedules,
                llvm::StringRef source) {
    j.object([&] {
      j.attribute("format", "pipec-schedule");
      j.attribute("version", 1);
      j.attribute("source", source);
      j.attributeArray("pipelines", [&] {
        for (const Schedule *s : schedules)
          pipeline(*s);
      });
    });
    os << '\n';
  }

private:
  void number(llvm::StringRef key, double value) {
    j.attributeBegin(key);
    j.rawValue([&](llvm::raw_ostream &out) { writeNumber(out, value); });
    j.attributeEnd();
  }

  void pipeline(const Schedule &s) {
    const Instances &inst = s.instances;
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
          });
      });
      j.attributeArray("stages", [&] {
        for (uint32_t v = 0; v < inst.size(); ++v)
          stage(s, v);
      });
      j.attributeArray("ops", [&] {
        for (const Op &op : s.ops)
          j.object([&] {
            const char *kind = op.kind == Op::Launch   ? "launch"
                               : op.kind == Op::Record ? "record"
                                                       : "wait";
            j.attribute("op", kind);
            j.attribute("stream", s.stream(op.stream).name);
            if (op.kind == Op::Launch)
              j.attribute("stage", int64_t(op.instance));
            else
              j.attribute("event", int64_t(op.event));
          });
      });
      j.attribute("event_objects", int64_t(s.eventObjects));
      j.attribute("records", int64_t(s.records));
      j.attribute("waits", int64_t(s.waits));
      if (s.lowering == Lowering::Graph)
        graph(s);
      else
        j.attribute("graph", nullptr);
      analysis(s);
    });
  }

  void stage(const Schedule &s, uint32_t v) {
    const Instances &inst = s.instances;
    const program::Stage &st = inst.stage(v);
    j.object([&] {
      j.attribute("id", int64_t(v));
      j.attribute("name", st.name);
      j.attribute("instance", inst.name(v));
      j.attribute("iteration", int64_t(inst.iterationOf(v)));
      j.attribute("stream", s.stream(s.streamOf(v)).name);
      j.attribute("kind", spelling(st.kind));
      if (st.kind == StageKind::Copy)
        j.attribute("direction", spelling(st.direction));
      else
        j.attribute("direction", nullptr);
      number("duration_us", st.durationUs);
      if (st.bytes)
        j.attribute("bytes", int64_t(*st.bytes));
      else
        j.attribute("bytes", nullptr);
      j.attribute("blocks", int64_t(st.blocks));
      j.attribute("threads", int64_t(st.threads));
      j.attribute("dynamic", st.dynamic);
      j.attributeArray("depends_on", [&] {
        for (uint32_t u : inst.deps().row(v))
          j.value(int64_t(u));
      });
    });
  }

  void graph(const Schedule &s) {
    j.attributeObject("graph", [&] {
      j.attributeArray("nodes", [&] {
        for (uint32_t v = 0; v < s.instances.size(); ++v)
          j.value(int64_t(v));
      });
      j.attributeArray("edges", [&] {
        for (auto [from, to] : s.graphEdges())
          j.array([&] {
            j.value(int64_t(from));
            j.value(int64_t(to));
          });
      });
      j.attributeArray("node_priorities", [&] {
        for (uint32_t v = 0; v < s.instances.size(); ++v)
          j.value(int64_t(s.stream(s.streamOf(v)).cudaPriority));
      });
    });
  }

  void analysis(const Schedule &s) {
    const Analysis &a = s.analysis;
    j.attributeObject("analysis", [&] {
      number("sequential_us", a.sequentialUs);
      number("critical_path_us", a.criticalPathUs);
      number("stream_bound_us", a.streamBoundUs);
      number("lower_bound_us", a.lowerBoundUs);
      number("overlap_ratio", a.overlapRatio);
      j.attribute("cross_stream_dependencies",
                  int64_t(a.crossStreamDependencies));
      j.attribute("redundant_dependencies", int64_t(a.redundantDependencies));
      number("event_density", a.eventDensity);
      j.attributeObject("graph_advice", [&] {
        j.attribute("suitable", a.graphAdvice.suitable);
        j.attributeArray("reasons", [&] {
          for (const std::string &r : a.graphAdvice.reasons)
            j.value(r);
        });
        number("stream_submit_us", a.graphAdvice.streamSubmitUs);
        number("graph_submit_us", a.graphAdvice.graphSubmitUs);
        number("instantiate_us", a.graphAdvice.instantiateUs);
        number("break_even_replays", a.graphAdvice.breakEvenReplays);
      });
      j.attributeArray("critical_path", [&] {
        for (uint32_t v : a.criticalPath)
          j.value(int64_t(v));
      });
      j.attributeArray("stream_order_on_critical_path", [&] {
        for (const StreamOrderDelay &d : a.streamOrderOnCriticalPath)
          j.object([&] {
            j.attribute("from", int64_t(d.from));
            j.attribute("to", int64_t(d.to));
            j.attribute("stream", s.stream(d.stream).name);
            number("delay_us", d.delayUs);
          });
      });
      const StreamPlan &p = s.streamPlan;
      j.attributeObject("auto_streams", [&] {
        j.attribute("stages", int64_t(p.autoStages));
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

void pipec::emitJSON(llvm::ArrayRef<const Schedule *> schedules,
                     llvm::StringRef source, llvm::raw_ostream &os) {
  Writer(os).document(schedules, source);
}
