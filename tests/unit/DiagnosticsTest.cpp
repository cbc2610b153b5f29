// The printing handler writes each diagnostic, notes included, to its
// stream in one write: standard error is unbuffered, and a write per
// fragment (the caret line, each colour change...) made ten warnings a
// thousand system calls.

#include "compiler/diag/Diagnostics.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <doctest/doctest.h>

using namespace pipec;

namespace {
/// An unbuffered stream that counts the writes that reach it.
class CountingStream : public llvm::raw_ostream {
public:
  explicit CountingStream(bool colors) : colors(colors) {
    SetUnbuffered();
    enable_colors(colors);
  }
  bool has_colors() const override { return colors; }
  unsigned writes = 0;
  std::string text;

private:
  void write_impl(const char *ptr, size_t size) override {
    ++writes;
    text.append(ptr, size);
  }
  uint64_t current_pos() const override { return text.size(); }
  bool colors;
};
} // namespace

TEST_CASE("a diagnostic and its note reach the stream in one write") {
  for (bool colors : {false, true}) {
    CAPTURE(colors);
    llvm::SourceMgr sm;
    std::string source = "pipeline p {\n  stage A kernel 1us depends_on(A);\n}\n";
    sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(source, "t.pipe"),
                          llvm::SMLoc());
    const char *start = sm.getMemoryBuffer(1)->getBufferStart();
    CountingStream os(colors);
    DiagnosticEngine diags(printingHandler(sm, os, "t.pipe", colors));
    diags.warning(rangeAt(start + 15, 5), "a warning")
        .attachNote(rangeAt(start + 46, 1), "a note");
    diags.error(llvm::SMRange(), "an error without a place");
    CHECK(os.writes == 2);
    if (!colors) {
      CHECK(os.text.find("t.pipe:2:3: warning: a warning") != std::string::npos);
      CHECK(os.text.find("t.pipe:2:34: note: a note") != std::string::npos);
      CHECK(os.text.find("t.pipe: error: an error without a place") != std::string::npos);
    }
    CHECK((os.text.find("\x1b[") != std::string::npos) == colors);
  }
}
