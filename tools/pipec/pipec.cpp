//===- pipec.cpp - The pipec command line ---------------------------------===//
//
// A thin driver: it parses the command line, decides how far down the
// pipeline (source -> AST -> program -> schedule -> run) to go, and prints.
//
// Exit status: 0 success, 1 the input has errors, 2 bad command-line use,
// 3 the run failed.
//
//===----------------------------------------------------------------------===//

#include "compiler/ast/AST.h"
#include "compiler/diag/Diagnostics.h"
#include "compiler/parse/Parser.h"
#include "compiler/program/DeviceProfile.h"
#include "compiler/sema/Sema.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

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

/// How far compilation goes, ordered by pipeline depth.
enum class Emit { AST };
cl::opt<Emit> emit("emit", cl::desc("What to emit"),
                   cl::values(clEnumValN(Emit::AST, "ast",
                                         "the syntax tree, with locations")),
                   cl::init(Emit::AST), cl::sub(compileCmd), cl::cat(category));

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
  if (!diags.shouldStop())
    analyze(file, profile, diags);
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

int runCompile() {
  DeviceProfile profile;
  if (!loadProfile(profile))
    return UsageError;
  Source src;
  if (!load(compileInput, src))
    return InputErrors;
  DiagnosticEngine diags(printingHandler(src.sm, errs(), src.name, useColor()),
                         errorLimit);
  ast::File file = parseFile(src.sm, src.bufferId, src.name, diags);
  if (diags.hadError())
    return InputErrors;

  std::string text;
  raw_string_ostream os(text);
  if (emit == Emit::AST) {
    ast::dump(file, src.sm, os);
  }
  os.flush();

  // Written only now, when nothing can fail any more: no partial file.
  std::error_code ec;
  ToolOutputFile out(outputPath, ec, sys::fs::OF_None);
  if (ec) {
    toolError("cannot write '" + outputPath + "': " + ec.message());
    return UsageError;
  }
  out.os() << text;
  out.os().flush();
  if (out.os().has_error()) {
    toolError("cannot write '" + outputPath + "'");
    out.os().clear_error();
    return UsageError;
  }
  out.keep();
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
          "  pipec compile FILE       emit FILE's schedule (--emit=ast)\n",
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
