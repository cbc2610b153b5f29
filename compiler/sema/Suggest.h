//===- Suggest.h - "did you mean" -----------------------------------------===//
#ifndef PIPEC_SEMA_SUGGEST_H
#define PIPEC_SEMA_SUGGEST_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace pipec::sema {

/// The index of the unique candidate nearest to `typo`, if it is within edit
/// distance 2; none when two candidates tie for nearest.
std::optional<size_t> suggestName(llvm::StringRef typo,
                                  llvm::ArrayRef<llvm::StringRef> candidates);

} // namespace pipec::sema

#endif // PIPEC_SEMA_SUGGEST_H
