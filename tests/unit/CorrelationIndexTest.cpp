// CorrelationIndex against a std::map (the slow, obvious map): the same
// value for every key after the same insertions, whether the keys fill
// their range (an array) or spread thinly (a hash map), and for keys
// outside the range it was given.

#include "runtime/import/CorrelationIndex.h"

#include "Seed.h"

#include <doctest/doctest.h>

#include <map>
#include <random>

using namespace pipec::importer;

TEST_CASE("correlation index: a map's values, dense or sparse") {
  PIPEC_SEEDED(rng, 47);
  for (int round = 0; round < 300; ++round) {
    const size_t count = rng() % 300;
    // Dense: ids from a base, a few missing; sparse: spread far apart.
    const bool dense = round % 2 == 0;
    const int64_t base = int64_t(rng() % 1000000);
    std::vector<int64_t> keys;
    for (size_t i = 0; i < count; ++i)
      keys.push_back(dense ? base + int64_t(rng() % (count + 1))
                           : base + int64_t(rng() % 1000000000) * 97);
    int64_t lo = INT64_MAX, hi = -1;
    for (int64_t k : keys) {
      lo = std::min(lo, k);
      hi = std::max(hi, k);
    }
    CorrelationIndex index(lo, hi, keys.size());
    std::map<int64_t, uint32_t> slow;
    for (int64_t k : keys) {
      const uint32_t value = uint32_t(rng() % 1000);
      auto [it, added] = slow.try_emplace(k, value);
      auto [v, indexAdded] = index.tryEmplace(k, value);
      CHECK(indexAdded == added);
      CHECK(*v == it->second);
      if (rng() % 4 == 0) { // counts go up in place
        ++*v;
        ++it->second;
      }
    }
    // Keys outside the range given: absent, then held all the same.
    for (int64_t k : {lo - 1, hi + 1, int64_t(-1), hi + 1000000}) {
      if (slow.count(k))
        continue;
      CHECK(index.find(k) == nullptr);
      CHECK(index.tryEmplace(k, 7).second);
      slow[k] = 7;
    }
    for (int64_t probe = base - 3; probe < base + int64_t(count) + 3; ++probe) {
      const uint32_t *v = index.find(probe);
      auto it = slow.find(probe);
      REQUIRE((v != nullptr) == (it != slow.end()));
      if (v)
        CHECK(*v == it->second);
    }
    for (const auto &[k, value] : slow) {
      const uint32_t *v = index.find(k);
      REQUIRE(v);
      CHECK(*v == value);
    }
  }
}
