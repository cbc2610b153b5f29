// The printing handler writes each diagnostic, notes included, to its
// stream in one write: standard error is unbuffered, and a write per
// fragment (the caret line, each colour change...) made ten warnings a
// thousand system calls.

#include "compiler/diag/Diagnostics.h"
#include "compiler/support/Printable.h"

#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <doctest/doctest.h>

#include "Seed.h"

#include <random>

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

TEST_CASE("printable: what reaches a terminal is valid UTF-8 with no control character") {
  using pipec::printable;
  CHECK(printable("plain é ü 漢字") == "plain é ü 漢字");
  CHECK(printable("a\x1b]0;x\x07"
                  "b") == "a\\x1b]0;x\\x07b");
  CHECK(printable("\xff") == "\\xff"); // no UTF-8 sequence begins so
  CHECK(printable("\x9b"
                  "2J") == "\\x9b2J");          // CSI to a terminal in 8-bit mode
  CHECK(printable("\xc2\x9b") == "\\x9b");      // C1 as UTF-8
  CHECK(printable("\xe6\xbc") == "\\xe6\\xbc"); // a sequence cut short
  // Random bytes: the result is valid UTF-8, holds no C0 or C1 control, and
  // keeps every valid printable sequence as it was.
  PIPEC_SEEDED(rng, 7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string in(rng() % 24, ' ');
    for (char &c : in)
      c = char(rng() % 4 == 0 ? 0x20 + rng() % 95 : rng() % 256);
    const std::string out = printable(in);
    INFO(in);
    const auto *begin = reinterpret_cast<const llvm::UTF8 *>(out.data());
    CHECK(llvm::isLegalUTF8String(&begin, begin + out.size()));
    for (size_t i = 0; i < out.size(); ++i) {
      const unsigned char c = static_cast<unsigned char>(out[i]);
      CHECK((c >= 0x20 && c != 0x7f));
      if (c == 0xc2 && i + 1 < out.size())
        CHECK(!(static_cast<unsigned char>(out[i + 1]) >= 0x80 &&
                static_cast<unsigned char>(out[i + 1]) <= 0x9f));
    }
  }
}
