//===- Chunks.cpp ---------------------------------------------------------===//

#include "compiler/support/Chunks.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <string>
#include <thread>

using namespace pipec;

void pipec::writeInChunks(
    size_t n, llvm::raw_ostream &out,
    llvm::function_ref<void(size_t, size_t, llvm::raw_ostream &)> format) {
  if (n <= 2 * kChunkItems || std::thread::hardware_concurrency() < 2) {
    format(0, n, out);
    return;
  }
  // Each round: this thread formats a chunk straight into `out` while a
  // second formats the next into a string, which is written after it.
  std::string next;
  for (size_t begin = 0; begin < n; begin += 2 * kChunkItems) {
    const size_t mid = std::min(n, begin + kChunkItems), end = std::min(n, mid + kChunkItems);
    next.clear();
    std::thread second;
    if (mid < end)
      second = std::thread([&, mid, end] {
        llvm::raw_string_ostream os(next);
        os.SetBufferSize(size_t(1) << 16); // unbuffered, small writes cost twice
        format(mid, end, os);
        os.flush();
      });
    format(begin, mid, out);
    if (second.joinable())
      second.join();
    out << next;
  }
}
