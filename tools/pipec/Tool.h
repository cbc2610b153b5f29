//===- Tool.h - What pipec's subcommands share ----------------------------===//
//
// The subcommands, the options several of them take, and the helpers every
// one uses: diagnostics' colours, tool errors, the device profile, one
// place that knows every file a command reads and writes, and writing an
// output. Each subcommand has a file of its own (Check.cpp, Compile.cpp,
// Run.cpp, ...) with the options only it takes; pipec.cpp dispatches.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_TOOLS_TOOL_H
#define PIPEC_TOOLS_TOOL_H

#include "compiler/driver/Compilation.h"
#include "compiler/driver/Files.h"
#include "compiler/program/DeviceProfile.h"
#include "compiler/schedule/Schedule.h"
#include "compiler/schedule/StreamAssignment.h"
#include "model/Model.h"
#include "runtime/import/Step.h"

#include "llvm/Support/CommandLine.h"

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace pipec::tool {

enum ExitCode {
  Success = 0,
  InputErrors = 1,
  UsageError = 2,
  RunFailed = 3,
  WriteFailed = 4, ///< an output (standard output, or -o) could not be written
};

// The subcommands, made on first use (options in other files refer to them
// while the program's statics are being built).
llvm::cl::SubCommand &checkCommand();
llvm::cl::SubCommand &compileCommand();
llvm::cl::SubCommand &runCommand();
llvm::cl::SubCommand &adviseCommand();
llvm::cl::SubCommand &fmtCommand();
llvm::cl::SubCommand &importCommand();
llvm::cl::SubCommand &profileCommand();
llvm::cl::SubCommand &calibrateCommand();
llvm::cl::OptionCategory &category();

/// The path options given an empty value (`--html=`), in the order given:
/// each is a usage error, as `-o ''` is, not an option quietly ignored.
std::vector<std::string> &emptyPathOptions();
/// The callback a path option takes: notes an empty value under `flag`.
inline auto aPath(const char *flag) {
  return llvm::cl::callback([flag](const std::string &value) {
    if (value.empty())
      emptyPathOptions().push_back(flag);
  });
}

/// The options several subcommands take, read from the command line once
/// (after it is parsed): every command and helper reads them here, never
/// the option objects themselves.
struct Invocation {
  unsigned errorLimit = 20;
  std::string profilePath;                            ///< --profile ("" none)
  std::string outputPath = "-";                       ///< -o
  std::string pipelineName;                           ///< --pipeline ("" all)
  unsigned maxStreams = 8;                            ///< --max-streams
  bool maxStreamsGiven = false;                       ///< whether it was given
  AssignMethod assignMethod = AssignMethod::Makespan; ///< --assign
  unsigned replays = 100;                             ///< --replays
  bool stats = false;                                 ///< --stats
  bool jsonOutput = false;                            ///< --json
  std::string runInput;                               ///< run and advise: the file
  std::string objectiveText = "makespan";             ///< run and advise: --objective
};
const Invocation &invocation();
/// `--comm-kernels`: the user's communication kernels, set for every figure
/// that counts communication; false (said) for a bad expression.
bool applyCommunicationKernels();

/// `--color=auto|always|never`, in place of LLVM's own switch.
void registerColorOption();
void applyColorChoice();
bool useColor();
void toolError(const llvm::Twine &message);
driver::DiagnosticOptions diagnosticOptions();

/// Standard output, checked once at the end (main).
int finishOutput(int status);
void finishOutputAtExit();
void quietPipeExit();

/// Every file this command reads and writes: each subcommand registers
/// them before it writes anything, and checkFiles() refuses conflicts.
driver::CommandFiles &commandFiles();
/// The parser of an option that takes one of some named values: a value it
/// does not know is an error that lists them and names the nearest
/// (`--lower=grph`: "'grph' is not one of streams, graph, auto; did you mean
/// 'graph'?"), where LLVM's would say "Cannot find option named".
template <class T> class ChoiceParser : public llvm::cl::parser<T> {
public:
  using llvm::cl::parser<T>::parser;
  bool parse(llvm::cl::Option &option, llvm::StringRef, llvm::StringRef arg, T &value) {
    for (const auto &v : this->Values)
      if (v.Name == arg) {
        value = v.V.getValue();
        return false;
      }
    std::string names, nearest;
    unsigned closest = 3; // under 3 edits: a typo, not another word
    for (const auto &v : this->Values) {
      names += (names.empty() ? "" : ", ") + v.Name.str();
      const unsigned d = arg.edit_distance(v.Name, true, closest);
      if (d < closest)
        closest = d, nearest = v.Name.str();
    }
    return option.error("'" + arg + "' is not one of " + names +
                        (nearest.empty() ? "" : "; did you mean '" + nearest + "'?"));
  }
};

/// Registers --profile (when given) as an input.
void registerProfileInput();
/// commandFiles().check(), said as a tool error; false on a conflict.
bool checkFiles();

/// Loads --profile over the defaults (nothing when not given); false, with
/// a message, when it cannot be read or is invalid.
bool loadProfile(DeviceProfile &profile);
/// The profile at `path` (a file of the command's, checked already).
bool loadProfileFrom(llvm::StringRef path, DeviceProfile &profile);
/// What compile, run and advise check first: their counts, and the profile.
/// Returns Success or the status to exit with.
int prepare(DeviceProfile &profile);
/// The prologue of compile, run and advise: `input` ("the input"),
/// --profile and -o registered, then what `more` registers (a command's
/// other outputs and inputs), every file checked against the others, and
/// prepare(). Returns Success or the status to exit with.
int openCommand(
    llvm::StringRef input, DeviceProfile &profile, llvm::function_ref<void()> more = [] {});

/// Loads `path` into `out.src` and compiles it (compileSource), with the
/// device model's cost models for the graph verdict and the assignment.
/// Returns Success or the status to exit with.
/// What a command asks of the compile besides the command line's options:
/// how far it goes, whether the AST is kept.
struct CompileGoal {
  driver::Phase stopAfter = driver::Phase::Schedule;
  bool keepSyntax = false;
  /// The lints about how the file is written (check and compile's).
  bool writingLints = true;
  /// --print-after: what the phase made, to standard error.
  std::optional<driver::Phase> printAfter = std::nullopt;
};
/// A file `pipec import` wrote, run on the built-in profile (no
/// --profile): a note names the GPU it was recorded on, and how to model
/// that one.
void noteRecordedDevice(const driver::Compiled &compiled, const DeviceProfile &profile);
int compileFile(llvm::StringRef path, const model::Model &model,
                const ScheduleOptions &options, CompileGoal goal, driver::Compiled &out);

/// The same for a source already in `out.src` (text made in memory).
int compileLoaded(const model::Model &model, const ScheduleOptions &options, CompileGoal goal,
                  driver::Compiled &out);

/// Writes `write`'s output to `path`; on failure says why. `rewritesInput`:
/// fmt -i, whose output is meant to replace its input.
bool emitTo(llvm::StringRef path, const std::function<void(llvm::raw_ostream &)> &write,
            bool rewritesInput = false);

double secondsSince(std::chrono::steady_clock::time_point &since);

int runCheck();
int runCompile();
int runRun();
int runAdvise();
int runFmt();
int runImport();
/// pipec import with several traces: one per rank (ImportRanks.cpp).
/// The ranks' recordings: `sources` names each (a file, or a process of
/// one), `read(r)` reads rank r's.
int runImportRanks(const std::vector<std::string> &sources,
                   const std::function<llvm::Expected<importer::Trace>(size_t)> &read,
                   const importer::StepChoice &step, bool report,
                   const std::string &profileOut);
int runProfile();
int runCalibrate();

} // namespace pipec::tool

#endif // PIPEC_TOOLS_TOOL_H
