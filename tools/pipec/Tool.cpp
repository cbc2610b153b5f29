//===- Tool.cpp - What pipec's subcommands share --------------------------===//

#include "Tool.h"

#include "compiler/driver/OutputFile.h"
#include "compiler/program/Communication.h"
#include "compiler/support/Printable.h"
#include "compiler/support/ReadFile.h"
#include "model/Model.h"

#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <unistd.h>

#include <csignal>

using namespace llvm;
using namespace pipec;
using namespace pipec::tool;

std::vector<std::string> &tool::emptyPathOptions() {
  static std::vector<std::string> flags;
  return flags;
}

cl::OptionCategory &tool::category() {
  static cl::OptionCategory c("pipec options");
  return c;
}

#define PIPEC_SUBCOMMAND(function, name, description)                                         \
  cl::SubCommand &tool::function() {                                                          \
    static cl::SubCommand command(name, description);                                         \
    return command;                                                                           \
  }
PIPEC_SUBCOMMAND(checkCommand, "check", "Check .pipe files and report every error")
PIPEC_SUBCOMMAND(compileCommand, "compile", "Compile a .pipe file and emit its schedule")
PIPEC_SUBCOMMAND(runCommand, "run",
                 "Run a .pipe file's schedule and time it, on a GPU or on the "
                 "device model")
PIPEC_SUBCOMMAND(adviseCommand, "advise",
                 "Answer, with measured numbers, how to schedule a pipeline")
PIPEC_SUBCOMMAND(fmtCommand, "fmt", "Print .pipe files in the canonical layout")
PIPEC_SUBCOMMAND(importCommand, "import",
                 "Turn a PyTorch profiler trace into a .pipe file, and say what "
                 "it tells")
PIPEC_SUBCOMMAND(profileCommand, "profile",
                 "Print a device profile as JSON: the built-in one (--default) or "
                 "--profile's, checked")
PIPEC_SUBCOMMAND(calibrateCommand, "calibrate",
                 "Measure the device model's parameters on the GPU and write a "
                 "profile")
#undef PIPEC_SUBCOMMAND

namespace {

cl::opt<unsigned>
    errorLimitOption("error-limit",
                     cl::desc("Stop after this many errors (0: no limit; default 20)"),
                     cl::init(20), cl::sub(*cl::AllSubCommands), cl::cat(category()));

cl::opt<std::string>
    profilePathOption("profile", cl::desc("Device profile (JSON) instead of the built-in one"),
                      cl::value_desc("file"), cl::sub(checkCommand()),
                      cl::sub(compileCommand()), cl::sub(runCommand()),
                      cl::sub(adviseCommand()), cl::sub(importCommand()),
                      cl::sub(profileCommand()), cl::cat(category()), aPath("profile"));

cl::opt<std::string> outputPathOption("o", cl::desc("Write the output to <path>"),
                                      cl::value_desc("path"), cl::init("-"),
                                      cl::sub(compileCommand()), cl::sub(runCommand()),
                                      cl::sub(calibrateCommand()), cl::sub(adviseCommand()),
                                      cl::sub(importCommand()), cl::cat(category()),
                                      aPath("o"));

cl::opt<std::string> pipelineNameOption("pipeline", cl::desc("Only the pipeline of this name"),
                                        cl::value_desc("name"), cl::sub(compileCommand()),
                                        cl::sub(runCommand()), cl::sub(adviseCommand()),
                                        cl::cat(category()));

cl::opt<unsigned>
    maxStreamsOption("max-streams",
                     cl::desc("Most streams a pipeline may use, counting those stages without "
                              "'on' are given (default 8)"),
                     cl::init(8), cl::sub(compileCommand()), cl::sub(runCommand()),
                     cl::sub(adviseCommand()), cl::cat(category()));

cl::opt<AssignMethod, false, ChoiceParser<AssignMethod>> assignMethodOption(
    "assign", cl::desc("How stages without 'on' get streams:"),
    cl::values(clEnumValN(AssignMethod::Makespan, "makespan",
                          "the fastest on the device model, then fewest syncs (default)"),
               clEnumValN(AssignMethod::Matching, "matching",
                          "Nimble: fewest syncs that add no ordering"),
               clEnumValN(AssignMethod::RoundRobin, "round-robin",
                          "stage i (issue order) on stream i mod the streams"),
               clEnumValN(AssignMethod::Levels, "levels",
                          "Taskflow: dependency level mod the streams")),
    cl::init(AssignMethod::Makespan), cl::sub(compileCommand()), cl::sub(runCommand()),
    cl::sub(adviseCommand()), cl::cat(category()));

cl::opt<unsigned>
    replaysOption("replays",
                  cl::desc("compile: replays the cost model of --lower=auto assumes; run: "
                           "replays to time (default 100)"),
                  cl::init(100), cl::sub(compileCommand()), cl::sub(runCommand()),
                  cl::sub(adviseCommand()), cl::sub(importCommand()), cl::cat(category()));

cl::opt<bool>
    statsOption("stats",
                cl::desc("Print the time of each phase and the peak memory to stderr"),
                cl::sub(compileCommand()), cl::sub(runCommand()), cl::cat(category()));

cl::opt<bool>
    jsonOutputOption("json",
                     cl::desc("Write the run result (run) or the advice (advise) as JSON"),
                     cl::sub(runCommand()), cl::sub(adviseCommand()), cl::sub(importCommand()),
                     cl::cat(category()));

cl::opt<std::string> objectiveTextOption(
    "objective",
    cl::desc("What a run is judged by: 'makespan' (default), or 'end:STAGE' (per "
             "iteration, STAGE's end after the iteration's first start; ':worst', the "
             "default, or ':median' over iterations)"),
    cl::value_desc("objective"), cl::init("makespan"), cl::sub(runCommand()),
    cl::sub(adviseCommand()), cl::cat(category()));

cl::opt<std::string> runInputOption(cl::Positional, cl::Required,
                                    cl::desc("<file.pipe> ('-' reads stdin)"),
                                    cl::sub(runCommand()), cl::sub(adviseCommand()),
                                    cl::cat(category()));

cl::opt<std::string> commKernelsOption(
    "comm-kernels",
    cl::desc("Kernels that are communication, besides NCCL's, NVSHMEM's, expert "
             "parallelism's and the known custom all-reduces: a regular expression a "
             "kernel's name contains a match of (for comm_us and the hidden communication)"),
    cl::value_desc("regex"), cl::sub(compileCommand()), cl::sub(runCommand()),
    cl::sub(adviseCommand()), cl::sub(importCommand()), cl::cat(category()));

} // namespace

bool tool::applyCommunicationKernels() {
  if (commKernelsOption.getNumOccurrences() && commKernelsOption.empty()) {
    toolError("--comm-kernels needs a regular expression");
    return false;
  }
  if (llvm::Error e = program::setUserCommunicationKernels(commKernelsOption)) {
    toolError(toString(std::move(e)));
    return false;
  }
  return true;
}

const tool::Invocation &tool::invocation() {
  static const Invocation read = [] {
    Invocation in;
    in.errorLimit = errorLimitOption;
    in.profilePath = profilePathOption;
    in.outputPath = outputPathOption;
    in.pipelineName = pipelineNameOption;
    in.maxStreams = maxStreamsOption;
    in.maxStreamsGiven = maxStreamsOption.getNumOccurrences() > 0;
    in.assignMethod = assignMethodOption;
    in.replays = replaysOption;
    in.stats = statsOption;
    in.jsonOutput = jsonOutputOption;
    in.runInput = runInputOption;
    in.objectiveText = objectiveTextOption;
    return in;
  }();
  return read;
}

// ---- Colours and messages ----------------------------------------------------

namespace {
enum class ColorChoice { Auto, Always, Never };
ColorChoice colorChoice = ColorChoice::Auto;
/// LLVM's own `--color` switch, which WithColor and SourceMgr consult.
cl::opt<cl::boolOrDefault> *llvmUseColor = nullptr;
} // namespace

void tool::registerColorOption() {
  StringMap<cl::Option *> &registered = cl::getRegisteredOptions(*cl::TopLevelSubCommand);
  auto it = registered.find("color");
  if (it != registered.end()) {
    llvmUseColor = static_cast<cl::opt<cl::boolOrDefault> *>(it->second);
    it->second->removeArgument();
  }
  static cl::opt<ColorChoice, true, ChoiceParser<ColorChoice>> option(
      "color", cl::desc("Colour diagnostics"),
      cl::values(clEnumValN(ColorChoice::Auto, "auto", "on a terminal (default)"),
                 clEnumValN(ColorChoice::Always, "always", "always"),
                 clEnumValN(ColorChoice::Never, "never", "never")),
      cl::location(colorChoice), cl::sub(*cl::AllSubCommands), cl::cat(category()));
}

void tool::applyColorChoice() {
  if (!llvmUseColor)
    return;
  llvmUseColor->setValue(colorChoice == ColorChoice::Always  ? cl::BOU_TRUE
                         : colorChoice == ColorChoice::Never ? cl::BOU_FALSE
                                                             : cl::BOU_UNSET);
  if (colorChoice == ColorChoice::Always)
    errs().enable_colors(true);
}

bool tool::useColor() {
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

void tool::toolError(const Twine &msg) {
  WithColor::error(errs(), "pipec", !useColor()) << msg << '\n';
}

driver::DiagnosticOptions tool::diagnosticOptions() {
  driver::DiagnosticOptions options;
  options.errorLimit = invocation().errorLimit;
  options.colors = useColor();
  return options;
}

// ---- Standard output ----------------------------------------------------------

int tool::finishOutput(int status) {
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

void tool::finishOutputAtExit() {
  outs().flush();
  if (outs().has_error())
    _exit(finishOutput(Success));
  errs().clear_error();
}

void tool::quietPipeExit() { _exit(128 + SIGPIPE); }

// ---- Files ----------------------------------------------------------------------

driver::CommandFiles &tool::commandFiles() {
  static driver::CommandFiles files;
  return files;
}

void tool::registerProfileInput() {
  if (!invocation().profilePath.empty())
    commandFiles().input(invocation().profilePath, "--profile");
}

bool tool::checkFiles() {
  if (Error e = commandFiles().check()) {
    toolError(toString(std::move(e)));
    return false;
  }
  return true;
}

bool tool::loadProfile(DeviceProfile &profile) {
  return invocation().profilePath.empty() ||
         loadProfileFrom(invocation().profilePath, profile);
}

bool tool::loadProfileFrom(StringRef path, DeviceProfile &profile) {
  // A profile is a few hundred bytes: 64 KiB is plenty, and bounds a
  // device or a pipe given by mistake.
  std::string shown = printable(path);
  Expected<std::string> text = readBounded(path, 64 * 1024, shown);
  if (!text) {
    toolError("cannot read profile: " + toString(text.takeError()));
    return false;
  }
  Expected<DeviceProfile> parsed = parseDeviceProfile(*text);
  if (!parsed) {
    toolError("invalid profile '" + shown + "': " + toString(parsed.takeError()));
    return false;
  }
  profile = std::move(*parsed);
  return true;
}

int tool::prepare(DeviceProfile &profile) {
  if (invocation().maxStreams < 1 || invocation().replays < 1) {
    toolError("--max-streams and --replays must be at least 1");
    return UsageError;
  }
  return loadProfile(profile) ? Success : UsageError;
}

int tool::openCommand(StringRef input, DeviceProfile &profile, function_ref<void()> more) {
  commandFiles().input(input, "the input");
  registerProfileInput();
  commandFiles().output(invocation().outputPath, "-o");
  more();
  if (!checkFiles())
    return UsageError;
  return prepare(profile);
}

void tool::noteRecordedDevice(const driver::Compiled &compiled, const DeviceProfile &profile) {
  if (!invocation().profilePath.empty())
    return;
  StringRef first = driver::textOf(compiled.src).split('\n').first;
  constexpr StringRef kImported = "// Imported by pipec from ", kOn = ", recorded on ";
  const size_t on = first.rfind(kOn);
  if (!first.startswith(kImported) || on == StringRef::npos || !first.endswith("."))
    return;
  const StringRef device = first.drop_front(on + kOn.size()).drop_back();
  WithColor::note(errs(), "pipec", !useColor())
      << "this file was imported from a recording on " << printable(device) << "; it runs on "
      << printable(profile.name)
      << ": `pipec import TRACE --profile-out=P.json` writes the recorded GPU's profile, "
         "and --profile=P.json models it\n";
}

int tool::compileFile(StringRef path, const model::Model &model,
                      const ScheduleOptions &options, CompileGoal goal,
                      driver::Compiled &out) {
  if (Error e = driver::loadSource(path, out.src)) {
    toolError(toString(std::move(e)));
    return InputErrors;
  }
  return compileLoaded(model, options, goal, out);
}

int tool::compileLoaded(const model::Model &model, const ScheduleOptions &options,
                        CompileGoal goal, driver::Compiled &out) {
  // The graph verdict and the makespan assignment ask the device model, for
  // every command.
  const DeviceProfile &profile = model.profile();
  driver::CompileRequest request;
  request.stopAfter = goal.stopAfter;
  request.keepSyntax = goal.keepSyntax;
  request.writingLints = goal.writingLints;
  request.printAfter = goal.printAfter;
  request.printTo = &llvm::errs();
  request.pipeline = invocation().pipelineName;
  request.maxStreamsGiven = invocation().maxStreamsGiven ? invocation().maxStreams : 0;
  request.schedule = options;
  model.answerFor(request.schedule);
  request.schedule.assign = invocation().assignMethod;
  std::string usage;
  driver::Outcome outcome =
      driver::compileSource(profile, request, diagnosticOptions(), out, usage);
  if (outcome == driver::Outcome::UsageError)
    toolError(usage);
  if (out.diags)
    out.diags->finish();
  return outcome == driver::Outcome::Success      ? Success
         : outcome == driver::Outcome::UsageError ? UsageError
                                                  : InputErrors;
}

bool tool::emitTo(StringRef path, const std::function<void(raw_ostream &)> &write,
                  bool rewritesInput) {
  std::vector<std::string> inputs;
  if (!rewritesInput)
    inputs = commandFiles().inputPaths();
  if (Error err = writeOutput(path, write, inputs)) {
    toolError(toString(std::move(err)));
    return false;
  }
  return true;
}

double tool::secondsSince(std::chrono::steady_clock::time_point &since) {
  auto now = std::chrono::steady_clock::now();
  double s = std::chrono::duration<double>(now - since).count();
  since = now;
  return s;
}
