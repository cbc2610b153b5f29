//===- Units.h - Quantities with units, normalised to us and bytes --------===//
#ifndef PIPEC_SEMA_UNITS_H
#define PIPEC_SEMA_UNITS_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace pipec::sema {

/// The largest time and size a stage may have: anything beyond is a typo.
constexpr double kMaxTimeUs = 3600.0 * 1e6;       // one hour
constexpr uint64_t kMaxBytes = uint64_t(1) << 40; // 1 TiB
/// The shortest wave of blocks a real kernel takes (Sema::checkWaves warns
/// of a shorter one; an import writes none).
constexpr double kLeastWaveUs = 0.25;

struct Quantity {
  enum Kind {
    Time,        ///< micros holds the value
    Size,        ///< bytes holds the value
    Bare,        ///< a number without a unit
    UnknownUnit, ///< a unit that is neither a time nor a size
    Invalid,     ///< an expression whose error is already reported
  } kind = Bare;
  double number = 0; ///< for Bare
  double micros = 0;
  uint64_t bytes = 0;
  bool tooLarge = false;        ///< beyond kMaxTimeUs / kMaxBytes
  bool fractionalBytes = false; ///< a size that is not a whole byte count
};

/// `number` is `[0-9]+(\.[0-9]+)?`; `unit` is what followed it, maybe empty.
Quantity parseQuantity(llvm::StringRef number, llvm::StringRef unit);

/// A unit's scale: microseconds per unit for a time, bytes for a size.
struct UnitScale {
  bool time = false;
  double scale = 0; ///< 0 for a word that is no unit
};
UnitScale unitScale(llvm::StringRef unit);

/// "ns, us, ms, s" and "B, KB, MB, GB, KiB, MiB, GiB", for messages.
const char *timeUnitList();
const char *sizeUnitList();

} // namespace pipec::sema

#endif // PIPEC_SEMA_UNITS_H
