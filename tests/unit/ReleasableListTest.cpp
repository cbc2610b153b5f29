// ReleasableList against a std::vector (the slow, obvious list): the same
// items at every index not released, after any sequence of appends and
// releases, in a copy too; and a released chunk's items destroyed at once.

#include "compiler/support/ReleasableList.h"

#include "Seed.h"

#include <doctest/doctest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace pipec;

namespace {
template <typename List>
void checkSame(const List &list, const std::vector<std::string> &all, size_t released) {
  REQUIRE(list.size() == all.size());
  CHECK(list.empty() == all.empty());
  for (size_t i = released; i < all.size(); ++i)
    CHECK(list[i] == all[i]);
  size_t i = released;
  for (const std::string &item : list)
    CHECK(item == all[i++]);
  CHECK(i == all.size());
}
} // namespace

TEST_CASE("releasable list: a vector's items, less the released chunks") {
  PIPEC_SEEDED(rng, 46);
  for (int round = 0; round < 200; ++round) {
    ReleasableList<std::string, 8> list;
    std::vector<std::string> all;
    size_t released = 0; // items below it may not be read
    const int steps = int(rng() % 60);
    for (int step = 0; step < steps; ++step) {
      if (rng() % 4) {
        const size_t n = rng() % 12;
        for (size_t k = 0; k < n; ++k) {
          // Longer than any small-string buffer: each item owns memory.
          all.push_back(std::string(20, char('a' + all.size() % 26)) +
                        std::to_string(all.size()));
          list.push_back(std::string(all.back()));
        }
      } else {
        const size_t upTo = rng() % (all.size() + 3);
        list.releaseBefore(upTo);
        released = std::max(released, std::min(upTo, all.size()) / 8 * 8);
      }
      checkSame(list, all, released);
    }
    ReleasableList<std::string, 8> copy = list;
    checkSame(copy, all, released);
    if (released < all.size()) // (a released last item may not be read)
      CHECK(list.back() == all.back());
    list.clear();
    CHECK(list.empty());
    CHECK(list.begin() == list.end());
  }
}

TEST_CASE("releasable list: a released chunk's items are destroyed then") {
  auto alive = std::make_shared<int>(0);
  ReleasableList<std::shared_ptr<int>, 4> list;
  for (int i = 0; i < 10; ++i)
    list.push_back(std::shared_ptr<int>(alive));
  CHECK(alive.use_count() == 11);
  list.releaseBefore(3); // no whole chunk below 3
  CHECK(alive.use_count() == 11);
  list.releaseBefore(9); // chunks [0,4) and [4,8)
  CHECK(alive.use_count() == 3);
  CHECK(list[8].get() == alive.get());
  CHECK(list.size() == 10);
  list.clear();
  CHECK(alive.use_count() == 1);
}

TEST_CASE("releasable list: chunks of the mapped size (pages of their own)") {
  // 4096 items of 64 bytes: the chunks past the first are 256 KiB, mapped.
  struct Big {
    char bytes[64];
  };
  ReleasableList<Big, 4096> list;
  for (size_t i = 0; i < 3 * 4096 + 5; ++i) {
    Big b{};
    b.bytes[0] = char(i % 127);
    list.push_back(std::move(b));
  }
  list.releaseBefore(2 * 4096);
  for (size_t i = 2 * 4096; i < list.size(); ++i)
    CHECK(list[i].bytes[0] == char(i % 127));
}
