//===- Suggest.cpp --------------------------------------------------------===//

#include "compiler/sema/Suggest.h"

#include "llvm/ADT/Hashing.h"

#include <algorithm>
#include <cstring>
#include <string>

using namespace pipec::sema;

std::optional<size_t> pipec::sema::suggestName(llvm::StringRef typo,
                                               llvm::ArrayRef<llvm::StringRef> candidates) {
  constexpr unsigned maxDistance = 2;
  std::optional<size_t> best;
  unsigned bestDistance = maxDistance + 1;
  bool tie = false;
  for (size_t i = 0; i < candidates.size(); ++i) {
    unsigned d = typo.edit_distance(candidates[i], /*AllowReplacements=*/true,
                                    /*MaxEditDistance=*/maxDistance + 1);
    if (d == 0 || d > maxDistance)
      continue;
    if (d < bestDistance) {
      best = i;
      bestDistance = d;
      tie = false;
    } else if (d == bestDistance && candidates[i] != candidates[*best]) {
      tie = true;
    }
  }
  if (tie)
    return std::nullopt;
  return best;
}

/// Calls `each` with the hash of every string made from `name` by deleting
/// up to two characters (the symmetric-delete index: two names within edit
/// distance 2 share one). No allocation per variant.
template <typename Each>
static void deletions(llvm::StringRef name, Each each, unsigned from = 0, unsigned upTo = 2) {
  char buffer[64];
  const size_t n = name.size();
  if (from == 0)
    each(llvm::hash_value(name));
  for (size_t i = 0; i < n && upTo >= 1; ++i) {
    // name without character i
    std::memcpy(buffer, name.data(), i);
    std::memcpy(buffer + i, name.data() + i + 1, n - i - 1);
    if (from <= 1)
      each(llvm::hash_value(llvm::StringRef(buffer, n - 1)));
    for (size_t j = i; j + 1 < n && upTo >= 2; ++j) {
      char two[64];
      std::memcpy(two, buffer, j);
      std::memcpy(two + j, buffer + j + 1, n - 2 - j);
      each(llvm::hash_value(llvm::StringRef(two, n - 2)));
    }
  }
}

NameIndex::NameIndex(std::vector<llvm::StringRef> all) : names(std::move(all)) {
  for (uint32_t i = 0; i < names.size(); ++i) {
    size_t length = std::min<size_t>(names[i].size(), 4096);
    if (byLength.size() <= length)
      byLength.resize(length + 1);
    byLength[length].push_back(i);
    if (names[i].size() > kIndexedLength)
      continue;
    deletions(names[i], [&](size_t hash) {
      std::vector<uint32_t> &list = byDeletion[hash];
      if (list.empty() || list.back() != i)
        list.push_back(i);
    });
  }
}

std::optional<size_t> NameIndex::suggest(llvm::StringRef typo, uint64_t &budget) const {
  constexpr unsigned maxDistance = 2;
  std::optional<size_t> best;
  unsigned bestDistance = maxDistance + 1;
  bool tie = false;
  auto consider = [&](uint32_t i) {
    unsigned d = typo.edit_distance(names[i], true, maxDistance + 1);
    if (d == 0 || d > maxDistance)
      return;
    if (d < bestDistance) {
      best = i, bestDistance = d, tie = false;
    } else if (d == bestDistance && names[i] != names[*best] && i != *best) {
      tie = true;
    }
  };
  if (typo.size() <= kIndexedLength) {
    // Short names (nearly all): only the names that share a deletion. A
    // name at distance 1 shares one of the typo's 0- or 1-deletions; when
    // one is found, nothing at distance 2 can beat it, and a second one is
    // a tie: the 2-deletions are looked at only when there is none.
    for (unsigned round = 0; round < 2; ++round) {
      std::vector<uint32_t> seen;
      deletions(
          typo,
          [&](size_t hash) {
            auto it = byDeletion.find(hash);
            if (it != byDeletion.end())
              seen.insert(seen.end(), it->second.begin(), it->second.end());
          },
          round == 0 ? 0 : 2, round == 0 ? 1 : 2);
      std::sort(seen.begin(), seen.end());
      seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
      for (uint32_t i : seen) {
        if (budget == 0)
          return std::nullopt;
        --budget;
        consider(i);
        if (tie && bestDistance == 1)
          return std::nullopt;
      }
      if (bestDistance == 1)
        return best;
    }
    // Longer names are not in the index: at most 2 longer than the typo.
    for (size_t l = kIndexedLength + 1; l <= typo.size() + maxDistance && l < byLength.size();
         ++l)
      for (uint32_t i : byLength[l]) {
        if (budget == 0)
          return std::nullopt;
        --budget;
        consider(i);
      }
  } else {
    size_t length = std::min<size_t>(typo.size(), 4096);
    for (size_t l = length - maxDistance; l <= length + maxDistance && l < byLength.size();
         ++l)
      for (uint32_t i : byLength[l]) {
        if (budget == 0)
          return std::nullopt;
        --budget;
        consider(i);
      }
  }
  if (tie)
    return std::nullopt;
  return best;
}
