//===- LineIndex.h - Line and column of a location, without rescanning ----===//
//
// llvm::SourceMgr finds a location's column by scanning back to the start
// of its line, and copies the whole line into each message: on a file that
// is one long line, every diagnostic or AST node costs the length of the
// line, and thousands of them cost minutes. The start of every line is found
// once per buffer here; each lookup is then a binary search.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_DIAG_LINEINDEX_H
#define PIPEC_DIAG_LINEINDEX_H

#include "llvm/Support/SourceMgr.h"

#include <algorithm>
#include <cstring>
#include <vector>

namespace pipec {

class LineIndex {
public:
  struct Position {
    unsigned buffer = 0;  ///< 0: not in any buffer
    unsigned line = 0;    ///< 1-based
    unsigned column = 0;  ///< 0-based, in bytes
    llvm::StringRef text; ///< the whole line, without its line break
  };

  Position locate(const llvm::SourceMgr &sm, llvm::SMLoc loc) {
    Position p;
    p.buffer = sm.FindBufferContainingLoc(loc);
    if (p.buffer == 0)
      return p;
    llvm::StringRef text = sm.getMemoryBuffer(p.buffer)->getBuffer();
    if (text.data() != indexed.data() || text.size() != indexed.size()) {
      indexed = text;
      starts.assign(1, 0);
      for (const char *p = text.begin(); (p = static_cast<const char *>(std::memchr(
                                              p, '\n', static_cast<size_t>(text.end() - p))));
           ++p)
        starts.push_back(static_cast<size_t>(p + 1 - text.begin()));
    }
    size_t offset = static_cast<size_t>(loc.getPointer() - text.data());
    auto it = std::upper_bound(starts.begin(), starts.end(), offset);
    size_t start = *(it - 1);
    size_t end = it == starts.end() ? text.size() : *it - 1;
    p.line = static_cast<unsigned>(it - starts.begin());
    p.column = static_cast<unsigned>(offset - start);
    p.text = text.slice(start, end).rtrim('\r');
    return p;
  }

private:
  llvm::StringRef indexed; ///< the text `starts` describes
  std::vector<size_t> starts;
};

} // namespace pipec

#endif // PIPEC_DIAG_LINEINDEX_H
