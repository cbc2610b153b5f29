//===- Printable.cpp ------------------------------------------------------===//

#include "compiler/support/Printable.h"

#include "llvm/Support/ConvertUTF.h"

using namespace pipec;

namespace {

bool controlAt(llvm::StringRef text, size_t i, size_t &length) {
  unsigned char c = static_cast<unsigned char>(text[i]);
  length = 1;
  if (c < 0x20 || c == 0x7f || c == '\\')
    return true;
  if (c < 0x80)
    return false;
  // A byte that begins no valid UTF-8 sequence is shown as its value: a
  // lone 0x9b is CSI to a terminal in 8-bit mode.
  const unsigned n = llvm::getNumBytesForUTF8(c);
  const auto *at = reinterpret_cast<const llvm::UTF8 *>(text.data() + i);
  if (n < 2 || i + n > text.size() || !llvm::isLegalUTF8Sequence(at, at + n))
    return true;
  // C1 controls as UTF-8: C2 80 .. C2 9F.
  if (c == 0xc2) {
    unsigned char d = static_cast<unsigned char>(text[i + 1]);
    if (d >= 0x80 && d <= 0x9f) {
      length = 2;
      return true;
    }
  }
  length = n;
  return false;
}

} // namespace

bool pipec::needsEscaping(llvm::StringRef text) {
  size_t length;
  for (size_t i = 0; i < text.size(); i += length)
    if (controlAt(text, i, length))
      return true;
  return false;
}

std::string pipec::printable(llvm::StringRef text) {
  if (!needsEscaping(text))
    return text.str();
  static const char hex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t i = 0; i < text.size();) {
    size_t length;
    if (!controlAt(text, i, length)) {
      out.append(text.data() + i, length);
      i += length;
      continue;
    }
    if (text[i] == '\\') {
      out += "\\\\";
    } else {
      // A C1 control is shown as the code point it encodes.
      unsigned char c = static_cast<unsigned char>(length == 2 ? text[i + 1] : text[i]);
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
    i += length;
  }
  return out;
}
