//===- FrontendHelpers.h - Run the front end on a string, capture diags ---===//
#ifndef PIPEC_TESTS_FRONTENDHELPERS_H
#define PIPEC_TESTS_FRONTENDHELPERS_H

#include "compiler/diag/Diagnostics.h"
#include "compiler/parse/Parser.h"
#include "compiler/sema/Sema.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace pipec::test {

struct Captured {
  Severity severity;
  unsigned line, column;
  std::string message;
};

/// Parses and checks `text` as a file named "t.pipe"; keeps every diagnostic.
struct FrontendRun {
  /// `consume`: analyze the AST as `pipec check` does, freeing it as it
  /// goes (the AST is then left without its stages).
  explicit FrontendRun(const std::string &text, unsigned errorLimit = 0,
                       const DeviceProfile &profile = DeviceProfile(), bool consume = false) {
    sm = std::make_unique<llvm::SourceMgr>();
    unsigned id = sm->AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "t.pipe"),
                                         llvm::SMLoc());
    DiagnosticEngine diags(
        [this](const Diagnostic &d) {
          unsigned line = 0, col = 0;
          if (d.range.Start.isValid())
            std::tie(line, col) = sm->getLineAndColumn(d.range.Start);
          all.push_back({d.severity, line, col, d.message});
        },
        errorLimit);
    file = parseFile(*sm, id, "t.pipe", diags);
    if (!diags.shouldStop())
      program =
          consume ? analyze(std::move(file), profile, diags) : analyze(file, profile, diags);
    errors = diags.errorCount();
  }

  bool has(const std::string &fragment) const {
    for (const Captured &c : all)
      if (c.message.find(fragment) != std::string::npos)
        return true;
    return false;
  }

  std::unique_ptr<llvm::SourceMgr> sm;
  ast::File file;
  program::Program program;
  std::vector<Captured> all;
  unsigned errors = 0;
};

/// Parses `text` (as "t.pipe") with `options`; the diagnostics, as
/// "line:column message" lines, and the AST dump.
inline std::string parseWith(const std::string &text, ParseOptions options) {
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "t.pipe"),
                                      llvm::SMLoc());
  std::string out;
  llvm::raw_string_ostream os(out);
  DiagnosticEngine diags(
      [&](const Diagnostic &d) {
        auto [line, col] = d.range.Start.isValid() ? sm.getLineAndColumn(d.range.Start)
                                                   : std::pair<unsigned, unsigned>{0, 0};
        os << line << ':' << col << ' ' << d.message << '\n';
      },
      0);
  ast::File file =
      parseFile(sm, id, "t.pipe", diags, sm.getMemoryBuffer(id)->getBuffer(), options);
  ast::dump(file, sm, os);
  return os.str();
}

} // namespace pipec::test

#endif
