//===- Diagnostics.cpp ----------------------------------------------------===//

#include "compiler/diag/Diagnostics.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace pipec;

InFlightDiagnostic &InFlightDiagnostic::attachNote(llvm::SMRange range,
                                                   const llvm::Twine &msg) {
  diag.notes.push_back({Severity::Note, range, msg.str(), {}});
  return *this;
}

void InFlightDiagnostic::report() {
  if (!engine)
    return;
  DiagnosticEngine *e = engine;
  engine = nullptr;
  e->report(std::move(diag));
}

void DiagnosticEngine::report(Diagnostic diag) {
  if (stopped)
    return;
  if (diag.severity == Severity::Error) {
    if (errorLimit != 0 && numErrors == errorLimit) {
      stopped = true;
      ++numErrors;
      handler({Severity::Error,
               {},
               "too many errors emitted, stopping now (use --error-limit=0 "
               "to see them all)",
               {}});
      return;
    }
    ++numErrors;
  } else if (diag.severity == Severity::Warning) {
    ++numWarnings;
  }
  handler(diag);
}

static llvm::SourceMgr::DiagKind toKind(Severity s) {
  switch (s) {
  case Severity::Error:
    return llvm::SourceMgr::DK_Error;
  case Severity::Warning:
    return llvm::SourceMgr::DK_Warning;
  case Severity::Note:
    return llvm::SourceMgr::DK_Note;
  }
  return llvm::SourceMgr::DK_Error;
}

static void printOne(llvm::SourceMgr &sm, llvm::raw_ostream &os,
                     const std::string &fileName, bool showColors,
                     const Diagnostic &d) {
  if (d.range.Start.isValid()) {
    llvm::SmallVector<llvm::SMRange, 1> ranges;
    if (d.range.End.isValid() &&
        d.range.End.getPointer() > d.range.Start.getPointer() + 1)
      ranges.push_back(d.range);
    sm.PrintMessage(os, d.range.Start, toKind(d.severity), d.message, ranges,
                    {}, showColors);
    return;
  }
  // No location: "FILE: error: message", coloured as SourceMgr would.
  if (showColors)
    os.changeColor(llvm::raw_ostream::SAVEDCOLOR, true);
  os << fileName << ": ";
  if (showColors)
    os.resetColor();
  llvm::HighlightColor color = d.severity == Severity::Error
                                   ? llvm::HighlightColor::Error
                               : d.severity == Severity::Warning
                                   ? llvm::HighlightColor::Warning
                                   : llvm::HighlightColor::Note;
  const char *label = d.severity == Severity::Error     ? "error: "
                      : d.severity == Severity::Warning ? "warning: "
                                                        : "note: ";
  llvm::WithColor(os, color, !showColors ? llvm::ColorMode::Disable
                                         : llvm::ColorMode::Enable)
      << label;
  if (showColors)
    os.changeColor(llvm::raw_ostream::SAVEDCOLOR, true);
  os << d.message << '\n';
  if (showColors)
    os.resetColor();
}

DiagnosticEngine::Handler pipec::printingHandler(llvm::SourceMgr &sm,
                                                 llvm::raw_ostream &os,
                                                 std::string fileName,
                                                 bool showColors) {
  return [&sm, &os, fileName = std::move(fileName),
          showColors](const Diagnostic &d) {
    printOne(sm, os, fileName, showColors, d);
    for (const Diagnostic &note : d.notes)
      printOne(sm, os, fileName, showColors, note);
  };
}
