//===- Decimal.h - Integers written straight into an output buffer --------===//
//
// `os << Decimal(n)` writes n with std::to_chars into a stack buffer and
// copies it out: raw_ostream's own integer formatting was the JSON
// emitter's hottest step at 10^7 instances (issue 18).
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SUPPORT_DECIMAL_H
#define PIPEC_SUPPORT_DECIMAL_H

#include "llvm/Support/raw_ostream.h"

#include <charconv>
#include <cstdint>

namespace pipec {

struct Decimal {
  explicit Decimal(uint64_t value) : value(value) {}
  uint64_t value;
};

inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os, Decimal d) {
  char buffer[20];
  std::to_chars_result r = std::to_chars(buffer, buffer + sizeof buffer, d.value);
  return os.write(buffer, static_cast<size_t>(r.ptr - buffer));
}

} // namespace pipec

#endif // PIPEC_SUPPORT_DECIMAL_H
