//===- sync_baselines.cpp - pipec's synchronisation against simple baselines ===//
//
// For one .pipe file, the waits, records and event objects each strategy
// needs, and the makespan the device model gives it:
//  - pipec: one wait per cross-stream edge of the transitive reduction of
//    dependencies and stream order, event objects reused;
//  - naive: one wait per cross-stream dependency, an event per producer;
//  - watermark: the per-stream-pair watermark of XLA and AMD's Render
//    Pipeline Shaders: a wait on stream A for producer u is skipped when A
//    already waited for a later producer of u's stream;
//  - round-robin: Taskflow's stream assignment (level index modulo the
//    number of streams), then one wait per cross-stream dependency.
//
//===----------------------------------------------------------------------===//

#include "compiler/parse/Parser.h"
#include "compiler/schedule/Schedule.h"
#include "compiler/sema/Sema.h"
#include "model/DeviceModel.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace pipec;

namespace {

struct Plan {
  std::vector<Op> ops;
  uint64_t waits = 0, records = 0;
  uint32_t events = 0;
};

/// One wait per cross-stream dependency (that `keep` accepts), one record
/// right after each producer, one event object per producer.
template <typename Keep> Plan perDependency(const Schedule &s, Keep keep) {
  const size_t n = s.instances.size();
  std::vector<std::vector<uint32_t>> waitsBefore(n);
  std::vector<uint8_t> producer(n, 0);
  for (uint32_t v = 0; v < n; ++v)
    for (uint32_t u : s.instances.deps().row(v))
      if (s.streamOf(u) != s.streamOf(v) && keep(u, v)) {
        waitsBefore[v].push_back(u);
        producer[u] = 1;
      }
  Plan p;
  std::vector<uint32_t> eventOf(n, 0);
  for (uint32_t v = 0; v < n; ++v) {
    for (uint32_t u : waitsBefore[v]) {
      p.ops.push_back({Op::Wait, s.streamOf(v), u, eventOf[u]});
      ++p.waits;
    }
    p.ops.push_back({Op::Launch, s.streamOf(v), v, 0});
    if (producer[v]) {
      eventOf[v] = p.events++;
      p.ops.push_back({Op::Record, s.streamOf(v), v, eventOf[v]});
      ++p.records;
    }
  }
  return p;
}

double simulate(Schedule &s, const Plan &plan) {
  std::vector<Op> saved = std::move(s.ops);
  uint32_t savedEvents = s.eventObjects;
  s.ops = plan.ops;
  s.eventObjects = plan.events;
  sim::ReplayTrace trace =
      sim::simulate(s, Lowering::Streams, DeviceProfile(), sim::ModelOptions());
  s.ops = std::move(saved);
  s.eventObjects = savedEvents;
  double first = trace.start.empty() ? 0 : trace.start[0];
  for (double t : trace.start)
    first = std::min(first, t);
  return trace.doneUs - first;
}

void row(llvm::StringRef file, llvm::StringRef strategy, const Plan &p, double makespan) {
  llvm::outs() << llvm::formatv("| {0} | {1} | {2} | {3} | {4} | {5:f1} |\n", file, strategy,
                                p.waits, p.records, p.events, makespan);
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    llvm::errs() << "usage: pipec-bench-sync FILE.pipe [LABEL]\n";
    return 2;
  }
  llvm::StringRef label = argc > 2 ? argv[2] : argv[1];
  auto buffer = llvm::MemoryBuffer::getFile(argv[1]);
  if (!buffer) {
    llvm::errs() << "cannot read " << argv[1] << '\n';
    return 1;
  }
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  DiagnosticEngine diags([&](const Diagnostic &d) {
    if (d.severity == Severity::Error)
      sm.PrintMessage(llvm::errs(), d.range.Start, llvm::SourceMgr::DK_Error, d.message);
  });
  ast::File file = parseFile(sm, id, argv[1], diags);
  program::Program program = analyze(file, DeviceProfile(), diags);
  if (diags.hadError() || program.pipelines.empty())
    return 1;
  const program::Pipeline &pipeline = program.pipelines[0];

  Schedule ours(pipeline, DeviceProfile(), ScheduleOptions());
  Plan pipecPlan{ours.ops, ours.waits, ours.records, ours.eventObjects};
  row(label, "pipec", pipecPlan, simulate(ours, pipecPlan));

  Plan naive = perDependency(ours, [](uint32_t, uint32_t) { return true; });
  row(label, "one wait per cross-stream dependency", naive, simulate(ours, naive));

  // Watermarks: per (consumer stream, producer stream), the latest producer
  // position already waited for.
  std::map<std::pair<uint32_t, uint32_t>, int64_t> watermark;
  std::vector<uint32_t> position(ours.instances.size());
  std::vector<uint32_t> length(ours.streamPlan.streams.size(), 0);
  for (uint32_t v = 0; v < ours.instances.size(); ++v)
    position[v] = length[ours.streamOf(v)]++;
  Plan marked = perDependency(ours, [&](uint32_t u, uint32_t v) {
    auto key = std::make_pair(ours.streamOf(v), ours.streamOf(u));
    auto it = watermark.find(key);
    if (it != watermark.end() && int64_t(position[u]) <= it->second)
      return false;
    watermark[key] = position[u];
    return true;
  });
  row(label, "per-stream-pair watermark (XLA, RPS)", marked, simulate(ours, marked));

  // Taskflow: level index modulo the number of streams.
  program::Pipeline roundRobin = pipeline;
  std::vector<uint32_t> order = issueOrder(pipeline);
  std::vector<uint32_t> level(pipeline.stages.size(), 0);
  for (uint32_t stage : order)
    for (const program::Dependency &d : pipeline.stages[stage].deps)
      if (!d.previousIteration())
        level[stage] = std::max(level[stage], level[d.stage] + 1);
  const uint32_t streams = std::max<size_t>(1, pipeline.streams.size());
  for (uint32_t k = 0; k < roundRobin.stages.size(); ++k)
    roundRobin.stages[k].stream = static_cast<int32_t>(level[k] % streams);
  Schedule taskflow(roundRobin, DeviceProfile(), ScheduleOptions());
  Plan rr = perDependency(taskflow, [](uint32_t, uint32_t) { return true; });
  row(label, "round-robin streams by level (Taskflow)", rr, simulate(taskflow, rr));
  return 0;
}
