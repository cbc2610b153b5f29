//===- Diagnostics.cpp ----------------------------------------------------===//

#include "compiler/diag/Diagnostics.h"

#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

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
    std::string kind = diag.message.substr(0, diag.message.find('\''));
    auto it = std::find_if(warningKinds.begin(), warningKinds.end(),
                           [&](const auto &k) { return k.first == kind; });
    if (it == warningKinds.end())
      it = warningKinds.insert(warningKinds.end(), {kind, 0});
    if (++it->second > kMaxWarningsOfAKind && foldWarnings)
      return;
  }
  handler(diag);
}

void DiagnosticEngine::finish() {
  if (stopped)
    return;
  for (const auto &[kind, count] : warningKinds)
    if (count > kMaxWarningsOfAKind) {
      std::string shown = llvm::StringRef(kind).rtrim(" ;:").str();
      handler({Severity::Note,
               {},
               std::to_string(count - kMaxWarningsOfAKind) +
                   " more warnings like '" + shown + "' were not shown",
               {}});
    }
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

/// Source lines longer than this are shown as a window around the caret.
constexpr unsigned kMaxShownLine = 160;

static void printOne(llvm::SourceMgr &sm, llvm::raw_ostream &os,
                     const std::string &fileName, bool showColors,
                     const Diagnostic &d) {
  if (d.range.Start.isValid()) {
    llvm::SmallVector<llvm::SMRange, 1> ranges;
    if (d.range.End.isValid() &&
        d.range.End.getPointer() > d.range.Start.getPointer() + 1)
      ranges.push_back(d.range);
    llvm::SMDiagnostic diag = sm.GetMessage(d.range.Start, toKind(d.severity),
                                            d.message, ranges);
    llvm::StringRef line = diag.getLineContents();
    auto control = [](char c) {
      unsigned char u = static_cast<unsigned char>(c);
      return (u < 0x20 && c != '\t') || u == 0x7f;
    };
    bool raw = std::any_of(line.begin(), line.end(), control);
    if (line.size() <= kMaxShownLine && !raw) {
      diag.print(nullptr, os, showColors);
      return;
    }
    // A very long line: a window around the caret, marked with "...";
    // control bytes (ESC, BEL, ...) shown as clang shows them, <U+001B>,
    // never sent to the terminal.
    unsigned col = static_cast<unsigned>(std::max(0, diag.getColumnNo()));
    unsigned from = 0, to = static_cast<unsigned>(line.size());
    if (line.size() > kMaxShownLine) {
      from = col > kMaxShownLine / 2 ? col - kMaxShownLine / 2 : 0;
      to = std::min<unsigned>(line.size(), from + kMaxShownLine);
    }
    std::string shown = from ? "..." : "";
    std::vector<unsigned> at(to - from + 1); // line offset -> shown offset
    for (unsigned i = from; i < to; ++i) {
      at[i - from] = static_cast<unsigned>(shown.size());
      if (control(line[i]))
        shown += llvm::formatv("<U+{0:X-4}>", unsigned(static_cast<unsigned char>(line[i])))
                     .str();
      else
        shown += line[i];
    }
    at[to - from] = static_cast<unsigned>(shown.size());
    if (to < line.size())
      shown += "...";
    auto map = [&](unsigned offset) {
      return at[std::min(std::max(offset, from), to) - from];
    };
    std::vector<std::pair<unsigned, unsigned>> shownRanges;
    for (auto [a, b] : diag.getRanges()) {
      unsigned lo = std::max(a, from), hi = std::min(b, to);
      if (lo < hi)
        shownRanges.push_back({map(lo), map(hi)});
    }
    llvm::SMDiagnostic clipped(sm, diag.getLoc(), diag.getFilename(),
                               diag.getLineNo(), static_cast<int>(map(col)),
                               diag.getKind(), diag.getMessage(), shown,
                               shownRanges);
    // The column in the "file:line:col:" prefix stays the real one.
    std::string prefix;
    llvm::raw_string_ostream p(prefix);
    diag.print(nullptr, p, false, /*ShowKindLabel=*/true);
    p.flush();
    llvm::StringRef firstLine = llvm::StringRef(prefix).split('\n').first;
    if (showColors)
      os.changeColor(llvm::raw_ostream::SAVEDCOLOR, true);
    os << firstLine << '\n';
    if (showColors)
      os.resetColor();
    std::string rest;
    llvm::raw_string_ostream r(rest);
    clipped.print(nullptr, r, false);
    r.flush();
    os << llvm::StringRef(rest).split('\n').second;
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
