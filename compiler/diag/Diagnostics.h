//===- Diagnostics.h - Errors, warnings and notes with source ranges ------===//
//
// A small diagnostic engine in the manner of PDLL's: every layer reports through
// it, and the handler decides where diagnostics go (SourceMgr::PrintMessage in
// the CLI, a vector in unit tests). It enforces the error limit: once it is
// reached, one "too many errors" diagnostic is emitted and everything after it
// is dropped, and shouldStop() tells long-running passes to give up.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_DIAG_DIAGNOSTICS_H
#define PIPEC_DIAG_DIAGNOSTICS_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
class raw_ostream;
} // namespace llvm

namespace pipec {

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  llvm::SMRange range; ///< Caret at range.Start; '~' under the rest.
  std::string message;
  std::vector<Diagnostic> notes;
};

class DiagnosticEngine;

/// A diagnostic being built; it is reported when this object dies.
class InFlightDiagnostic {
public:
  InFlightDiagnostic(DiagnosticEngine &engine, Diagnostic diag)
      : engine(&engine), diag(std::move(diag)) {}
  InFlightDiagnostic(InFlightDiagnostic &&other) noexcept
      : engine(other.engine), diag(std::move(other.diag)) {
    other.engine = nullptr;
  }
  InFlightDiagnostic(const InFlightDiagnostic &) = delete;
  InFlightDiagnostic &operator=(const InFlightDiagnostic &) = delete;
  InFlightDiagnostic &operator=(InFlightDiagnostic &&) = delete;
  ~InFlightDiagnostic() { report(); }

  InFlightDiagnostic &attachNote(llvm::SMRange range, const llvm::Twine &msg);
  void report();

private:
  DiagnosticEngine *engine;
  Diagnostic diag;
};

class DiagnosticEngine {
public:
  using Handler = std::function<void(const Diagnostic &)>;

  /// errorLimit 0 means no limit; foldWarnings false shows every warning
  /// (for engines that only collect, and pass diagnostics on).
  explicit DiagnosticEngine(Handler handler, unsigned errorLimit = 20,
                            bool foldWarnings = true)
      : handler(std::move(handler)), errorLimit(errorLimit), foldWarnings(foldWarnings) {}

  InFlightDiagnostic error(llvm::SMRange range, const llvm::Twine &msg) {
    return {*this, {Severity::Error, range, msg.str(), {}}};
  }
  InFlightDiagnostic warning(llvm::SMRange range, const llvm::Twine &msg) {
    return {*this, {Severity::Warning, range, msg.str(), {}}};
  }
  /// A note on its own: what the compiler did that a reader should know.
  InFlightDiagnostic note(llvm::SMRange range, const llvm::Twine &msg) {
    return {*this, {Severity::Note, range, msg.str(), {}}};
  }

  void report(Diagnostic diag);

  unsigned errorCount() const { return numErrors; }
  unsigned warningCount() const { return numWarnings; }
  bool hadError() const { return numErrors != 0; }
  /// True once the error limit has been reached: stop looking for more.
  bool shouldStop() const { return stopped; }
  /// Errors that can still be shown before the limit (SIZE_MAX: no limit):
  /// a pass that finds many need look no further.
  size_t errorsLeft() const {
    if (errorLimit == 0)
      return SIZE_MAX;
    return stopped || numErrors >= errorLimit ? 0 : errorLimit - numErrors;
  }

  /// Reports how many warnings were folded (see kMaxWarningsOfAKind). Call
  /// once, after the last diagnostic.
  void finish();

  /// Warnings of one kind (their text up to the first quote) beyond this
  /// many are counted, not shown.
  static constexpr unsigned kMaxWarningsOfAKind = 10;

private:
  Handler handler;
  unsigned errorLimit;
  unsigned numErrors = 0;
  unsigned numWarnings = 0;
  bool stopped = false;
  bool foldWarnings;
  std::vector<std::pair<std::string, unsigned>> warningKinds;
};

/// A range covering [start, start + length).
inline llvm::SMRange rangeAt(const char *start, size_t length) {
  return {llvm::SMLoc::getFromPointer(start), llvm::SMLoc::getFromPointer(start + length)};
}

/// The handler the command line uses: clang-style text through SourceMgr.
/// Diagnostics without a location are printed as "FILE: error: ...".
/// Handlers for parts of one file (check --split-input-file) pass one
/// `lines`, so that the file's lines are indexed once; by default each
/// handler indexes its own.
class LineIndex;
DiagnosticEngine::Handler printingHandler(llvm::SourceMgr &sm, llvm::raw_ostream &os,
                                          std::string fileName, bool showColors,
                                          std::shared_ptr<LineIndex> lines = nullptr);

} // namespace pipec

#endif // PIPEC_DIAG_DIAGNOSTICS_H
