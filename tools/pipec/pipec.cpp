//===- pipec.cpp - The pipec command line ---------------------------------===//
//
// A thin driver: it parses the command line and hands the subcommand to its
// file (Check.cpp, Compile.cpp, Run.cpp, Advise.cpp, Fmt.cpp, Import.cpp,
// Profile.cpp); what they share is in Tool.h, what reads and schedules a
// .pipe file in compiler/driver/.
//
// Exit status: 0 success, 1 the input has errors, 2 bad command-line use,
// 3 the run failed, 4 an output could not be written.
//
//===----------------------------------------------------------------------===//

#include "Tool.h"

#include "compiler/support/Printable.h"

#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <csignal>
#include <cstdlib>

using namespace llvm;
using namespace pipec;
using namespace pipec::tool;

namespace {

constexpr const char *kVersion = "0.1.0";

// Catches `pipec frobnicate` to say it is no command.
cl::list<std::string> strayArgs(cl::Positional, cl::ZeroOrMore, cl::Hidden,
                                cl::desc("<arguments>"), cl::sub(*cl::TopLevelSubCommand));

int dispatch(int argc, char **argv);

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  sys::SetOneShotPipeSignalFunction(quietPipeExit);
  // A write past the file-size limit (ulimit -f) fails with EFBIG, which
  // is reported as a failed write (exit 4), not a crash's stack dump.
  std::signal(SIGXFSZ, SIG_IGN);
  outs(); // constructed before the exit handler, so destroyed after it
  errs();
  std::atexit(finishOutputAtExit);
  return finishOutput(dispatch(argc, argv));
}

namespace {

int dispatch(int argc, char **argv) {
  cl::SetVersionPrinter([](raw_ostream &os) { os << "pipec " << kVersion << '\n'; });
  registerColorOption();
  cl::HideUnrelatedOptions(category(), *cl::TopLevelSubCommand);
  cl::HideUnrelatedOptions(category(), checkCommand());
  cl::HideUnrelatedOptions(category(), compileCommand());
  cl::HideUnrelatedOptions(category(), runCommand());
  cl::HideUnrelatedOptions(category(), calibrateCommand());
  cl::HideUnrelatedOptions(category(), fmtCommand());
  cl::HideUnrelatedOptions(category(), adviseCommand());
  cl::HideUnrelatedOptions(category(), importCommand());
  cl::HideUnrelatedOptions(category(), profileCommand());
  // An option (or its value) with a control character in it names nothing
  // pipec has, and LLVM's per-option errors would echo it raw: say so, in
  // printable form, before parsing. (A file name may hold any bytes.)
  for (int i = 1; i < argc; ++i) {
    StringRef arg = argv[i];
    if (arg == "--")
      break;
    // C0 controls and DEL, and C1 controls as UTF-8 (U+0080-U+009F).
    bool control = false;
    for (size_t k = 0; k < arg.size(); ++k) {
      const unsigned char c = static_cast<unsigned char>(arg[k]);
      control |=
          c < 0x20 || c == 0x7f ||
          (c == 0xc2 && k + 1 < arg.size() && static_cast<unsigned char>(arg[k + 1]) >= 0x80 &&
           static_cast<unsigned char>(arg[k + 1]) <= 0x9f);
    }
    if (arg.startswith("-") && control) {
      toolError("option '" + printable(arg) +
                "' holds control characters; no option or "
                "value of pipec does");
      return UsageError;
    }
  }
  // LLVM's parser echoes option values and unknown options as given: its
  // messages are written out through printable(), line by line, so that no
  // control character in an argument reaches the terminal.
  std::string parseErrors;
  raw_string_ostream parseStream(parseErrors);
  const bool parsed = cl::ParseCommandLineOptions(
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
      &parseStream, nullptr, /*LongOptionsUseDoubleDash=*/true);
  parseStream.flush();
  for (StringRef rest = parseErrors; !rest.empty();) {
    auto [line, after] = rest.split('\n');
    errs() << printable(line) << '\n';
    rest = after;
  }
  if (!parsed)
    return UsageError;
  for (const std::string &flag : emptyPathOptions()) {
    errs() << "pipec: error: " << (flag.size() == 1 ? "-" : "--") << flag
           << " needs a path; it was given an empty one\n";
    return UsageError;
  }
  applyColorChoice();
  if (!applyCommunicationKernels())
    return UsageError;

  if (checkCommand())
    return runCheck();
  if (compileCommand())
    return runCompile();
  if (runCommand())
    return runRun();
  if (calibrateCommand())
    return runCalibrate();
  if (fmtCommand())
    return runFmt();
  if (adviseCommand())
    return runAdvise();
  if (importCommand())
    return runImport();
  if (profileCommand())
    return runProfile();
  if (!strayArgs.empty())
    toolError("unknown command '" + printable(strayArgs.front()) + "'; see 'pipec --help'");
  else
    toolError("no command given; see 'pipec --help'");
  return UsageError;
}

} // namespace
