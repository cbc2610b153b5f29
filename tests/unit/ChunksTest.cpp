// writeInChunks against one pass: the same bytes, for lengths around the
// chunk boundaries, and each item formatted exactly once.

#include "compiler/support/Chunks.h"

#include "llvm/Support/raw_ostream.h"

#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <vector>

using namespace pipec;

TEST_CASE("chunks: the bytes of one pass, each item once") {
  auto format = [](size_t from, size_t to, llvm::raw_ostream &out) {
    for (size_t i = from; i < to; ++i)
      out << (i ? "," : "") << '{' << i * 7919 % 1000003 << '}';
  };
  for (size_t n : {size_t(0), size_t(1), 2 * kChunkItems, 2 * kChunkItems + 1,
                   3 * kChunkItems - 1, 5 * kChunkItems + 7}) {
    std::string once, chunked;
    llvm::raw_string_ostream a(once), b(chunked);
    format(0, n, a);
    std::vector<std::atomic<int>> seen(n);
    writeInChunks(n, b, [&](size_t from, size_t to, llvm::raw_ostream &out) {
      for (size_t i = from; i < to; ++i)
        seen[i]++;
      format(from, to, out);
    });
    INFO(n);
    CHECK(a.str() == b.str());
    for (size_t i = 0; i < n; ++i)
      CHECK(seen[i] == 1);
  }
}
