//===- Columns.h - fmt's aligned columns of streams, buffers and stages ---===//
//
// A run of consecutive `stream`, `buffer` or `stage` lines is laid out in
// columns: each as wide as its widest cell, a column no line of the run
// uses left out, padding written only where more of the line follows. The
// formatter lays out parsed files with it, and the importer writes its file
// with it directly (already as fmt would lay it out, without a parse).
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_FORMAT_COLUMNS_H
#define PIPEC_FORMAT_COLUMNS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace pipec {

class Columns {
public:
  explicit Columns(size_t count) : width(count, 0) {}

  /// Widens the columns to hold one line's cells (as many as the columns).
  void fit(llvm::ArrayRef<llvm::StringRef> cells);
  /// Widens the columns to hold every line `other` was fitted to.
  void fit(const Columns &other);
  /// Appends one line to `out`: two spaces, the keyword, the cells, ';',
  /// and a comment after it when `trailing` is not empty.
  void write(std::string &out, llvm::StringRef keyword, llvm::ArrayRef<llvm::StringRef> cells,
             llvm::StringRef trailing) const;
  /// The bytes write() appends for that line (to size a large output once).
  size_t length(llvm::StringRef keyword, llvm::ArrayRef<llvm::StringRef> cells,
                llvm::StringRef trailing) const;

private:
  std::vector<size_t> width;
};

} // namespace pipec

#endif // PIPEC_FORMAT_COLUMNS_H
