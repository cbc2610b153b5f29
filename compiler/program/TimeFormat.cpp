//===- TimeFormat.cpp -----------------------------------------------------===//

#include "compiler/program/TimeFormat.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace pipec;

/// `value`, made 0 where it would print as a negative zero with `decimals`.
static double tidy(double value, int decimals) {
  return std::fabs(value) < 0.5 * std::pow(10.0, -decimals) ? 0.0 : value;
}

std::string pipec::formatTime(double us) {
  if (!std::isfinite(us))
    return "?";
  double a = std::fabs(us);
  if (a == 0)
    return "0 us";
  if (a < 0.95)
    return llvm::formatv("{0:f0} ns", tidy(us * 1000, 0));
  if (a < 999.95)
    return llvm::formatv("{0:f1} us", tidy(us, 1));
  if (a < 999995)
    return llvm::formatv("{0:f2} ms", tidy(us / 1000, 2));
  return llvm::formatv("{0:f2} s", tidy(us / 1e6, 2));
}

std::string pipec::formatPercent(double fraction, int decimals) {
  if (!std::isfinite(fraction))
    return "?";
  double value = tidy(fraction * 100, decimals);
  return llvm::formatv("{0}%",
                       llvm::formatv(decimals == 0 ? "{0:f0}" : "{0:f1}", value).str());
}

std::string pipec::formatBytes(uint64_t n) {
  if (n < 1000)
    return std::to_string(n) + " B";
  const char *units[] = {"KB", "MB", "GB", "TB"};
  double v = double(n) / 1000;
  int u = 0;
  while (v >= 999.95 && u < 3)
    v /= 1000, ++u;
  return llvm::formatv("{0:f1} {1}", v, units[u]);
}
