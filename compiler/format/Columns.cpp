//===- Columns.cpp --------------------------------------------------------===//

#include "compiler/format/Columns.h"

#include <algorithm>
#include <cassert>

using namespace pipec;

void Columns::fit(llvm::ArrayRef<llvm::StringRef> cells) {
  assert(cells.size() == width.size() && "one cell per column");
  for (size_t c = 0; c < width.size(); ++c)
    width[c] = std::max(width[c], cells[c].size());
}

void Columns::fit(const Columns &other) {
  assert(other.width.size() == width.size() && "the same columns");
  for (size_t c = 0; c < width.size(); ++c)
    width[c] = std::max(width[c], other.width[c]);
}

size_t Columns::length(llvm::StringRef keyword, llvm::ArrayRef<llvm::StringRef> cells,
                       llvm::StringRef trailing) const {
  assert(cells.size() == width.size() && "one cell per column");
  size_t n = 2 + keyword.size(), pending = 0;
  for (size_t c = 0; c < width.size(); ++c) {
    if (width[c] == 0)
      continue;
    if (!cells[c].empty()) {
      n += pending + 1 + cells[c].size();
      pending = width[c] - cells[c].size();
    } else {
      pending += width[c] + 1;
    }
  }
  return n + 1 + (trailing.empty() ? 0 : 1 + trailing.size()) + 1;
}

void Columns::write(std::string &out, llvm::StringRef keyword,
                    llvm::ArrayRef<llvm::StringRef> cells, llvm::StringRef trailing) const {
  assert(cells.size() == width.size() && "one cell per column");
  out += "  ";
  out.append(keyword.data(), keyword.size());
  size_t pending = 0; // padding, written only if more follows
  for (size_t c = 0; c < width.size(); ++c) {
    if (width[c] == 0)
      continue; // a column no line of the run uses
    llvm::StringRef cell = cells[c];
    if (!cell.empty()) {
      out.append(pending + 1, ' ');
      out.append(cell.data(), cell.size());
      pending = width[c] - cell.size();
    } else {
      pending += width[c] + 1;
    }
  }
  out += ';';
  if (!trailing.empty()) {
    out += ' ';
    out.append(trailing.data(), trailing.size());
  }
  out += '\n';
}
