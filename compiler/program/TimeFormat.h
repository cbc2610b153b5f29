//===- TimeFormat.h - Times and shares as people read them ----------------===//
//
// Every time pipec prints for people goes through formatTime: nanoseconds
// below a microsecond, microseconds below a millisecond, then milliseconds
// and seconds, and never a negative zero. JSON keeps raw microseconds.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PROGRAM_TIMEFORMAT_H
#define PIPEC_PROGRAM_TIMEFORMAT_H

#include <cstdint>
#include <string>

namespace pipec {

/// "850 ns", "12.5 us", "3.91 ms", "1.25 s".
std::string formatTime(double us);

/// "850 B", "64.0 MB", "1.5 GB" (powers of 1000, as the language's MB).
std::string formatBytes(uint64_t bytes);

/// A share as a percentage with `decimals` decimals, never "-0%".
std::string formatPercent(double fraction, int decimals = 0);

} // namespace pipec

#endif // PIPEC_PROGRAM_TIMEFORMAT_H
