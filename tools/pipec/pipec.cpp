//===- pipec.cpp - The pipec command line ---------------------------------===//
//
// A thin driver: it parses the command line, decides how far down the
// pipeline (source -> AST -> program -> schedule -> run) to go, and prints.
//
// Exit status: 0 success, 1 the input has errors, 2 bad command-line use,
// 3 the run failed.
//
//===----------------------------------------------------------------------===//

#include "OutputFile.h"

#include "compiler/support/ReadFile.h"

#include "compiler/ast/AST.h"
#include "compiler/diag/Diagnostics.h"
#include "compiler/diag/LineIndex.h"
#include "compiler/emit/Emitters.h"
#include "compiler/format/Formatter.h"
#include "compiler/parse/Parser.h"
#include "compiler/program/DeviceProfile.h"
#include "compiler/schedule/Lints.h"
#include "compiler/schedule/Races.h"
#include "compiler/schedule/Schedule.h"
#include "compiler/schedule/StreamAssignment.h"
#include "compiler/sema/Sema.h"
#include "runtime/Backend.h"
#include "runtime/advise/Advisor.h"
#include "runtime/cost/AssignmentCost.h"
#include "runtime/cost/GraphCost.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/import/Report.h"
#include "runtime/report/Reports.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/resource.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>

#include <chrono>

using namespace llvm;
using namespace pipec;

namespace {

constexpr const char *kVersion = "0.1.0";
constexpr uint64_t kMaxFileBytes = 64ull << 20; // 64 MiB

enum ExitCode {
  Success = 0,
  InputErrors = 1,
  UsageError = 2,
  RunFailed = 3,
  WriteFailed = 4, ///< an output (standard output, or -o) could not be written
};

/// Standard output, checked once at the end: a failed write (a full disk)
/// is one error line and WriteFailed; a closed pipe ends quietly, as Unix
/// tools do (as if killed by SIGPIPE). Never LLVM's fatal "IO failure".
int finishOutput(int status) {
  outs().flush();
  errs().clear_error();
  if (!outs().has_error())
    return status;
  std::error_code ec = outs().error();
  outs().clear_error();
  if (ec == std::errc::broken_pipe)
    _exit(128 + SIGPIPE);
  errs() << "pipec: error: cannot write to standard output: " << ec.message() << '\n';
  errs().flush();
  errs().clear_error();
  return WriteFailed;
}

/// For the exits that do not return through main (--help, --version).
void finishOutputAtExit() {
  outs().flush();
  if (outs().has_error())
    _exit(finishOutput(Success));
  errs().clear_error();
}

/// SIGPIPE (writing to a closed pipe): LLVM's handler has removed any
/// temporary file; end as an interrupted Unix tool does, without a word.
void quietPipeExit() { _exit(128 + SIGPIPE); }

cl::OptionCategory category("pipec options");

cl::SubCommand checkCmd("check", "Check .pipe files and report every error");
cl::SubCommand compileCmd("compile",
                          "Compile a .pipe file and emit its schedule");
cl::SubCommand runCmd("run", "Run a .pipe file's schedule and time it, on a "
                             "GPU or on the device model");
cl::SubCommand adviseCmd(
    "advise", "Answer, with measured numbers, how to schedule a pipeline");
cl::SubCommand fmtCmd("fmt", "Print .pipe files in the canonical layout");
cl::SubCommand importCmd("import",
                         "Turn a PyTorch profiler trace into a .pipe file, and "
                         "say what it tells");
cl::SubCommand profileCmd("profile",
                          "Print a device profile as JSON: the built-in one "
                          "(--default) or --profile's, checked");
cl::SubCommand calibrateCmd("calibrate",
                            "Measure the device model's parameters on the GPU "
                            "and write a profile");

// Options every subcommand takes.
cl::opt<unsigned> errorLimit(
    "error-limit",
    cl::desc("Stop after this many errors (0: no limit; default 20)"),
    cl::init(20), cl::sub(*cl::AllSubCommands), cl::cat(category));

enum class ColorChoice { Auto, Always, Never };
ColorChoice colorChoice = ColorChoice::Auto;
/// LLVM's own `--color` switch, which WithColor and SourceMgr consult.
cl::opt<cl::boolOrDefault> *llvmUseColor = nullptr;

/// `--color=auto|always|never`. LLVM registers a boolean `--color` of its
/// own; ours replaces it, so it is made in main() once LLVM's is gone.
void registerColorOption() {
  StringMap<cl::Option *> &registered =
      cl::getRegisteredOptions(*cl::TopLevelSubCommand);
  auto it = registered.find("color");
  if (it != registered.end()) {
    llvmUseColor = static_cast<cl::opt<cl::boolOrDefault> *>(it->second);
    it->second->removeArgument();
  }
  static cl::opt<ColorChoice, true> option(
      "color", cl::desc("Colour diagnostics"),
      cl::values(clEnumValN(ColorChoice::Auto, "auto", "on a terminal (default)"),
                 clEnumValN(ColorChoice::Always, "always", "always"),
                 clEnumValN(ColorChoice::Never, "never", "never")),
      cl::location(colorChoice), cl::sub(*cl::AllSubCommands),
      cl::cat(category));
}

// pipec check
cl::list<std::string> checkInputs(cl::Positional, cl::OneOrMore,
                                  cl::desc("<file.pipe>... ('-' reads stdin)"),
                                  cl::sub(checkCmd), cl::cat(category));

cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Check each part of a file between '// -----' lines on its own "
             "(for tests; line numbers stay those of the whole file)"),
    cl::sub(checkCmd), cl::cat(category));

// pipec compile
cl::opt<std::string> compileInput(cl::Positional, cl::Required,
                                  cl::desc("<file.pipe> ('-' reads stdin)"),
                                  cl::sub(compileCmd), cl::cat(category));

/// How far compilation goes, ordered by pipeline depth: the AST needs only
/// the parser; the others need the schedule.
enum class Emit { AST, Text, JSON, DOT, CUDA };
cl::opt<Emit> emit(
    "emit", cl::desc("What to emit (default: text)"),
    cl::values(
        clEnumValN(Emit::AST, "ast", "the syntax tree, with locations"),
        clEnumValN(Emit::Text, "text", "the schedule and its analysis, to read"),
        clEnumValN(Emit::JSON, "json", "the schedule as JSON (SCHEDULE.md)"),
        clEnumValN(Emit::DOT, "dot", "the schedule as a Graphviz graph"),
        clEnumValN(Emit::CUDA, "cuda",
                   "a standalone CUDA C++ program that runs the schedule")),
    cl::init(Emit::Text), cl::sub(compileCmd), cl::cat(category));

cl::opt<LoweringChoice> lowering(
    "lower", cl::desc("How to lower the schedule (default: streams)"),
    cl::values(
        clEnumValN(LoweringChoice::Streams, "streams",
                   "stream launches with event records and waits"),
        clEnumValN(LoweringChoice::Graph, "graph", "one CUDA graph"),
        clEnumValN(LoweringChoice::Auto, "auto",
                   "a graph when the cost model says it pays")),
    cl::init(LoweringChoice::Streams), cl::sub(compileCmd), cl::cat(category));

cl::opt<std::string> pipelineName(
    "pipeline", cl::desc("Only the pipeline of this name"),
    cl::value_desc("name"), cl::sub(compileCmd), cl::sub(runCmd),
    cl::sub(adviseCmd), cl::cat(category));

cl::opt<unsigned> maxStreams(
    "max-streams",
    cl::desc("Most streams a pipeline may use, counting those stages without "
             "'on' are given (default 8)"),
    cl::init(8), cl::sub(compileCmd), cl::sub(runCmd), cl::sub(adviseCmd),
    cl::cat(category));

cl::opt<AssignMethod> assignMethod(
    "assign", cl::desc("How stages without 'on' get streams:"),
    cl::values(
        clEnumValN(AssignMethod::Makespan, "makespan",
                   "the fastest on the device model, then fewest syncs (default)"),
        clEnumValN(AssignMethod::Matching, "matching",
                   "Nimble: fewest syncs that add no ordering"),
        clEnumValN(AssignMethod::RoundRobin, "round-robin",
                   "stage i (issue order) on stream i mod the streams"),
        clEnumValN(AssignMethod::Levels, "levels",
                   "Taskflow: dependency level mod the streams")),
    cl::init(AssignMethod::Makespan), cl::sub(compileCmd), cl::sub(runCmd),
    cl::sub(adviseCmd), cl::cat(category));

cl::opt<bool> stats(
    "stats",
    cl::desc("Print the time of each phase and the peak memory to stderr"),
    cl::sub(compileCmd), cl::sub(runCmd), cl::cat(category));

cl::opt<unsigned> replays(
    "replays",
    cl::desc("compile: replays the cost model of --lower=auto assumes; run: "
             "replays to time (default 100)"),
    cl::init(100), cl::sub(compileCmd), cl::sub(runCmd), cl::sub(adviseCmd),
    cl::sub(importCmd),
    cl::cat(category));

// pipec fmt
cl::list<std::string> fmtInputs(cl::Positional, cl::OneOrMore,
                                cl::desc("<file.pipe>... ('-' reads stdin)"),
                                cl::sub(fmtCmd), cl::cat(category));
cl::opt<bool> fmtInPlace("i", cl::desc("Rewrite the files in place"),
                         cl::sub(fmtCmd), cl::cat(category));
cl::opt<bool> fmtCheck(
    "check",
    cl::desc("Change nothing; exit 1 if a file is not in the canonical layout"),
    cl::sub(fmtCmd), cl::cat(category));

// pipec profile
cl::opt<bool> profileDefault("default", cl::desc("The built-in profile"),
                             cl::sub(profileCmd), cl::cat(category));

// pipec import
cl::opt<std::string> traceInput(cl::Positional, cl::Required,
                                cl::desc("<trace.json or trace.json.gz>"),
                                cl::sub(importCmd), cl::cat(category));
cl::opt<long long> importStep(
    "step", cl::desc("The ProfilerStep#N to import (default: the last with GPU ops)"),
    cl::value_desc("N"), cl::init(-1), cl::sub(importCmd), cl::cat(category));
cl::opt<bool> importReport(
    "report", cl::desc("Print what the step says, and what pipec predicts for it"),
    cl::sub(importCmd), cl::cat(category));
cl::opt<std::string> profileOut(
    "profile-out",
    cl::desc("Write the device profile made from the trace's GPU (for run --profile)"),
    cl::value_desc("path"), cl::sub(importCmd), cl::cat(category));

// pipec run, pipec advise
cl::opt<std::string> runInput(cl::Positional, cl::Required,
                              cl::desc("<file.pipe> ('-' reads stdin)"),
                              cl::sub(runCmd), cl::sub(adviseCmd),
                              cl::cat(category));

enum class BackendChoice { Auto, Sim, Cuda };
cl::opt<BackendChoice> backendChoice(
    "backend", cl::desc("Where to run (default: auto)"),
    cl::values(clEnumValN(BackendChoice::Auto, "auto",
                          "the GPU when one answers, else the device model"),
               clEnumValN(BackendChoice::Sim, "sim", "the device model"),
               clEnumValN(BackendChoice::Cuda, "cuda", "the GPU")),
    cl::init(BackendChoice::Auto), cl::sub(runCmd), cl::sub(adviseCmd),
    cl::cat(category));

enum class RunLowering { Streams, Graph, Both };
cl::opt<RunLowering> runLowering(
    "lower", cl::desc("Which lowering to run (default: streams)"),
    cl::values(clEnumValN(RunLowering::Streams, "streams", "stream launches"),
               clEnumValN(RunLowering::Graph, "graph", "a CUDA graph"),
               clEnumValN(RunLowering::Both, "both", "both, side by side")),
    cl::init(RunLowering::Streams), cl::sub(runCmd), cl::cat(category));

cl::opt<bool> runJSON("json",
                      cl::desc("Write the run result (run) or the advice "
                               "(advise) as JSON"),
                      cl::sub(runCmd), cl::sub(adviseCmd), cl::sub(importCmd),
                      cl::cat(category));

cl::opt<std::string> tracePath(
    "trace", cl::desc("Write a Chrome trace (Perfetto, chrome://tracing)"),
    cl::value_desc("path"), cl::sub(runCmd), cl::cat(category));

cl::opt<std::string> htmlPath(
    "html", cl::desc("Write a self-contained HTML report: the DAG, timelines, "
                     "timings"),
    cl::value_desc("path"), cl::sub(runCmd), cl::cat(category));

cl::opt<bool> showTimeline("timeline",
                           cl::desc("Draw the streams' timeline in text"),
                           cl::sub(runCmd), cl::cat(category));

cl::opt<bool> ignorePriorities(
    "ignore-priorities",
    cl::desc("Run every stream at one priority, to see what priorities do"),
    cl::sub(runCmd), cl::cat(category));

cl::opt<std::string> timingMethod(
    "timing",
    cl::desc("On a GPU, how the timeline is measured: auto (CUPTI, else "
             "events), cupti, events"),
    cl::value_desc("method"), cl::init("auto"), cl::sub(runCmd),
    cl::cat(category));

cl::opt<std::string> outputPath("o", cl::desc("Write the output to <path>"),
                                cl::value_desc("path"), cl::init("-"),
                                cl::sub(compileCmd), cl::sub(runCmd),
                                cl::sub(calibrateCmd), cl::sub(adviseCmd),
                                cl::sub(importCmd),
                                cl::cat(category));

cl::opt<std::string> profilePath(
    "profile", cl::desc("Device profile (JSON) instead of the built-in one"),
    cl::value_desc("file"), cl::sub(checkCmd), cl::sub(compileCmd),
    cl::sub(runCmd), cl::sub(adviseCmd), cl::sub(importCmd), cl::sub(profileCmd),
    cl::cat(category));

// Catches `pipec frobnicate` to say it is no command.
cl::list<std::string> strayArgs(cl::Positional, cl::ZeroOrMore, cl::Hidden,
                                cl::desc("<arguments>"),
                                cl::sub(*cl::TopLevelSubCommand));

/// Hands our choice to LLVM, whose printers decide by its own switch.
void applyColorChoice() {
  if (!llvmUseColor)
    return;
  llvmUseColor->setValue(colorChoice == ColorChoice::Always  ? cl::BOU_TRUE
                         : colorChoice == ColorChoice::Never ? cl::BOU_FALSE
                                                             : cl::BOU_UNSET);
  if (colorChoice == ColorChoice::Always)
    errs().enable_colors(true);
}

bool useColor() {
  switch (colorChoice) {
  case ColorChoice::Always:
    return true;
  case ColorChoice::Never:
    return false;
  case ColorChoice::Auto:
    break;
  }
  return errs().has_colors();
}

void toolError(const Twine &msg) {
  WithColor::error(errs(), "pipec", !useColor()) << msg << '\n';
}

/// One input file, loaded and front-ended.
struct Source {
  SourceMgr sm;
  unsigned bufferId = 0;
  std::string name;
  /// Where its lines start, shared by the handlers of its parts.
  std::shared_ptr<LineIndex> lines = std::make_shared<LineIndex>();
};

/// Reads `path` ('-' is standard input). Reports and returns false on failure.
/// The input files read so far: `-o` never writes over one of them.
std::vector<std::string> inputsRead;

bool load(StringRef path, Source &src) {
  src.name = path == "-" ? "<stdin>" : path.str();
  // Read, never mapped, and never more than the limit, whatever it is.
  Expected<std::string> text = readBounded(path, kMaxFileBytes, src.name);
  if (!text) {
    toolError(toString(text.takeError()));
    return false;
  }
  inputsRead.push_back(path.str());
  src.bufferId = src.sm.AddNewSourceBuffer(
      MemoryBuffer::getMemBufferCopy(*text, src.name), SMLoc());
  return true;
}

bool loadProfile(DeviceProfile &profile) {
  if (profilePath.empty())
    return true;
  // A profile is a few hundred bytes: 64 KiB is plenty, and bounds a
  // device or a pipe given by mistake.
  Expected<std::string> text = readBounded(profilePath, 64 * 1024, profilePath);
  if (!text) {
    toolError("cannot read profile: " + toString(text.takeError()));
    return false;
  }
  Expected<DeviceProfile> parsed = parseDeviceProfile(*text);
  if (!parsed) {
    toolError("invalid profile '" + profilePath +
              "': " + toString(parsed.takeError()));
    return false;
  }
  profile = std::move(*parsed);
  return true;
}

/// The parts of `text` between lines that are exactly `// -----`, as
/// ranges of it (no copies: a part is parsed in place).
std::vector<StringRef> splitParts(StringRef text) {
  std::vector<StringRef> parts;
  size_t start = 0, pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == StringRef::npos)
      end = text.size();
    if (text.slice(pos, end).rtrim("\r") == "// -----") {
      parts.push_back(text.slice(start, pos));
      start = end;
    }
    pos = end + 1;
  }
  parts.push_back(text.slice(start, text.size()));
  return parts;
}

/// The warnings that need more than sema: check and compile give the same.
void lint(const program::Pipeline &p, const StageGraph &graph,
          const DeviceProfile &profile, DiagnosticEngine &diags) {
  if (!diags.shouldStop())
    lintRedundantDependencies(p, graph, diags);
  if (!diags.shouldStop())
    lintHardwareQueues(p, profile.hardwareQueues, diags);
}

/// Parses and checks one buffer (or `part` of it); true when it has no
/// error.
bool checkBuffer(Source &src, const DeviceProfile &profile,
                 std::optional<StringRef> part = std::nullopt) {
  DiagnosticEngine diags(
      printingHandler(src.sm, errs(), src.name, useColor(), src.lines),
      errorLimit);
  ast::File file =
      part ? parseFile(src.sm, src.bufferId, src.name, diags, *part)
           : parseFile(src.sm, src.bufferId, src.name, diags);
  if (diags.shouldStop())
    return false;
  if (diags.hadError()) {
    diags.finish();
    return false;
  }
  program::Program program = analyze(std::move(file), profile, diags);
  for (const program::Pipeline &p : program.pipelines)
    lint(p, StageGraph(p, issueOrder(p)), profile, diags);
  // sync declared: the races need the unrolled stages on their streams
  // (a stage without `on` gets the stream compile gives it), not a schedule.
  runtime::SimAssignmentCost assignCost(profile);
  for (const program::Pipeline &p : program.pipelines)
    if (p.syncDeclared && !diags.hadError() && !diags.shouldStop()) {
      Instances instances(p);
      bool pinned = std::all_of(p.stages.begin(), p.stages.end(), [](const auto &st) {
        return st.stream != program::kNoStream;
      });
      if (pinned) {
        std::vector<uint32_t> streamOfStage;
        for (const program::Stage &st : p.stages)
          streamOfStage.push_back(static_cast<uint32_t>(st.stream));
        reportRaces(instances,
                    findRaces(instances, streamOfStage,
                              static_cast<uint32_t>(p.streams.size())),
                    diags);
        continue;
      }
      ScheduleOptions options;
      options.assignEvaluator = &assignCost;
      reportRaces(Schedule(p, profile, options), diags);
    }
  diags.finish();
  return !diags.hadError();
}

int runCheck() {
  DeviceProfile profile;
  if (!loadProfile(profile))
    return UsageError;
  int status = Success;
  for (const std::string &path : checkInputs) {
    Source src;
    if (!load(path, src)) {
      status = InputErrors;
      continue;
    }
    if (!splitInputFile) {
      if (!checkBuffer(src, profile))
        status = InputErrors;
      continue;
    }
    StringRef whole = src.sm.getMemoryBuffer(src.bufferId)->getBuffer();
    for (StringRef part : splitParts(whole))
      if (!checkBuffer(src, profile, part))
        status = InputErrors;
  }
  return status;
}

double secondsSince(std::chrono::steady_clock::time_point &since) {
  auto now = std::chrono::steady_clock::now();
  double s = std::chrono::duration<double>(now - since).count();
  since = now;
  return s;
}

void printStats(const std::vector<const Schedule *> &schedules, double parse,
                double check, double emitSeconds) {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  raw_ostream &os = errs();
  os << formatv("pipec: parse {0:f3} s, check {1:f3} s\n", parse, check);
  for (const Schedule *s : schedules) {
    const PhaseTimes &t = s->times;
    os << formatv("pipec: '{0}': {1} instances, {2} declared edges, {3} "
                  "reduced edges, {4} waits; unroll {5:f4} s, streams {6:f4} "
                  "s, reduction {7:f4} s, events {8:f4} s, analysis {9:f4} s\n",
                  s->pipeline.name, s->instances.size(),
                  s->instances.deps().edges(), s->reduction.kept.edges(),
                  s->waits, t.unroll, t.streams, t.reduction, t.events,
                  t.analysis);
  }
  os << formatv("pipec: emit {0:f3} s, peak memory {1} MiB\n", emitSeconds,
                usage.ru_maxrss / 1024);
}

/// What compile and run share: the file, checked and scheduled.
struct Compiled {
  Source src;
  std::unique_ptr<DiagnosticEngine> diags;
  ast::File file;
  program::Program program;
  std::vector<std::unique_ptr<Schedule>> schedules;
  std::vector<const Schedule *> views;
  double parseSeconds = 0, checkSeconds = 0;
};

int compileFileImpl(StringRef path, const DeviceProfile &profile,
                    const ScheduleOptions &options, bool stopAfterParse,
                    Compiled &out);

/// Loads, parses, checks and schedules `path`. Returns an exit status:
/// Success, or the status to exit with.
int compileFile(StringRef path, const DeviceProfile &profile,
                const ScheduleOptions &options, bool stopAfterParse,
                Compiled &out) {
  int status = compileFileImpl(path, profile, options, stopAfterParse, out);
  if (out.diags)
    out.diags->finish();
  return status;
}

int compileFileImpl(StringRef path, const DeviceProfile &profile,
                    const ScheduleOptions &options, bool stopAfterParse,
                    Compiled &out) {
  auto clock = std::chrono::steady_clock::now();
  if (!load(path, out.src))
    return InputErrors;
  out.diags = std::make_unique<DiagnosticEngine>(
      printingHandler(out.src.sm, errs(), out.src.name, useColor()),
      errorLimit);
  DiagnosticEngine &diags = *out.diags;
  out.file = parseFile(out.src.sm, out.src.bufferId, out.src.name, diags);
  out.parseSeconds = secondsSince(clock);
  if (diags.hadError())
    return InputErrors;
  if (stopAfterParse)
    return Success;

  // The AST is not needed past here (--emit=ast stops after parsing).
  out.program = analyze(std::move(out.file), profile, diags);
  std::vector<std::unique_ptr<StageGraph>> graphs;
  for (const program::Pipeline &p : out.program.pipelines) {
    graphs.push_back(std::make_unique<StageGraph>(p, issueOrder(p)));
    lint(p, *graphs.back(), profile, diags);
  }
  if (diags.hadError())
    return InputErrors;
  // --max-streams caps the streams pipec creates; declared ones are never
  // merged, so a cap below them is a mistake to say, not to ignore.
  if (maxStreams.getNumOccurrences())
    for (const program::Pipeline &p : out.program.pipelines)
      if (p.streams.size() > maxStreams) {
        toolError(formatv("--max-streams={0} is below the {1} streams pipeline "
                          "'{2}' declares; pipec never merges declared streams",
                          unsigned(maxStreams), p.streams.size(), p.name));
        return UsageError;
      }
  out.checkSeconds = secondsSince(clock);

  std::vector<size_t> chosen;
  for (size_t i = 0; i < out.program.pipelines.size(); ++i)
    if (pipelineName.empty() || out.program.pipelines[i].name == pipelineName)
      chosen.push_back(i);
  if (chosen.empty()) {
    std::string names;
    for (const program::Pipeline &p : out.program.pipelines)
      names += (names.empty() ? "'" : ", '") + p.name + "'";
    toolError("no pipeline named '" + pipelineName + "' in '" + out.src.name +
              "'; it has " + names);
    return UsageError;
  }
  // The graph verdict and the makespan assignment ask the device model, for
  // every command.
  runtime::SimGraphCost cost(profile);
  runtime::SimAssignmentCost assignCost(profile);
  ScheduleOptions withCost = options;
  if (!withCost.graphCost)
    withCost.graphCost = &cost;
  if (!withCost.assignEvaluator)
    withCost.assignEvaluator = &assignCost;
  withCost.assign = assignMethod;
  for (size_t i : chosen) {
    out.schedules.push_back(std::make_unique<Schedule>(
        out.program.pipelines[i], profile, withCost, std::move(graphs[i])));
    out.views.push_back(out.schedules.back().get());
    if (out.program.pipelines[i].syncDeclared)
      reportRaces(*out.schedules.back(), diags);
  }
  if (diags.hadError())
    return InputErrors;
  return Success;
}

/// Writes `write`'s output to -o; on failure says why.
/// `rewritesInput`: fmt -i, whose output is meant to replace its input.
bool emitTo(StringRef path, const std::function<void(raw_ostream &)> &write,
            bool rewritesInput = false) {
  if (Error err = writeOutput(path, write,
                              rewritesInput ? ArrayRef<std::string>()
                                            : ArrayRef<std::string>(inputsRead))) {
    toolError(toString(std::move(err)));
    return false;
  }
  return true;
}

/// What compile, run and advise check first: their counts, and the profile.
/// Returns Success or the status to exit with.
int prepare(DeviceProfile &profile) {
  if (maxStreams < 1 || replays < 1) {
    toolError("--max-streams and --replays must be at least 1");
    return UsageError;
  }
  return loadProfile(profile) ? Success : UsageError;
}

int runCompile() {
  DeviceProfile profile;
  if (int status = prepare(profile))
    return status;
  ScheduleOptions options;
  options.lowering = lowering;
  options.maxStreams = maxStreams;
  options.replays = replays;
  Compiled c;
  if (int status =
          compileFile(compileInput, profile, options, emit == Emit::AST, c))
    return status;
  if (emit == Emit::AST)
    return emitTo(outputPath,
                  [&](raw_ostream &os) { ast::dump(c.file, c.src.sm, os); })
               ? Success
               : WriteFailed;

  auto clock = std::chrono::steady_clock::now();
  bool written = emitTo(outputPath, [&](raw_ostream &os) {
    switch (emit) {
    case Emit::JSON:
      emitJSON(c.views, c.src.name, os);
      break;
    case Emit::DOT:
      emitDot(c.views, os);
      break;
    case Emit::CUDA:
      emitCuda(c.views, c.src.name, profile, os);
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
  if (stats)
    printStats(c.views, c.parseSeconds, c.checkSeconds, secondsSince(clock));
  return Success;
}

/// The backend --backend asks for; null (and a message) when none can run.
std::unique_ptr<runtime::Backend> chooseBackend(const DeviceProfile &profile) {
  if (backendChoice == BackendChoice::Sim)
    return runtime::makeSimBackend(profile);
  Expected<std::unique_ptr<runtime::Backend>> cuda =
      runtime::makeCudaBackend(profile);
  if (cuda)
    return std::move(*cuda);
  std::string why = toString(cuda.takeError());
  if (backendChoice == BackendChoice::Cuda) {
    toolError(why);
    return nullptr;
  }
  WithColor::note(errs(), "pipec", !useColor())
      << why << "; running on the device model (" << profile.name << ")\n";
  return runtime::makeSimBackend(profile);
}

int runFmt() {
  if (fmtInPlace && fmtCheck) {
    toolError("-i and --check do not go together");
    return UsageError;
  }
  int status = Success;
  for (const std::string &path : fmtInputs) {
    if (fmtInPlace && path == "-") {
      toolError("-i cannot rewrite standard input");
      return UsageError;
    }
    Source src;
    if (!load(path, src)) {
      status = InputErrors;
      continue;
    }
    DiagnosticEngine diags(
        printingHandler(src.sm, errs(), src.name, useColor()), errorLimit);
    ast::File file = parseFile(src.sm, src.bufferId, src.name, diags);
    if (diags.hadError()) {
      status = InputErrors;
      continue;
    }
    StringRef original = src.sm.getMemoryBuffer(src.bufferId)->getBuffer();
    std::string formatted = formatFile(file, original);
    if (fmtCheck) {
      if (formatted != original) {
        errs() << src.name << ": not in the canonical layout (pipec fmt -i "
               << "rewrites it)\n";
        status = InputErrors;
      }
      continue;
    }
    if (fmtInPlace) {
      if (formatted != original &&
          !emitTo(path, [&](raw_ostream &os) { os << formatted; },
                  /*rewritesInput=*/true))
        status = WriteFailed;
      continue;
    }
    outs() << formatted;
  }
  return status;
}

int runAdvise() {
  DeviceProfile profile;
  if (int status = prepare(profile))
    return status;
  Compiled c;
  if (int status = compileFile(runInput, profile, ScheduleOptions(), false, c))
    return status;
  std::unique_ptr<runtime::Backend> backend = chooseBackend(profile);
  if (!backend)
    return RunFailed;
  runtime::SimGraphCost cost(profile);
  std::vector<runtime::PipelineAdvice> advice;
  for (const Schedule *s : c.views) {
    Expected<runtime::PipelineAdvice> a =
        runtime::advise(s->pipeline, profile, *backend, replays, cost);
    if (!a) {
      toolError("advise failed: " + toString(a.takeError()));
      return RunFailed;
    }
    advice.push_back(std::move(*a));
  }
  return emitTo(outputPath,
                [&](raw_ostream &out) {
                  if (runJSON) {
                    runtime::writeAdviceJSON(advice, out);
                    return;
                  }
                  for (size_t i = 0; i < advice.size(); ++i) {
                    if (i)
                      out << '\n';
                    runtime::printAdvice(advice[i], backend->device(), replays, out);
                  }
                })
             ? Success
             : WriteFailed;
}

/// pipec profile: --default prints the built-in profile; --profile=FILE
/// prints FILE's, checked (every key known, every value in its range).
int runProfile() {
  if (profileDefault == !profilePath.empty()) {
    toolError("give one of --default and --profile=FILE");
    return UsageError;
  }
  DeviceProfile profile;
  if (!loadProfile(profile))
    return UsageError;
  writeDeviceProfile(profile, outs());
  return Success;
}

int runCalibrate() {
  DeviceProfile defaults;
  Expected<DeviceProfile> measured = runtime::calibrate(defaults, errs());
  if (!measured) {
    toolError(toString(measured.takeError()));
    return RunFailed;
  }
  return emitTo(outputPath, [&](raw_ostream &os) {
           writeDeviceProfile(*measured, os);
         })
             ? Success
             : WriteFailed;
}

int runRun() {
  runtime::RunOptions runOptions;
  if (!runtime::parseTimingRequest(timingMethod, runOptions.timing)) {
    toolError("--timing must be auto, cupti or events");
    return UsageError;
  }
  DeviceProfile profile;
  if (int status = prepare(profile))
    return status;
  // The stream lowering's host calls are what capture records, so the
  // schedule is always planned as streams; each lowering then runs from it.
  ScheduleOptions options;
  options.maxStreams = maxStreams;
  options.replays = replays;
  Compiled c;
  if (int status = compileFile(runInput, profile, options, false, c))
    return status;

  std::unique_ptr<runtime::Backend> backend = chooseBackend(profile);
  if (!backend)
    return RunFailed;
  runOptions.replays = replays;
  runOptions.priorities = !ignorePriorities;
  runOptions.recordHost = !tracePath.empty() || !htmlPath.empty();
  std::vector<Lowering> lowerings;
  if (runLowering != RunLowering::Graph)
    lowerings.push_back(Lowering::Streams);
  if (runLowering != RunLowering::Streams)
    lowerings.push_back(Lowering::Graph);
  std::vector<runtime::LoweringRun> runs;
  for (const Schedule *s : c.views) {
    Expected<std::vector<runtime::LoweringRun>> r =
        backend->runAll(*s, lowerings, runOptions);
    if (!r) {
      toolError("run failed: " + toString(r.takeError()));
      return RunFailed;
    }
    if (stats)
      for (const runtime::LoweringRun &one : *r)
        errs() << formatv("pipec: '{0}' ({1}): {2} instances, {3} simulated "
                          "events in {4:f3} s, {5:f0} events per second\n",
                          s->pipeline.name, spelling(one.lowering),
                          s->instances.size(), one.simulatedEvents, one.runSeconds,
                          one.runSeconds > 0 ? one.simulatedEvents / one.runSeconds
                                             : 0.0);
    for (runtime::LoweringRun &one : *r)
      runs.push_back(std::move(one));
  }

  if (!tracePath.empty() &&
      !emitTo(tracePath, [&](raw_ostream &os) { runtime::writeTrace(runs, os); }))
    return WriteFailed;
  if (!htmlPath.empty() &&
      !emitTo(htmlPath, [&](raw_ostream &os) {
        runtime::writeHtml(runs, *backend, c.src.name, os);
      }))
    return WriteFailed;
  bool written = emitTo(outputPath, [&](raw_ostream &os) {
    if (runJSON) {
      runtime::writeRunJSON(runs, *backend, os);
      return;
    }
    runtime::printRunTable(runs, *backend, os);
    if (showTimeline)
      for (const runtime::LoweringRun &r : runs) {
        os << '\n';
        runtime::printTimeline(r, os);
      }
  });
  if (!written)
    return WriteFailed;
  for (const runtime::LoweringRun &r : runs)
    if (r.violations)
      return RunFailed;
  return Success;
}

/// pipec import: the trace's step as a formatted .pipe file (checked clean
/// before it is written), and with --report what it says.
int runImport() {
  Expected<importer::Trace> trace = importer::readTrace(traceInput);
  if (!trace) {
    toolError(toString(trace.takeError()));
    return InputErrors;
  }
  Expected<importer::ImportedStep> step = importer::selectStep(
      *trace, importStep >= 0 ? std::optional<int64_t>(importStep) : std::nullopt);
  if (!step) {
    toolError(toString(step.takeError()));
    return InputErrors;
  }
  DeviceProfile profile = importer::profileFor(step->device);
  if (!profilePath.empty() && !loadProfile(profile))
    return UsageError;
  std::string text = importer::writePipe(*step, traceInput, profile);

  // Through the front end, as any .pipe file: it must check clean.
  SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(MemoryBuffer::getMemBufferCopy(text, "imported.pipe"),
                                      SMLoc());
  DiagnosticEngine diags(printingHandler(sm, errs(), "imported.pipe", useColor()), 20);
  ast::File file = parseFile(sm, id, "imported.pipe", diags);
  program::Program program;
  if (!diags.hadError())
    program = analyze(file, profile, diags);
  diags.finish();
  if (diags.hadError() || program.pipelines.empty()) {
    toolError("internal error: the imported pipeline does not check clean");
    return RunFailed;
  }
  std::string formatted = formatFile(file, sm.getMemoryBuffer(id)->getBuffer());

  if (!profileOut.empty() &&
      !emitTo(profileOut, [&](raw_ostream &os) { writeDeviceProfile(profile, os); }))
    return WriteFailed;
  if (!importReport && !runJSON)
    return emitTo(outputPath, [&](raw_ostream &os) { os << formatted; }) ? Success
                                                                         : WriteFailed;
  if (outputPath != "-" &&
      !emitTo(outputPath, [&](raw_ostream &os) { os << formatted; }))
    return WriteFailed;
  runtime::SimGraphCost cost(profile);
  ScheduleOptions options;
  options.graphCost = &cost;
  options.replays = replays;
  Schedule schedule(program.pipelines.front(), profile, options);
  importer::StepReport report = importer::reportStep(*step, schedule, profile, replays);
  if (runJSON)
    importer::writeStepReportJSON(report, *step, profile, outs());
  else
    importer::printStepReport(report, *step, profile, outs());
  return Success;
}

int dispatch(int argc, char **argv);

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  sys::SetOneShotPipeSignalFunction(quietPipeExit);
  outs(); // constructed before the exit handler, so destroyed after it
  errs();
  std::atexit(finishOutputAtExit);
  return finishOutput(dispatch(argc, argv));
}

namespace {

int dispatch(int argc, char **argv) {
  cl::SetVersionPrinter(
      [](raw_ostream &os) { os << "pipec " << kVersion << '\n'; });
  registerColorOption();
  cl::HideUnrelatedOptions(category, *cl::TopLevelSubCommand);
  cl::HideUnrelatedOptions(category, checkCmd);
  cl::HideUnrelatedOptions(category, compileCmd);
  cl::HideUnrelatedOptions(category, runCmd);
  cl::HideUnrelatedOptions(category, calibrateCmd);
  cl::HideUnrelatedOptions(category, fmtCmd);
  cl::HideUnrelatedOptions(category, adviseCmd);
  cl::HideUnrelatedOptions(category, importCmd);
  cl::HideUnrelatedOptions(category, profileCmd);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "pipec: a compiler for GPU pipeline descriptions (.pipe files)\n\n"
          "  pipec check FILE...      report every error in FILEs\n"
          "  pipec compile FILE       plan FILE's schedule and emit it\n"
          "                           (--emit=text|json|dot|ast, "
          "--lower=streams|graph|auto)\n"
          "  pipec run FILE           run it and time it, on a GPU or on the\n"
          "                           device model (--lower=streams|graph|both)\n"
          "  pipec calibrate          measure the GPU, write a profile for "
          "--profile\n"
          "  pipec fmt FILE...        print FILEs in the canonical layout "
          "(-i, --check)\n"
          "  pipec advise FILE        how to schedule it, with measured "
          "numbers\n"
          "  pipec import TRACE       a PyTorch profiler trace as a .pipe "
          "file (--report)\n"
          "  pipec profile --default  the built-in device profile, as JSON\n",
          &errs(), nullptr, /*LongOptionsUseDoubleDash=*/true))
    return UsageError;
  applyColorChoice();

  if (checkCmd)
    return runCheck();
  if (compileCmd)
    return runCompile();
  if (runCmd)
    return runRun();
  if (calibrateCmd)
    return runCalibrate();
  if (fmtCmd)
    return runFmt();
  if (adviseCmd)
    return runAdvise();
  if (importCmd)
    return runImport();
  if (profileCmd)
    return runProfile();
  if (!strayArgs.empty())
    toolError("unknown command '" + strayArgs.front() +
              "'; see 'pipec --help'");
  else
    toolError("no command given; see 'pipec --help'");
  return UsageError;
}

} // namespace
