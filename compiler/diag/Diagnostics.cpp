//===- Diagnostics.cpp ----------------------------------------------------===//

#include "compiler/diag/Diagnostics.h"
#include "compiler/diag/LineIndex.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <memory>

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
               std::to_string(count - kMaxWarningsOfAKind) + " more warnings like '" + shown +
                   "' were not shown",
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

static void printOne(llvm::SourceMgr &sm, llvm::raw_ostream &os, const std::string &fileName,
                     bool showColors, LineIndex &lines, const Diagnostic &d) {
  LineIndex::Position at;
  if (d.range.Start.isValid())
    at = lines.locate(sm, d.range.Start);
  if (at.buffer != 0) {
    llvm::StringRef line = at.text;
    auto control = [](char c) {
      unsigned char u = static_cast<unsigned char>(c);
      return (u < 0x20 && c != '\t') || u == 0x7f;
    };
    // A very long line: a window around the caret, marked with "...";
    // control bytes (ESC, BEL, ...) shown as clang shows them, <U+001B>,
    // never sent to the terminal.
    unsigned col = std::min<unsigned>(at.column, static_cast<unsigned>(line.size()));
    unsigned from = 0, to = static_cast<unsigned>(line.size());
    if (line.size() > kMaxShownLine) {
      from = col > kMaxShownLine / 2 ? col - kMaxShownLine / 2 : 0;
      to = std::min<unsigned>(line.size(), from + kMaxShownLine);
    }
    std::string shown = from ? "..." : "";
    std::vector<unsigned> map(to - from + 1); // line offset -> shown offset
    for (unsigned i = from; i < to; ++i) {
      map[i - from] = static_cast<unsigned>(shown.size());
      if (control(line[i]))
        shown +=
            llvm::formatv("<U+{0:X-4}>", unsigned(static_cast<unsigned char>(line[i]))).str();
      else
        shown += line[i];
    }
    map[to - from] = static_cast<unsigned>(shown.size());
    if (to < line.size())
      shown += "...";
    auto shownAt = [&](unsigned offset) {
      return map[std::min(std::max(offset, from), to) - from];
    };
    // The range, on this line: from the caret to its end (or the line's).
    std::vector<std::pair<unsigned, unsigned>> ranges;
    if (d.range.End.isValid() && d.range.End.getPointer() > d.range.Start.getPointer() + 1) {
      unsigned end =
          col + static_cast<unsigned>(d.range.End.getPointer() - d.range.Start.getPointer());
      unsigned lo = std::max(col, from), hi = std::min<unsigned>(end, to);
      if (lo < hi)
        ranges.push_back({shownAt(lo), shownAt(hi)});
    }
    llvm::SMDiagnostic shownDiag(sm, d.range.Start, fileName, int(at.line), int(shownAt(col)),
                                 toKind(d.severity), d.message, shown, ranges);
    if (shownAt(col) == col) {
      // The common case: the line as it is; SourceMgr's colours.
      shownDiag.print(nullptr, os, showColors);
      return;
    }
    // Clipped or escaped: the "file:line:col:" prefix keeps the real column.
    llvm::SMDiagnostic prefixDiag(sm, d.range.Start, fileName, int(at.line), int(col),
                                  toKind(d.severity), d.message, "", {});
    std::string prefix;
    llvm::raw_string_ostream p(prefix);
    prefixDiag.print(nullptr, p, false, /*ShowKindLabel=*/true);
    p.flush();
    if (showColors)
      os.changeColor(llvm::raw_ostream::SAVEDCOLOR, true);
    os << llvm::StringRef(prefix).split('\n').first << '\n';
    if (showColors)
      os.resetColor();
    std::string rest;
    llvm::raw_string_ostream r(rest);
    shownDiag.print(nullptr, r, false);
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
  llvm::HighlightColor color = d.severity == Severity::Error ? llvm::HighlightColor::Error
                               : d.severity == Severity::Warning
                                   ? llvm::HighlightColor::Warning
                                   : llvm::HighlightColor::Note;
  const char *label = d.severity == Severity::Error     ? "error: "
                      : d.severity == Severity::Warning ? "warning: "
                                                        : "note: ";
  llvm::WithColor(os, color, !showColors ? llvm::ColorMode::Disable : llvm::ColorMode::Enable)
      << label;
  if (showColors)
    os.changeColor(llvm::raw_ostream::SAVEDCOLOR, true);
  os << d.message << '\n';
  if (showColors)
    os.resetColor();
}

namespace {
/// One diagnostic and its notes, gathered and then written in one go (the
/// standard error stream is unbuffered: a write per fragment otherwise),
/// coloured as the real stream would be.
class DiagnosticBuffer : public llvm::raw_string_ostream {
public:
  DiagnosticBuffer(std::string &text, bool colors) : raw_string_ostream(text), colors(colors) {
    enable_colors(colors);
  }
  bool has_colors() const override { return colors; }

private:
  bool colors;
};
} // namespace

DiagnosticEngine::Handler pipec::printingHandler(llvm::SourceMgr &sm, llvm::raw_ostream &os,
                                                 std::string fileName, bool showColors,
                                                 std::shared_ptr<LineIndex> lines) {
  // Never one index for the process: a later buffer may sit where a freed
  // one was, at the same size, and would be given its lines.
  if (!lines)
    lines = std::make_shared<LineIndex>();
  return [&sm, &os, fileName = std::move(fileName), showColors, lines](const Diagnostic &d) {
    std::string text;
    DiagnosticBuffer buffer(text, showColors);
    printOne(sm, buffer, fileName, showColors, *lines, d);
    for (const Diagnostic &note : d.notes)
      printOne(sm, buffer, fileName, showColors, *lines, note);
    os << buffer.str();
  };
}
