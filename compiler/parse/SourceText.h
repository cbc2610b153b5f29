//===- SourceText.h - UTF-8 source as code points, with byte offsets -------===//
//
// The front end reads bytes: the Scanner's tokens span byte offsets, as
// SourceMgr's locations do. ANTLR's generated lexer counts code points
// instead; SourceText decodes a buffer for it (the tests and the fuzzer
// compare the two lexers) and maps a code point index back to its byte
// offset. decode() is the one UTF-8 decoder both sides use: a byte that is
// not part of valid UTF-8 becomes one code point of its own in the surrogate
// range (U+DC80..U+DCFF, as Python's "surrogateescape" does), which no token
// accepts, so the lexer reports it where it stands.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PARSE_SOURCETEXT_H
#define PIPEC_PARSE_SOURCETEXT_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipec::parse {

class SourceText {
public:
  /// Decodes `bytes` into `points` (the lexer's input stream holds them, so
  /// that a file's code points are kept once), which must outlive this.
  SourceText(llvm::StringRef bytes, std::u32string &points);

  const std::u32string &codePoints() const { return points; }

  /// Byte offset of code point `index` (index == size() gives the end).
  size_t byteOffset(size_t index) const { return offsets.empty() ? index : offsets[index]; }

  /// Decodes the code point at s[i] into `out`; returns its length in bytes
  /// (1 for a byte that is not valid UTF-8, decoded as its escape).
  static unsigned decode(llvm::StringRef s, size_t i, char32_t &out);

  /// For a code point that stands for an invalid byte, that byte.
  static std::optional<uint8_t> invalidByte(char32_t c) {
    if (c >= 0xDC80 && c <= 0xDCFF)
      return static_cast<uint8_t>(c - 0xDC00);
    return std::nullopt;
  }

private:
  const std::u32string &points;
  std::vector<uint32_t> offsets; ///< empty when the text is pure ASCII
};

} // namespace pipec::parse

#endif // PIPEC_PARSE_SOURCETEXT_H
