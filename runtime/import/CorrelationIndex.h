//===- CorrelationIndex.h - A map from correlation ids, dense when they are ===//
//
// CUPTI numbers the runtime calls of a process in the order they are made,
// and every GPU op carries the number of the call that launched it: a step's
// ids fill most of the range between its least and its greatest. This map
// from an id to a 32-bit value is then an array over that range, four bytes
// an id and no hashing (a million ops: 4 MB, where a hash map sized for
// them is 32); ids spread thinly over their range (a trace made by hand, or
// merged from several) fall back to a hash map. The keys' range is given
// when it is built.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_CORRELATIONINDEX_H
#define PIPEC_RUNTIME_IMPORT_CORRELATIONINDEX_H

#include "llvm/ADT/DenseMap.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace pipec::importer {

class CorrelationIndex {
public:
  CorrelationIndex() = default;
  /// Room for about `count` keys, every one in [lo, hi].
  CorrelationIndex(int64_t lo, int64_t hi, size_t count) {
    if (count == 0 || hi < lo)
      return;
    const uint64_t range = uint64_t(hi) - uint64_t(lo) + 1; // no overflow: lo <= hi
    if (range != 0 && range <= 4 * uint64_t(count) + 4096) {
      first = lo;
      dense.assign(size_t(range), kAbsent);
    } else {
      sparse.reserve(unsigned(std::min<size_t>(count, size_t(1) << 30)));
    }
  }

  /// Sized for the keys `forEachKey(visit)` visits; a negative one is no id
  /// (it goes to the hash map if inserted).
  template <typename ForEachKey> static CorrelationIndex sizedFor(ForEachKey forEachKey) {
    int64_t lo = INT64_MAX, hi = -1;
    size_t count = 0;
    forEachKey([&](int64_t key) {
      if (key < 0)
        return;
      lo = std::min(lo, key);
      hi = std::max(hi, key);
      ++count;
    });
    return CorrelationIndex(lo, hi, count);
  }

  /// The value of `key`; null when it has none.
  uint32_t *find(int64_t key) {
    if (uint32_t *v = slot(key))
      return *v != kAbsent ? v : nullptr;
    auto it = sparse.find(key);
    return it == sparse.end() ? nullptr : &it->second;
  }
  /// The value of `key`, made `value` first when it had none (and true).
  /// `value` may not be UINT32_MAX. A key outside the range given goes to
  /// the hash map.
  std::pair<uint32_t *, bool> tryEmplace(int64_t key, uint32_t value) {
    if (uint32_t *v = slot(key)) {
      const bool added = *v == kAbsent;
      if (added)
        *v = value;
      return {v, added};
    }
    auto [it, added] = sparse.try_emplace(key, value);
    return {&it->second, added};
  }

private:
  static constexpr uint32_t kAbsent = UINT32_MAX;
  /// The array's entry of `key`; null when it has none (or no array).
  uint32_t *slot(int64_t key) {
    if (dense.empty() || key < first || uint64_t(key) - uint64_t(first) >= dense.size())
      return nullptr;
    return &dense[size_t(uint64_t(key) - uint64_t(first))];
  }
  int64_t first = 0;
  std::vector<uint32_t> dense; ///< by key - first; kAbsent: none
  llvm::DenseMap<int64_t, uint32_t> sparse;
};

} // namespace pipec::importer

#endif // PIPEC_RUNTIME_IMPORT_CORRELATIONINDEX_H
