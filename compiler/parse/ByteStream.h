//===- ByteStream.h - The source's bytes, as the tokens' character stream ===//
//
// The Scanner reads the buffer itself; ANTLR's parser and error strategy
// only ask a token for its text, which CommonToken reads from its character
// stream by the token's [start, stop] -- byte offsets here. So this stream
// answers getText() from the buffer and holds nothing of its own: no copy of
// the file as 32-bit code points (4 bytes a character) as ANTLRInputStream
// would.
//
// Internal to compiler/parse/.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PARSE_BYTESTREAM_H
#define PIPEC_PARSE_BYTESTREAM_H

#include "antlr4-runtime.h"

#include "llvm/ADT/StringRef.h"

namespace pipec::parse {

class ByteStream : public antlr4::CharStream {
public:
  explicit ByteStream(llvm::StringRef bytes) : bytes(bytes) {}

  llvm::StringRef text() const { return bytes; }

  /// Bytes [a, b] (clamped to the buffer), as a token's text.
  std::string getText(const antlr4::misc::Interval &interval) override {
    if (interval.a < 0 || interval.b < interval.a ||
        static_cast<size_t>(interval.a) >= bytes.size())
      return "";
    size_t last = std::min(static_cast<size_t>(interval.b), bytes.size() - 1);
    return bytes.slice(static_cast<size_t>(interval.a), last + 1).str();
  }
  std::string toString() const override { return bytes.str(); }

  // A plain forward stream over the bytes: nothing reads it so (the
  // Scanner scans the buffer), but the interface asks for it.
  void consume() override {
    if (at < bytes.size())
      ++at;
  }
  size_t LA(ssize_t i) override {
    if (i == 0)
      return 0;
    ssize_t k = static_cast<ssize_t>(at) + (i > 0 ? i - 1 : i);
    if (k < 0 || static_cast<size_t>(k) >= bytes.size())
      return antlr4::IntStream::EOF;
    return static_cast<uint8_t>(bytes[static_cast<size_t>(k)]);
  }
  ssize_t mark() override { return -1; }
  void release(ssize_t) override {}
  size_t index() override { return at; }
  void seek(size_t index) override { at = std::min(index, bytes.size()); }
  size_t size() override { return bytes.size(); }
  std::string getSourceName() const override { return "<bytes>"; }

private:
  llvm::StringRef bytes;
  size_t at = 0;
};

} // namespace pipec::parse

#endif // PIPEC_PARSE_BYTESTREAM_H
