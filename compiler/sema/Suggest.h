//===- Suggest.h - "did you mean" -----------------------------------------===//
#ifndef PIPEC_SEMA_SUGGEST_H
#define PIPEC_SEMA_SUGGEST_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <unordered_map>
#include <vector>

namespace pipec::sema {

/// The index of the unique candidate nearest to `typo`, if it is within edit
/// distance 2; none when two candidates tie for nearest.
std::optional<size_t> suggestName(llvm::StringRef typo,
                                  llvm::ArrayRef<llvm::StringRef> candidates);

/// The same question asked many times of one list of names, in time that
/// does not grow with the list: names of up to 24 characters are indexed by
/// every deletion of up to two characters (two names within edit distance 2
/// share one), so a question compares only the few names that share one;
/// longer names are compared by length, within a budget of comparisons
/// shared by the questions of a file, after which none is suggested.
class NameIndex {
public:
  explicit NameIndex(std::vector<llvm::StringRef> names);
  std::optional<size_t> suggest(llvm::StringRef typo, uint64_t &budget) const;

private:
  /// Names up to this long are found through their deletions.
  static constexpr size_t kIndexedLength = 24;
  std::vector<llvm::StringRef> names;
  std::vector<std::vector<uint32_t>> byLength; ///< length -> indices
  std::unordered_map<size_t, std::vector<uint32_t>> byDeletion;
};

} // namespace pipec::sema

#endif // PIPEC_SEMA_SUGGEST_H
