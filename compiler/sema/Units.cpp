//===- Units.cpp ----------------------------------------------------------===//

#include "compiler/sema/Units.h"

#include "llvm/ADT/StringSwitch.h"

#include <cstdlib>
#include <string>

using namespace pipec::sema;

const char *pipec::sema::timeUnitList() { return "ns, us, ms, s"; }
const char *pipec::sema::sizeUnitList() { return "B, KB, MB, GB, KiB, MiB, GiB"; }

UnitScale pipec::sema::unitScale(llvm::StringRef unit) {
  Quantity q = parseQuantity("1", unit);
  if (q.kind == Quantity::Time)
    return {true, q.micros};
  if (q.kind == Quantity::Size)
    return {false, double(q.bytes)};
  return {};
}

Quantity pipec::sema::parseQuantity(llvm::StringRef number, llvm::StringRef unit) {
  Quantity q;
  double timeScale = llvm::StringSwitch<double>(unit)
                         .Case("ns", 1e-3)
                         .Case("us", 1)
                         .Case("ms", 1e3)
                         .Case("s", 1e6)
                         .Default(0);
  uint64_t sizeScale = llvm::StringSwitch<uint64_t>(unit)
                           .Case("B", 1)
                           .Case("KB", 1000)
                           .Case("MB", 1000 * 1000)
                           .Case("GB", 1000 * 1000 * 1000)
                           .Case("KiB", 1024)
                           .Case("MiB", 1024 * 1024)
                           .Case("GiB", 1024 * 1024 * 1024)
                           .Default(0);
  if (unit.empty()) {
    q.kind = Quantity::Bare;
    q.number = std::strtod(std::string(number).c_str(), nullptr);
    return q;
  }
  if (timeScale != 0) {
    q.kind = Quantity::Time;
    double value = std::strtod(std::string(number).c_str(), nullptr);
    q.micros = value * timeScale;
    q.tooLarge = !(q.micros <= kMaxTimeUs);
    return q;
  }
  if (sizeScale != 0) {
    q.kind = Quantity::Size;
    // Exact decimal arithmetic: bytes = digits * scale / 10^fractionDigits.
    // At most 25 significant digits: 10^25 * 2^30 < 2^128, so nothing
    // below wraps (a 30-digit size once came out as 0 B).
    auto [whole, fraction] = number.split('.');
    whole = whole.ltrim('0');
    if (whole.size() + fraction.size() > 25) {
      q.tooLarge = true;
      return q;
    }
    unsigned __int128 digits = 0, divisor = 1;
    for (char c : whole)
      digits = digits * 10 + static_cast<unsigned>(c - '0');
    for (char c : fraction) {
      digits = digits * 10 + static_cast<unsigned>(c - '0');
      divisor *= 10;
    }
    unsigned __int128 scaled = digits * sizeScale;
    q.fractionalBytes = scaled % divisor != 0;
    unsigned __int128 bytes = scaled / divisor;
    q.tooLarge = bytes > kMaxBytes;
    q.bytes = q.tooLarge ? kMaxBytes : static_cast<uint64_t>(bytes);
    return q;
  }
  q.kind = Quantity::UnknownUnit;
  return q;
}
