//===- Advisor.cpp --------------------------------------------------------===//

#include "runtime/advise/Advisor.h"

#include "compiler/program/TimeFormat.h"
#include "compiler/sema/Sema.h"
#include "runtime/report/Reports.h"
#include "compiler/emit/Emitters.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace pipec;
using namespace pipec::runtime;
using llvm::formatv;

namespace {

/// The same pipeline with other streams: `streamFor` names each stage's
/// (empty: let pipec assign it). Streams keep their priorities by name; a
/// cpu stage stays on the host thread.
template <typename StreamFor>
program::Pipeline restreamed(const program::Pipeline &p, StreamFor streamFor) {
  program::Pipeline q = p;
  q.streams.clear();
  std::map<std::string, int32_t> index;
  for (program::Stage &s : q.stages) {
    if (s.kind == StageKind::Cpu)
      continue;
    std::string name = streamFor(s);
    if (name.empty()) {
      s.stream = program::kNoStream;
      continue;
    }
    auto [it, inserted] = index.try_emplace(name, int32_t(q.streams.size()));
    if (inserted) {
      program::Stream st;
      st.name = name;
      for (const program::Stream &old : p.streams)
        if (old.name == name)
          st = old;
      q.streams.push_back(st);
    }
    s.stream = it->second;
  }
  return q;
}

/// A stream name not used in `p`, from `base`.
std::string freshStream(const program::Pipeline &p, const std::string &base) {
  llvm::StringSet<> used;
  for (const program::Stream &s : p.streams)
    used.insert(s.name);
  std::string name = base;
  for (unsigned i = 2; used.count(name); ++i)
    name = base + std::to_string(i);
  return name;
}

bool worthIt(double before, double after) {
  double gain = before - after;
  return gain >= kMinGainUs && gain >= kMinGainFraction * before;
}

} // namespace

llvm::Expected<double> runtime::measure(const program::Pipeline &pipeline,
                                        const DeviceProfile &profile,
                                        Backend &backend, unsigned replays,
                                        Lowering lowering, const char *what) {
  Schedule s(pipeline, profile, ScheduleOptions());
  RunOptions options;
  options.replays = replays;
  options.recordHost = false;
  llvm::Expected<LoweringRun> r = backend.run(s, lowering, options);
  if (!r)
    return r.takeError();
  return std::string(what) == "replay" ? r->timings.replayMedian : r->makespanUs;
}

llvm::Expected<PipelineAdvice> runtime::advise(const program::Pipeline &p,
                                               const DeviceProfile &profile,
                                               Backend &backend, unsigned replays,
                                               const GraphCostModel &cost) {
  PipelineAdvice out;
  out.name = p.name;
  ScheduleOptions options;
  options.replays = replays;
  options.graphCost = &cost;
  Schedule written(p, profile, options);
  const Analysis &a = written.analysis;
  out.instances = written.instances.size();
  out.lowerBoundUs = a.lowerBoundUs;
  out.binding = a.bounds[a.binding].key;
  out.bindingWords = a.bounds[a.binding].words;
  out.graph = a.graphAdvice;
  llvm::Expected<double> base =
      measure(p, profile, backend, replays, Lowering::Streams, "makespan");
  if (!base)
    return base.takeError();
  out.makespanUs = *base;

  // Candidate changes, each a program; measured alone against `base`.
  std::vector<std::pair<std::string, program::Pipeline>> candidates;
  // Stages that stream order holds back on the critical path: to each other
  // declared stream, and to a stream of their own.
  llvm::StringSet<> tried;
  for (const StreamOrderDelay &d : a.streamOrderOnCriticalPath) {
    const uint32_t k = written.instances.stageOf(d.to);
    const std::string &stage = p.stages[k].name;
    if (!tried.insert(stage).second || tried.size() > 8)
      continue;
    std::vector<std::string> targets;
    for (const program::Stream &st : p.streams)
      if (p.stages[k].stream < 0 || st.name != p.streams[p.stages[k].stream].name)
        targets.push_back(st.name);
    targets.push_back(freshStream(p, stage + "_stream"));
    for (const std::string &target : targets) {
      bool fresh = target == targets.back();
      candidates.push_back(
          {formatv("move stage '{0}' to {1} '{2}'", stage,
                   fresh ? "a new stream" : "stream", target),
           restreamed(p, [&](const program::Stage &s) {
             if (&s - p.stages.data() == std::ptrdiff_t(k) || s.name == stage)
               return target;
             return s.stream < 0 ? std::string() : p.streams[s.stream].name;
           })});
    }
  }
  candidates.push_back(
      {"give copies a stream per direction ('h2d', 'd2h', 'd2d'), kernels "
       "'compute' and host stages 'host'",
       restreamed(p, [](const program::Stage &s) {
         if (s.kind == StageKind::Copy)
           return std::string(spelling(s.direction));
         return std::string(s.kind == StageKind::Host ? "host" : "compute"); // memsets too
       })});
  candidates.push_back({"let pipec assign every stage's stream (drop the 'on' clauses)",
                        restreamed(p, [](const program::Stage &) { return std::string(); })});
  int greatest = profile.priorityGreatest;
  for (size_t i = 0; i < p.streams.size(); ++i)
    if (written.stream(i).cudaPriority != greatest) {
      program::Pipeline q = p;
      q.streams[i].priorityClass = program::PriorityClass::High;
      candidates.push_back(
          {formatv("raise stream '{0}' to priority high", p.streams[i].name), q});
    }

  // Rings whose slots the critical path waits on (an inferred edge of the
  // path comes from them): one more slot each.
  // Each is a whole simulation: the kMaxRings rings the path waits on most
  // often are measured, and the rest counted.
  constexpr size_t kMaxRings = 8;
  std::vector<uint32_t> rings;
  size_t ringsLeftOut = 0;
  if (!p.syncDeclared) {
    const Instances &inst = written.instances;
    std::vector<uint64_t> onPath(p.buffers.size(), 0);
    for (size_t i = 1; i < a.criticalPath.size(); ++i) {
      uint32_t u = a.criticalPath[i - 1], v = a.criticalPath[i];
      llvm::ArrayRef<uint32_t> row = inst.deps().row(v);
      for (size_t e = 0; e < row.size(); ++e)
        if (row[e] == u)
          if (int32_t b = inst.inferredFrom(inst.deps().begin[v] + e); b >= 0)
            ++onPath[b];
    }
    std::vector<uint32_t> waited;
    for (uint32_t b = 0; b < p.buffers.size(); ++b)
      if (onPath[b])
        waited.push_back(b);
    std::stable_sort(waited.begin(), waited.end(),
                     [&](uint32_t x, uint32_t y) { return onPath[x] > onPath[y]; });
    if (waited.size() > kMaxRings) {
      ringsLeftOut = waited.size() - kMaxRings;
      waited.resize(kMaxRings);
    }
    std::sort(waited.begin(), waited.end());
    for (uint32_t b : waited) {
        rings.push_back(b);
        program::Pipeline q = p;
        q.buffers[b].slots += 1;
        // The inferred dependencies follow the new ring.
        for (program::Stage &st : q.stages)
          st.deps.erase(std::remove_if(st.deps.begin(), st.deps.end(),
                                       [](const program::Dependency &d) {
                                         return d.inferred();
                                       }),
                        st.deps.end());
        inferDataDependencies(q);
        candidates.push_back(
            {formatv("deepen ring '{0}' to {1} slots (+{2} of {3} memory)", p.buffers[b].name,
                     q.buffers[b].slots, formatBytes(p.buffers[b].bytes),
                     p.buffers[b].host ? "pinned host" : "device"),
             q});
      }
  }

  // Measured; the best move per stage and the best priority raise are kept,
  // so that no two suggestions change the same thing two ways.
  std::map<std::string, size_t> slot; // key -> index in out.suggestions
  std::vector<std::pair<std::string, double>> ringResults;
  for (auto &[change, variant] : candidates) {
    llvm::Expected<double> after =
        measure(variant, profile, backend, replays, Lowering::Streams, "makespan");
    if (!after)
      return after.takeError();
    if (change.rfind("deepen ring", 0) == 0)
      ringResults.push_back({change, *after});
    if (!worthIt(*base, *after))
      continue;
    std::string key = change.rfind("move stage", 0) == 0
                          ? change.substr(0, change.find(" to "))
                      : change.rfind("raise stream", 0) == 0 ? "priority"
                                                              : change;
    Suggestion s{change, "makespan", *base, *after, variant, false};
    auto [it, inserted] = slot.try_emplace(key, out.suggestions.size());
    if (inserted)
      out.suggestions.push_back(std::move(s));
    else if (*after < out.suggestions[it->second].afterUs)
      out.suggestions[it->second] = std::move(s);
  }

  // The graph: per replay, host's first call to last end.
  const GraphAdvice &g = out.graph;
  if (g.evaluated && worthIt(g.streamsReplayUs, g.graphReplayUs) && g.suitable) {
    llvm::Expected<double> streams =
        measure(p, profile, backend, replays, Lowering::Streams, "replay");
    llvm::Expected<double> graph =
        measure(p, profile, backend, replays, Lowering::Graph, "replay");
    if (!streams)
      return streams.takeError();
    if (!graph)
      return graph.takeError();
    if (worthIt(*streams, *graph))
      out.suggestions.push_back(
          {formatv("lower to a CUDA graph (--lower=graph); it pays back its "
                   "one-time cost after {0} replay(s)",
                   g.breakEvenReplays),
           "replay", *streams, *graph, p, true});
  }
  std::stable_sort(out.suggestions.begin(), out.suggestions.end(),
                   [](const Suggestion &x, const Suggestion &y) {
                     return x.beforeUs - x.afterUs > y.beforeUs - y.afterUs;
                   });

  // What holds it back.
  for (const StreamOrderDelay &d : a.streamOrderOnCriticalPath) {
    if (out.notes.size() == 5) {
      out.notes.push_back(formatv("{0} more stream-order edge(s) on the critical path",
                                  a.streamOrderOnCriticalPath.size() - 5));
      break;
    }
    out.notes.push_back(formatv("stream order puts '{0}' before '{1}' on stream "
                                "'{2}': on the critical path, '{1}' starts {3} "
                                "later than its own dependencies allow",
                                written.instances.name(d.from),
                                written.instances.name(d.to),
                                written.stream(d.stream).name, formatTime(d.delayUs)));
  }
  for (size_t i = 0; i < rings.size() && i < ringResults.size(); ++i) {
    const program::Buffer &b = p.buffers[rings[i]];
    out.notes.push_back(formatv("ring '{0}' ({1} slot(s)) lies on the critical path: "
                                "with {2} slots the makespan would be {3} ({4} "
                                "now), for {5} more {6} memory",
                                b.name, b.slots, b.slots + 1,
                                formatTime(ringResults[i].second), formatTime(*base),
                                formatBytes(b.bytes), b.host ? "pinned host" : "device"));
  }
  if (ringsLeftOut)
    out.notes.push_back(formatv("{0} more ring(s) lie on the critical path, waited on "
                                "less often; not measured",
                                ringsLeftOut));
  if (a.redundantDependencies)
    out.notes.push_back(formatv("{0} declared dependency instance(s) are implied "
                                "by other dependencies and stream order: "
                                "dropping them changes no time (compile "
                                "warns of each)",
                                a.redundantDependencies));
  return out;
}

void runtime::printAdvice(const PipelineAdvice &adv, const std::string &device,
                          unsigned replays, llvm::raw_ostream &os) {
  os << formatv("pipeline '{0}' ({1} stage instances; measured on {2})\n",
                adv.name, adv.instances, device);
  os << formatv("  makespan {0}; lower bound {1}, set by {2} ({3} of the "
                "makespan)\n",
                formatTime(adv.makespanUs), formatTime(adv.lowerBoundUs),
                adv.bindingWords,
                formatPercent(adv.makespanUs > 0 ? adv.lowerBoundUs / adv.makespanUs : 1));
  os << "  CUDA graph: " << (adv.graph.suitable ? "worth it" : "not worth it")
     << '\n';
  for (const std::string &r : adv.graph.reasons)
    os << "    " << r << '\n';
  (void)replays;
  if (adv.suggestions.empty()) {
    os << formatv("  suggestions: none; no change tried gains {0} of the "
                  "makespan (and {1})\n",
                  formatPercent(kMinGainFraction), formatTime(kMinGainUs));
  } else {
    os << "  suggestions, each applied alone to the program and measured:\n";
    for (size_t i = 0; i < adv.suggestions.size(); ++i) {
      const Suggestion &s = adv.suggestions[i];
      os << formatv("    {0}. {1}: {2} {3} -> {4} ({5})\n", i + 1, s.change,
                    s.measure, formatTime(s.beforeUs), formatTime(s.afterUs),
                    formatPercent(s.afterUs / s.beforeUs - 1));
    }
  }
  for (const std::string &n : adv.notes)
    os << "  note: " << n << '\n';
}

void runtime::writeAdviceJSON(llvm::ArrayRef<PipelineAdvice> advice,
                              llvm::raw_ostream &os) {
  llvm::json::OStream j(os, 0);
  auto number = [&](llvm::StringRef key, double value) {
    writeNumberAttribute(j, key, value);
  };
  j.object([&] {
    j.attribute("format", "pipec-advice");
    j.attribute("version", 2);
    j.attributeArray("pipelines", [&] {
      for (const PipelineAdvice &a : advice)
        j.object([&] {
          j.attribute("name", a.name);
          number("makespan_us", a.makespanUs);
          number("lower_bound_us", a.lowerBoundUs);
          j.attribute("binding", a.binding);
          j.attributeObject("graph", [&] {
            if (a.graph.breakEvenReplays)
              j.attribute("break_even_replays", int64_t(a.graph.breakEvenReplays));
            else
              j.attribute("break_even_replays", nullptr);
            j.attribute("suitable", a.graph.suitable);
          });
          j.attributeArray("suggestions", [&] {
            for (const Suggestion &s : a.suggestions)
              j.object([&] {
                j.attribute("change", s.change);
                j.attribute("measure", s.measure);
                number("before_us", s.beforeUs);
                number("after_us", s.afterUs);
              });
          });
          j.attributeArray("notes", [&] {
            for (const std::string &n : a.notes)
              j.value(n);
          });
        });
    });
  });
  os << '\n';
}
