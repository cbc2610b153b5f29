//===- Fmt.cpp - pipec fmt ------------------------------------------------===//

#include "Tool.h"

#include "compiler/format/Formatter.h"
#include "compiler/parse/Parser.h"
#include "compiler/support/Printable.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace pipec;
using namespace pipec::tool;

namespace {

cl::list<std::string> fmtInputs(cl::Positional, cl::OneOrMore,
                                cl::desc("<file.pipe>... ('-' reads stdin)"),
                                cl::sub(fmtCommand()), cl::cat(category()));
cl::opt<bool> fmtInPlace("i", cl::desc("Rewrite the files in place"), cl::sub(fmtCommand()),
                         cl::cat(category()));
cl::opt<bool>
    fmtCheck("check",
             cl::desc("Change nothing; exit 1 if a file is not in the canonical layout"),
             cl::sub(fmtCommand()), cl::cat(category()));

} // namespace

int tool::runFmt() {
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
    // -i rewrites files: a pipe or a device would be read (waiting for a
    // writer, forever) and could not be replaced anyway.
    sys::fs::file_status st;
    if (fmtInPlace && !sys::fs::status(path, st) && !sys::fs::is_regular_file(st)) {
      toolError("'" + printable(path) + "' is not a regular file; fmt -i rewrites files");
      status = InputErrors;
      continue;
    }
    driver::Source src;
    if (Error e = driver::loadSource(path, src)) {
      toolError(toString(std::move(e)));
      status = InputErrors;
      continue;
    }
    DiagnosticEngine diags(printingHandler(src.sm, errs(), src.name, useColor()),
                           invocation().errorLimit);
    ast::File file = parseFile(src.sm, src.bufferId, src.name, diags);
    if (diags.hadError()) {
      status = InputErrors;
      continue;
    }
    StringRef original = src.text();
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
      if (formatted != original && !emitTo(
                                       path, [&](raw_ostream &os) { os << formatted; },
                                       /*rewritesInput=*/true))
        status = WriteFailed;
      continue;
    }
    outs() << formatted;
  }
  return status;
}
