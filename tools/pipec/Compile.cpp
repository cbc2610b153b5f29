//===- Compile.cpp - pipec compile ----------------------------------------===//

#include "Run.h"
#include "Tool.h"

#include "compiler/emit/Emitters.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/resource.h>

using namespace llvm;
using namespace pipec;
using namespace pipec::tool;

namespace {

cl::opt<std::string> compileInput(cl::Positional, cl::Required,
                                  cl::desc("<file.pipe> ('-' reads stdin)"),
                                  cl::sub(compileCommand()), cl::cat(category()));

/// How far compilation goes, ordered by pipeline depth: the AST needs only
/// the parser; the others need the schedule.
enum class Emit { AST, Text, JSON, DOT, CUDA };
cl::opt<Emit, false, ChoiceParser<Emit>> emit(
    "emit", cl::desc("What to emit (default: text)"),
    cl::values(clEnumValN(Emit::AST, "ast", "the syntax tree, with locations"),
               clEnumValN(Emit::Text, "text", "the schedule and its analysis, to read"),
               clEnumValN(Emit::JSON, "json", "the schedule as JSON (docs/scheduling.md)"),
               clEnumValN(Emit::DOT, "dot", "the schedule as a Graphviz graph"),
               clEnumValN(Emit::CUDA, "cuda",
                          "a standalone CUDA C++ program that runs the schedule")),
    cl::init(Emit::Text), cl::sub(compileCommand()), cl::cat(category()));

// For developers: the emitted program's calls as a table from this many on
// (the cross-check of the table against the statements sets it low).
cl::opt<unsigned> callTableFrom(
    "cuda-call-table-from",
    cl::desc("--emit=cuda: write the stream lowering's calls as a table walked by a loop "
             "past this many (for developers; default 4096)"),
    cl::init(4096), cl::Hidden, cl::sub(compileCommand()), cl::cat(category()));

// For developers: what a phase made, and where to stop.
cl::opt<driver::Phase, false, ChoiceParser<driver::Phase>> printAfter(
    "print-after", cl::desc("Print what a phase made to standard error (for developers)"),
    cl::values(clEnumValN(driver::Phase::Parse, "parse", "the syntax tree"),
               clEnumValN(driver::Phase::Check, "check",
                          "the checked program, every field (compiler/program/ProgramDump.h)"),
               clEnumValN(driver::Phase::Schedule, "schedule", "each schedule, as text")),
    cl::sub(compileCommand()), cl::cat(category()));
cl::opt<driver::Phase, false, ChoiceParser<driver::Phase>>
    stopAfter("stop-after", cl::desc("Stop after a phase, emitting nothing (for developers)"),
              cl::values(clEnumValN(driver::Phase::Parse, "parse", "the syntax"),
                         clEnumValN(driver::Phase::Check, "check", "the checks (no schedule)"),
                         clEnumValN(driver::Phase::Schedule, "schedule", "the schedules")),
              cl::init(driver::Phase::Schedule), cl::sub(compileCommand()),
              cl::cat(category()));
cl::opt<LoweringChoice, false, ChoiceParser<LoweringChoice>>
    lowering("lower", cl::desc("How to lower the schedule (default: streams)"),
             cl::values(clEnumValN(LoweringChoice::Streams, "streams",
                                   "stream launches with event records and waits"),
                        clEnumValN(LoweringChoice::Graph, "graph", "one CUDA graph"),
                        clEnumValN(LoweringChoice::Auto, "auto",
                                   "a graph when the cost model says it pays")),
             cl::init(LoweringChoice::Streams), cl::sub(compileCommand()),
             cl::cat(category()));

void printStats(const std::vector<const Schedule *> &schedules, double parse, double check,
                double emitSeconds) {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  raw_ostream &os = errs();
  os << formatv("pipec: parse {0:f3} s, check {1:f3} s\n", parse, check);
  for (const Schedule *s : schedules) {
    const PhaseTimes &t = s->times;
    os << formatv("pipec: '{0}': {1} instances, {2} declared edges, {3} "
                  "reduced edges, {4} waits; unroll {5:f4} s, streams {6:f4} "
                  "s, reduction {7:f4} s, events {8:f4} s, analysis {9:f4} s\n",
                  s->pipeline.name, s->instances.size(), s->instances.deps().edges(),
                  s->reduction.kept.edges(), s->waits, t.unroll, t.streams, t.reduction,
                  t.events, t.analysis);
    const GraphAdvice &g = s->analysis.graphAdvice;
    if (g.streamsExtrapolated || g.graphExtrapolated)
      os << formatv("pipec: '{0}': the graph verdict's model skipped ahead {1} of {2} "
                    "iterations as streams, {3} as a graph (settled and periodic)\n",
                    s->pipeline.name, g.streamsExtrapolated, s->instances.iterations(),
                    g.graphExtrapolated);
  }
  os << formatv("pipec: emit {0:f3} s, peak memory {1} MiB\n", emitSeconds,
                usage.ru_maxrss / 1024);
}

} // namespace

int tool::runCompile() {
  DeviceProfile profile;
  if (int status = openCommand(compileInput, profile))
    return status;
  const model::Model model(profile);
  ScheduleOptions options;
  options.lowering = lowering;
  options.maxStreams = invocation().maxStreams;
  options.replays = invocation().replays;
  driver::Compiled c;
  CompileGoal goal;
  goal.stopAfter = emit == Emit::AST ? driver::Phase::Parse : stopAfter.getValue();
  if (printAfter.getNumOccurrences())
    goal.printAfter = printAfter.getValue();
  if (int status = compileFile(compileInput, model, options, goal, c))
    return status;
  if (stopAfter.getNumOccurrences() && emit != Emit::AST)
    return Success; // asked to stop: nothing is emitted
  if (emit == Emit::AST)
    return emitTo(invocation().outputPath,
                  [&](raw_ostream &os) { ast::dump(c.file, c.src.sm, os); })
               ? Success
               : WriteFailed;
  if (emit == Emit::CUDA)
    if (Error e = cudaCannotEmit(c.views)) {
      toolError(toString(std::move(e)));
      return UsageError;
    }

  auto clock = std::chrono::steady_clock::now();
  bool written = emitTo(invocation().outputPath, [&](raw_ostream &os) {
    switch (emit) {
    case Emit::JSON:
      emitJSON(c.views, c.src.path, os);
      break;
    case Emit::DOT:
      emitDot(c.views, os);
      break;
    case Emit::CUDA:
      llvm::cantFail(emitCuda(c.views, c.src.path, profile, os, callTableFrom, // asked above
                              invocation().outputPath.empty() || invocation().outputPath == "-"
                                  ? StringRef("pipeline.cu")
                                  : sys::path::filename(invocation().outputPath)));
      break;
    default:
      for (size_t i = 0; i < c.views.size(); ++i) {
        if (i)
          os << '\n';
        emitText(*c.views[i], os);
      }
      break;
    }
  });
  if (!written)
    return WriteFailed;
  if (invocation().stats)
    printStats(c.views, c.parseSeconds, c.checkSeconds, secondsSince(clock));
  return Success;
}
