//===- SourceText.cpp -----------------------------------------------------===//

#include "compiler/parse/SourceText.h"

using namespace pipec::parse;

/// Decodes one well-formed UTF-8 sequence at s[i]; returns its length, or 0
/// when the bytes there are not well-formed (overlong forms, surrogates and
/// values past U+10FFFF included).
static unsigned decodeOne(llvm::StringRef s, size_t i, char32_t &out) {
  auto byte = [&](size_t k) { return static_cast<uint8_t>(s[k]); };
  uint8_t b0 = byte(i);
  size_t left = s.size() - i;
  auto cont = [&](size_t k) { return k < s.size() && (byte(k) & 0xC0) == 0x80; };
  if (b0 < 0x80) {
    out = b0;
    return 1;
  }
  if (b0 >= 0xC2 && b0 <= 0xDF && left >= 2 && cont(i + 1)) {
    out = (char32_t(b0 & 0x1F) << 6) | (byte(i + 1) & 0x3F);
    return 2;
  }
  if (b0 >= 0xE0 && b0 <= 0xEF && left >= 3 && cont(i + 1) && cont(i + 2)) {
    char32_t c = (char32_t(b0 & 0x0F) << 12) | (char32_t(byte(i + 1) & 0x3F) << 6) |
                 (byte(i + 2) & 0x3F);
    if (c < 0x800 || (c >= 0xD800 && c <= 0xDFFF))
      return 0;
    out = c;
    return 3;
  }
  if (b0 >= 0xF0 && b0 <= 0xF4 && left >= 4 && cont(i + 1) && cont(i + 2) && cont(i + 3)) {
    char32_t c = (char32_t(b0 & 0x07) << 18) | (char32_t(byte(i + 1) & 0x3F) << 12) |
                 (char32_t(byte(i + 2) & 0x3F) << 6) | (byte(i + 3) & 0x3F);
    if (c < 0x10000 || c > 0x10FFFF)
      return 0;
    out = c;
    return 4;
  }
  return 0;
}

unsigned SourceText::decode(llvm::StringRef s, size_t i, char32_t &out) {
  if (unsigned len = decodeOne(s, i, out))
    return len;
  out = 0xDC00 + static_cast<uint8_t>(s[i]);
  return 1;
}

SourceText::SourceText(llvm::StringRef bytes, std::u32string &points) : points(points) {
  points.clear();
  bool ascii = true;
  for (char c : bytes)
    if (static_cast<uint8_t>(c) >= 0x80) {
      ascii = false;
      break;
    }
  points.reserve(bytes.size());
  if (ascii) {
    for (char c : bytes)
      points.push_back(static_cast<char32_t>(c));
    return;
  }
  offsets.reserve(bytes.size() + 1);
  for (size_t i = 0; i < bytes.size();) {
    char32_t c = 0;
    unsigned len = decode(bytes, i, c);
    points.push_back(c);
    offsets.push_back(static_cast<uint32_t>(i));
    i += len;
  }
  offsets.push_back(static_cast<uint32_t>(bytes.size()));
}
