//===- Compilation.h - A source taken as far down the pipeline as asked ---===//
//
// What every subcommand that reads a .pipe file shares: load it (bounded),
// parse it, check it, lint it, and schedule the pipelines asked for, with
// the diagnostics printed as they come. The tool decides how far to go and
// what to print; this layer knows nothing of the command line.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_DRIVER_COMPILATION_H
#define PIPEC_DRIVER_COMPILATION_H

#include "compiler/ast/AST.h"
#include "compiler/diag/Diagnostics.h"
#include "compiler/diag/LineIndex.h"
#include "compiler/program/DeviceProfile.h"
#include "compiler/program/Program.h"
#include "compiler/schedule/Schedule.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pipec::driver {

/// The largest .pipe file read: what `pipec import` writes for a step of
/// some 1.6 million GPU ops (an 800,000-op step is 128 MB formatted), and
/// far beyond any file written by hand.
constexpr uint64_t kMaxFileBytes = 256ull << 20; // 256 MiB

/// One input file, loaded.
struct Source {
  llvm::SourceMgr sm;
  unsigned bufferId = 0;
  std::string name; ///< as shown: "<stdin>", or the path made printable
  /// As given ("<stdin>" for standard input): for outputs that escape it
  /// themselves (JSON's "source", a comment in a CUDA program).
  std::string path;
  /// Where its lines start, shared by the handlers of its parts.
  std::shared_ptr<LineIndex> lines = std::make_shared<LineIndex>();

  llvm::StringRef text() const { return sm.getMemoryBuffer(bufferId)->getBuffer(); }
};

/// Reads `path` ('-' is standard input), up to kMaxFileBytes.
llvm::Error loadSource(llvm::StringRef path, Source &src);
/// A source made in memory (an import's file, an edited one), named `name`.
void loadText(llvm::StringRef name, llvm::StringRef text, Source &src);
/// The same, taking the text over (a large one is not copied).
void loadText(llvm::StringRef name, std::string &&text, Source &src);
/// The text of a loaded source.
llvm::StringRef textOf(const Source &src);

/// How diagnostics are printed.
struct DiagnosticOptions {
  unsigned errorLimit = 20;
  bool colors = false;
  /// Set: each diagnostic goes here instead of being printed (advise
  /// checks the files it writes quietly).
  DiagnosticEngine::Handler handler;
};

/// The parts of `text` between lines that are exactly `// -----`, as
/// ranges of it (no copies: a part is parsed in place).
std::vector<llvm::StringRef> splitParts(llvm::StringRef text);

/// The warnings that need more than sema: check and compile give the same.
/// `writing`: also those about how the file is written, not what it does
/// (a redundant dependency), which the commands that run or change the
/// program do not repeat.
void lint(const program::Pipeline &p, const StageGraph &graph, const DeviceProfile &profile,
          DiagnosticEngine &diags, bool writing = true);

/// pipec check: parses and checks one buffer (or `part` of it), races of
/// `sync declared` pipelines included (their unpinned stages on the streams
/// `assign` gives them); true when it has no error.
bool checkSource(Source &src, const DeviceProfile &profile,
                 const DiagnosticOptions &diagnostics, const ScheduleOptions &assign,
                 std::optional<llvm::StringRef> part = std::nullopt);

/// The phases of a compile, in order.
enum class Phase { Parse, Check, Schedule };

/// How far compile, run and advise go, and what they keep.
struct CompileRequest {
  Phase stopAfter = Phase::Schedule; ///< Parse: --emit=ast
  /// Keep the AST past checking (advise edits the file through it): sema
  /// then reads it instead of taking it apart as it goes.
  bool keepSyntax = false;
  /// Only this part of the buffer (check --split-input-file).
  std::optional<llvm::StringRef> part;
  std::string pipeline; ///< --pipeline: only this one ("" all)
  /// --max-streams as given (0: not given): a value below a pipeline's
  /// declared streams is a usage error.
  unsigned maxStreamsGiven = 0;
  /// The lints about how the file is written (a redundant dependency):
  /// check and compile give them; run and advise, which report on what the
  /// program does, leave them out (advise counts them in a note).
  bool writingLints = true;
  /// For developers (--print-after): after this phase, what it made goes
  /// to `printTo` (the AST, the checked program, each schedule as text).
  std::optional<Phase> printAfter;
  llvm::raw_ostream *printTo = nullptr;
  ScheduleOptions schedule;
};

/// A source, checked and scheduled.
struct Compiled {
  Source src;
  std::unique_ptr<DiagnosticEngine> diags;
  ast::File file;
  program::Program program;
  std::vector<std::unique_ptr<Schedule>> schedules;
  std::vector<const Schedule *> views;
  double parseSeconds = 0, checkSeconds = 0;
};

enum class Outcome { Success, InputErrors, UsageError };

/// Parses, checks and schedules `out.src` (loaded by the caller). A usage
/// error (no such pipeline, --max-streams below the declared streams) comes
/// back in `usage`.
Outcome compileSource(const DeviceProfile &profile, const CompileRequest &request,
                      const DiagnosticOptions &diagnostics, Compiled &out, std::string &usage);

/// The one compile both go through: `src`'s phases up to
/// `request.stopAfter`, diagnostics to `diags`, results into `out` (whose
/// own `src` it does not read).
Outcome compileIn(Source &src, DiagnosticEngine &diags, const DeviceProfile &profile,
                  const CompileRequest &request, Compiled &out, std::string &usage);

} // namespace pipec::driver

#endif // PIPEC_DRIVER_COMPILATION_H
