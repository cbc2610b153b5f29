//===- Chunks.h - A long list written in chunks on two threads -------------===//
//
// The lists that grow with the instances (a schedule's stages and host
// calls: gigabytes of JSON at ten million instances) are formatted a chunk
// at a time, every other chunk on a second thread, and written in order:
// the bytes are those of one pass, in about half its time on two cores.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SUPPORT_CHUNKS_H
#define PIPEC_SUPPORT_CHUNKS_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstddef>

namespace llvm {
class raw_ostream;
}

namespace pipec {

/// Items per chunk: about ten megabytes of JSON held at a time.
constexpr size_t kChunkItems = size_t(1) << 15;

/// Writes items [0, n) to `out` as format(begin, end, out) would for the
/// whole range at once. `format` is called from two threads at once (on
/// different ranges), so it may only read what they share.
void writeInChunks(
    size_t n, llvm::raw_ostream &out,
    llvm::function_ref<void(size_t begin, size_t end, llvm::raw_ostream &out)> format);

} // namespace pipec

#endif // PIPEC_SUPPORT_CHUNKS_H
