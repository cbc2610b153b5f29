//===- Advisor.cpp --------------------------------------------------------===//

#include "runtime/advise/Advisor.h"

#include "compiler/schedule/Schedule.h"
#include "compiler/schedule/StreamAssignment.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace pipec;
using namespace pipec::runtime;
using llvm::formatv;

namespace {

/// The same pipeline with other streams: `streamFor` names each stage's.
template <typename StreamFor>
program::Pipeline restreamed(const program::Pipeline &p, StreamFor streamFor) {
  program::Pipeline q = p;
  q.streams.clear();
  std::map<std::string, int32_t> index;
  for (program::Stage &s : q.stages) {
    std::string name = streamFor(s);
    if (name.empty()) {
      s.stream = program::kNoStream;
      continue;
    }
    auto [it, inserted] = index.try_emplace(name, int32_t(q.streams.size()));
    if (inserted) {
      program::Stream st;
      st.name = name;
      q.streams.push_back(st);
    }
    s.stream = it->second;
  }
  return q;
}

struct Measured {
  std::string what;
  double makespan = 0, replay = 0;
  uint64_t waits = 0;
  size_t streams = 0;
};

} // namespace

llvm::Error runtime::advise(const program::Pipeline &p,
                            const DeviceProfile &profile, Backend &backend,
                            unsigned replays, llvm::raw_ostream &os) {
  RunOptions options;
  options.replays = replays;
  auto measure = [&](const program::Pipeline &variant, const std::string &what,
                     Lowering lowering,
                     bool priorities) -> llvm::Expected<std::pair<Measured, LoweringRun>> {
    Schedule s(variant, profile, ScheduleOptions());
    RunOptions o = options;
    o.priorities = priorities;
    llvm::Expected<LoweringRun> r = backend.run(s, lowering, o);
    if (!r)
      return r.takeError();
    r->schedule = nullptr; // the schedule dies here
    Measured m{what, r->makespanUs, r->timings.replayMedian, s.waits,
               s.streamPlan.streams.size()};
    return std::make_pair(m, std::move(*r));
  };

  Schedule written(p, profile, ScheduleOptions());
  os << formatv("pipeline '{0}' ({1} stage instances; measured on {2})\n",
                p.name, written.instances.size(), backend.device());

  // 1. Streams: the split as written against the alternatives.
  std::vector<std::pair<std::string, program::Pipeline>> variants;
  variants.push_back({"as written", p});
  variants.push_back({"one stream", restreamed(p, [](const program::Stage &) {
                        return std::string("single");
                      })});
  variants.push_back({"automatic streams", restreamed(p, [](const program::Stage &) {
                        return std::string();
                      })});
  variants.push_back({"copies by direction, compute, host",
                      restreamed(p, [](const program::Stage &s) {
                        if (s.kind == StageKind::Copy)
                          return std::string(spelling(s.direction));
                        return std::string(s.kind == StageKind::Host ? "host"
                                                                     : "compute");
                      })});
  std::vector<Measured> split;
  for (auto &[what, variant] : variants) {
    auto m = measure(variant, what, Lowering::Streams, true);
    if (!m)
      return m.takeError();
    split.push_back(m->first);
  }
  const Measured *best = &split[0];
  for (const Measured &m : split)
    if (m.makespan < best->makespan - 1e-6)
      best = &m;
  const Measured &one = split[1];
  std::string evidence;
  for (const Measured &m : split)
    evidence += formatv("{0}{1} {2:f1} us ({3} stream(s), {4} wait(s))",
                        evidence.empty() ? "" : "; ", m.what, m.makespan,
                        m.streams, m.waits)
                    .str();
  if (best == &split[0])
    os << formatv("  1. Streams: keep the split as written; it is {0:p0} faster "
                  "than one stream.\n",
                  one.makespan > 0 ? 1 - split[0].makespan / one.makespan : 0.0);
  else if (best == &one)
    os << "  1. Streams: splitting does not pay here; one stream is as fast.\n";
  else
    os << formatv("  1. Streams: use {0}: {1:f1} us instead of {2:f1} us as "
                  "written.\n",
                  best->what, best->makespan, split[0].makespan);
  os << "     Evidence: makespan " << evidence << ".\n";

  // 2. Stream order on the critical path.
  const Analysis &a = written.analysis;
  if (a.streamOrderOnCriticalPath.empty()) {
    os << formatv("  2. Critical path: only dependencies lie on it; stream "
                  "order costs nothing.\n     Evidence: critical path {0:f1} "
                  "us through {1} stage instance(s).\n",
                  a.criticalPathUs, a.criticalPath.size());
  } else {
    double total = 0;
    for (const StreamOrderDelay &d : a.streamOrderOnCriticalPath)
      total += d.delayUs;
    const StreamOrderDelay &d = a.streamOrderOnCriticalPath.front();
    os << formatv("  2. Critical path: {0} stream-order edge(s) on it delay "
                  "their stages by {1:f1} us in all; the first: {2} before {3} "
                  "on stream '{4}' ({5:f1} us). Put one of them on another "
                  "stream.\n",
                  a.streamOrderOnCriticalPath.size(), total,
                  written.instances.name(d.from), written.instances.name(d.to),
                  written.stream(d.stream).name, d.delayUs);
    os << formatv("     Evidence: critical path {0:f1} us; per-stream bound "
                  "{1:f1} us.\n",
                  a.criticalPathUs, a.streamBoundUs);
  }

  // 3. Graph or stream launches.
  auto streams = measure(p, "streams", Lowering::Streams, true);
  if (!streams)
    return streams.takeError();
  auto graph = measure(p, "graph", Lowering::Graph, true);
  if (!graph)
    return graph.takeError();
  const Timings &ts = streams->second.timings, &tg = graph->second.timings;
  double saved = ts.replayMedian - tg.replayMedian;
  double once = tg.capture + tg.instantiate;
  if (saved > 0)
    os << formatv("  3. CUDA graph: worth it after {0:f0} replay(s); each replay "
                  "saves {1:f1} us.\n",
                  std::ceil(once / saved), saved);
  else
    os << "  3. CUDA graph: not worth it; stream launches are as fast per "
          "replay.\n";
  os << formatv("     Evidence: replay {0:f1} us as streams, {1:f1} us as a "
                "graph; capture {2:f1} us and instantiation {3:f1} us once.\n",
                ts.replayMedian, tg.replayMedian, tg.capture, tg.instantiate);

  // 4. Priorities: the stages on the most urgent streams.
  int urgent = profile.priorityLeast;
  for (const program::Stream &st : written.streamPlan.streams)
    urgent = std::min(urgent, st.cudaPriority);
  bool distinct = false;
  for (const program::Stream &st : written.streamPlan.streams)
    distinct |= st.cudaPriority != urgent;
  if (!distinct) {
    os << "  4. Priorities: every stream has the same priority; there is "
          "nothing for them to change.\n"
       << "     Evidence: no stream is more urgent than another.\n";
  } else {
    auto without = measure(p, "without", Lowering::Streams, false);
    if (!without)
      return without.takeError();
    const LoweringRun &with = streams->second, &plain = without->second;
    double lastWith = 0, lastWithout = 0;
    size_t counted = 0;
    for (uint32_t v = 0; v < written.instances.size(); ++v)
      if (written.stream(written.streamOf(v)).cudaPriority == urgent) {
        lastWith = std::max(lastWith, with.end[v] - with.firstStartUs);
        lastWithout = std::max(lastWithout, plain.end[v] - plain.firstStartUs);
        ++counted;
      }
    if (lastWithout > lastWith + 1e-6)
      os << formatv("  4. Priorities: they help; the urgent stages finish "
                    "{0:f1} us sooner.\n",
                    lastWithout - lastWith);
    else
      os << "  4. Priorities: they change nothing here; the urgent stages "
            "never wait for SMs.\n";
    os << formatv("     Evidence: the last of {0} stage instance(s) on the most "
                  "urgent stream(s) ends at {1:f1} us with priorities and "
                  "{2:f1} us without.\n",
                  counted, lastWith, lastWithout);
  }

  // 5. Redundant dependencies.
  StageGraph stageGraph(p, issueOrder(p));
  std::vector<std::string> redundant;
  if (stageGraph.exact) {
    uint64_t e = 0;
    for (uint32_t pos = 0; pos < stageGraph.order.size(); ++pos)
      for (uint32_t target : stageGraph.deps.row(pos))
        if (!stageGraph.declaredKept[e++])
          redundant.push_back(p.stages[stageGraph.order[pos]].name + " on " +
                              p.stages[stageGraph.order[target]].name);
  }
  if (redundant.empty()) {
    os << "  5. Dependencies: none is redundant.\n";
  } else {
    os << formatv("  5. Dependencies: {0} can go; others imply them.\n",
                  redundant.size());
  }
  std::string list;
  for (size_t i = 0; i < redundant.size() && i < 5; ++i)
    list += (i ? ", " : "") + redundant[i];
  os << formatv("     Evidence: {0} of {1} declared dependencies are already "
                "implied by other dependencies and stream order{2}{3}.\n",
                a.redundantDependencies, written.instances.deps().edges(),
                redundant.empty() ? "" : "; implied by other dependencies: ",
                list);
  return llvm::Error::success();
}
