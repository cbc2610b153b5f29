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

#include "compiler/ast/AST.h"
#include "compiler/diag/Diagnostics.h"
#include "compiler/emit/Emitters.h"
#include "compiler/parse/Parser.h"
#include "compiler/program/DeviceProfile.h"
#include "compiler/schedule/Lints.h"
#include "compiler/schedule/Schedule.h"
#include "compiler/schedule/StreamAssignment.h"
#include "compiler/sema/Sema.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/resource.h>

#include <chrono>

using namespace llvm;
using namespace pipec;

namespace {

constexpr const char *kVersion = "0.1.0";
constexpr uint64_t kMaxFileBytes = 64ull << 20; // 64 MiB

enum ExitCode { Success = 0, InputErrors = 1, UsageError = 2, RunFailed = 3 };

cl::OptionCategory category("pipec options");

cl::SubCommand checkCmd("check", "Check .pipe files and report every error");
cl::SubCommand compileCmd("compile",
                          "Compile a .pipe file and emit its schedule");

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
enum class Emit { AST, Text, JSON, DOT };
cl::opt<Emit> emit(
    "emit", cl::desc("What to emit (default: text)"),
    cl::values(
        clEnumValN(Emit::AST, "ast", "the syntax tree, with locations"),
        clEnumValN(Emit::Text, "text", "the schedule and its analysis, to read"),
        clEnumValN(Emit::JSON, "json", "the schedule as JSON (SCHEDULE.md)"),
        clEnumValN(Emit::DOT, "dot", "the schedule as a Graphviz graph")),
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
    cl::value_desc("name"), cl::sub(compileCmd), cl::cat(category));

cl::opt<unsigned> maxStreams(
    "max-streams",
    cl::desc("Most streams a pipeline may use, counting those stages without "
             "'on' are given (default 8)"),
    cl::init(8), cl::sub(compileCmd), cl::cat(category));

cl::opt<bool> stats(
    "stats",
    cl::desc("Print the time of each phase and the peak memory to stderr"),
    cl::sub(compileCmd), cl::cat(category));

cl::opt<unsigned> replays(
    "replays",
    cl::desc("Replays the cost model of --lower=auto assumes (default 100)"),
    cl::init(100), cl::sub(compileCmd), cl::cat(category));

cl::opt<std::string> outputPath("o", cl::desc("Write the output to <path>"),
                                cl::value_desc("path"), cl::init("-"),
                                cl::sub(compileCmd), cl::cat(category));

cl::opt<std::string> profilePath(
    "profile", cl::desc("Device profile (JSON) instead of the built-in one"),
    cl::value_desc("file"), cl::sub(checkCmd), cl::sub(compileCmd),
    cl::cat(category));

// Catches `pipec frobnicate` to say it is no command.
cl::list<std::string> strayArgs(cl::Positional, cl::ZeroOrMore,
                                cl::desc("<command> [options]"),
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
};

/// Reads `path` ('-' is standard input). Reports and returns false on failure.
bool load(StringRef path, Source &src) {
  src.name = path == "-" ? "<stdin>" : path.str();
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFileOrSTDIN(path);
  if (!buffer) {
    toolError("cannot read '" + src.name + "': " + buffer.getError().message());
    return false;
  }
  if ((*buffer)->getBufferSize() > kMaxFileBytes) {
    toolError("'" + src.name + "' is too large (" +
              Twine((*buffer)->getBufferSize()) + " bytes); the limit is " +
              Twine(kMaxFileBytes) + " bytes");
    return false;
  }
  src.bufferId = src.sm.AddNewSourceBuffer(std::move(*buffer), SMLoc());
  return true;
}

bool loadProfile(DeviceProfile &profile) {
  if (profilePath.empty())
    return true;
  ErrorOr<std::unique_ptr<MemoryBuffer>> buffer =
      MemoryBuffer::getFile(profilePath);
  if (!buffer) {
    toolError("cannot read profile '" + profilePath +
              "': " + buffer.getError().message());
    return false;
  }
  Expected<DeviceProfile> parsed = parseDeviceProfile((*buffer)->getBuffer());
  if (!parsed) {
    toolError("invalid profile '" + profilePath +
              "': " + toString(parsed.takeError()));
    return false;
  }
  profile = std::move(*parsed);
  return true;
}

/// The parts of `text` between lines that are exactly `// -----`, each as
/// a copy of the whole text with everything outside the part blanked (newlines
/// kept), so that diagnostics keep the whole file's line numbers.
std::vector<std::string> splitParts(StringRef text) {
  std::vector<std::pair<size_t, size_t>> bounds;
  size_t start = 0, pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == StringRef::npos)
      end = text.size();
    if (text.slice(pos, end).rtrim("\r") == "// -----") {
      bounds.push_back({start, pos});
      start = end;
    }
    pos = end + 1;
  }
  bounds.push_back({start, text.size()});
  std::vector<std::string> parts;
  for (auto [from, to] : bounds) {
    std::string part = text.str();
    for (size_t i = 0; i < part.size(); ++i)
      if ((i < from || i >= to) && part[i] != '\n')
        part[i] = ' ';
    parts.push_back(std::move(part));
  }
  return parts;
}

/// Parses and checks one buffer; true when it has no error.
bool checkBuffer(Source &src, const DeviceProfile &profile) {
  DiagnosticEngine diags(printingHandler(src.sm, errs(), src.name, useColor()),
                         errorLimit);
  ast::File file = parseFile(src.sm, src.bufferId, src.name, diags);
  if (diags.shouldStop())
    return false;
  program::Program program = analyze(file, profile, diags);
  for (const program::Pipeline &p : program.pipelines)
    if (!diags.shouldStop())
      lintRedundantDependencies(p, StageGraph(p, issueOrder(p)), diags);
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
    for (std::string &part : splitParts(whole)) {
      Source piece;
      piece.name = src.name;
      piece.bufferId = piece.sm.AddNewSourceBuffer(
          MemoryBuffer::getMemBufferCopy(part, src.name), SMLoc());
      if (!checkBuffer(piece, profile))
        status = InputErrors;
    }
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
                  "reduced edges, {4} waits; unroll {5:f3} s, streams {6:f3} "
                  "s, reduction {7:f3} s, events {8:f3} s, analysis {9:f3} s\n",
                  s->pipeline.name, s->instances.size(),
                  s->instances.deps().edges(), s->reduction.kept.edges(),
                  s->waits, t.unroll, t.streams, t.reduction, t.events,
                  t.analysis);
  }
  os << formatv("pipec: emit {0:f3} s, peak memory {1} MiB\n", emitSeconds,
                usage.ru_maxrss / 1024);
}

int runCompile() {
  if (maxStreams < 1 || replays < 1) {
    toolError("--max-streams and --replays must be at least 1");
    return UsageError;
  }
  DeviceProfile profile;
  if (!loadProfile(profile))
    return UsageError;
  auto clock = std::chrono::steady_clock::now();
  Source src;
  if (!load(compileInput, src))
    return InputErrors;
  DiagnosticEngine diags(printingHandler(src.sm, errs(), src.name, useColor()),
                         errorLimit);
  ast::File file = parseFile(src.sm, src.bufferId, src.name, diags);
  double parseSeconds = secondsSince(clock);
  if (diags.hadError())
    return InputErrors;
  if (emit == Emit::AST) {
    if (Error err = writeOutput(outputPath, [&](raw_ostream &os) {
          ast::dump(file, src.sm, os);
        })) {
      toolError(toString(std::move(err)));
      return UsageError;
    }
    return Success;
  }

  program::Program program = analyze(file, profile, diags);
  std::vector<std::unique_ptr<StageGraph>> graphs;
  for (const program::Pipeline &p : program.pipelines) {
    graphs.push_back(std::make_unique<StageGraph>(p, issueOrder(p)));
    if (!diags.shouldStop())
      lintRedundantDependencies(p, *graphs.back(), diags);
  }
  if (diags.hadError())
    return InputErrors;
  double checkSeconds = secondsSince(clock);

  std::vector<const program::Pipeline *> chosen;
  std::vector<std::unique_ptr<StageGraph>> chosenGraphs;
  for (size_t i = 0; i < program.pipelines.size(); ++i)
    if (pipelineName.empty() || program.pipelines[i].name == pipelineName) {
      chosen.push_back(&program.pipelines[i]);
      chosenGraphs.push_back(std::move(graphs[i]));
    }
  if (chosen.empty()) {
    std::string names;
    for (const program::Pipeline &p : program.pipelines)
      names += (names.empty() ? "'" : ", '") + p.name + "'";
    toolError("no pipeline named '" + pipelineName + "' in '" + src.name +
              "'; it has " + names);
    return UsageError;
  }

  ScheduleOptions options;
  options.lowering = lowering;
  options.maxStreams = maxStreams;
  options.replays = replays;
  std::vector<std::unique_ptr<Schedule>> schedules;
  std::vector<const Schedule *> views;
  for (size_t i = 0; i < chosen.size(); ++i) {
    schedules.push_back(std::make_unique<Schedule>(
        *chosen[i], profile, options, std::move(chosenGraphs[i])));
    views.push_back(schedules.back().get());
  }
  secondsSince(clock);

  Error err = writeOutput(outputPath, [&](raw_ostream &os) {
    switch (emit) {
    case Emit::JSON:
      emitJSON(views, src.name, os);
      break;
    case Emit::DOT:
      for (const Schedule *s : views)
        emitDot(*s, os);
      break;
    default:
      for (size_t i = 0; i < views.size(); ++i) {
        if (i)
          os << '\n';
        emitText(*views[i], os);
      }
      break;
    }
  });
  if (err) {
    toolError(toString(std::move(err)));
    return UsageError;
  }
  if (stats)
    printStats(views, parseSeconds, checkSeconds, secondsSince(clock));
  return Success;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  cl::SetVersionPrinter(
      [](raw_ostream &os) { os << "pipec " << kVersion << '\n'; });
  registerColorOption();
  cl::HideUnrelatedOptions(category, *cl::TopLevelSubCommand);
  cl::HideUnrelatedOptions(category, checkCmd);
  cl::HideUnrelatedOptions(category, compileCmd);
  if (!cl::ParseCommandLineOptions(
          argc, argv,
          "pipec: a compiler for GPU pipeline descriptions (.pipe files)\n\n"
          "  pipec check FILE...      report every error in FILEs\n"
          "  pipec compile FILE       plan FILE's schedule and emit it\n"
          "                           (--emit=text|json|dot|ast, "
          "--lower=streams|graph|auto)\n",
          &errs(), nullptr, /*LongOptionsUseDoubleDash=*/true))
    return UsageError;
  applyColorChoice();

  if (checkCmd)
    return runCheck();
  if (compileCmd)
    return runCompile();
  if (!strayArgs.empty())
    toolError("unknown command '" + strayArgs.front() +
              "'; see 'pipec --help'");
  else
    toolError("no command given; see 'pipec --help'");
  return UsageError;
}
