//===- Formatter.h - The canonical layout of a .pipe file (`pipec fmt`) ---===//
//
// Like gofmt: one item per line, two-space indents, the columns of
// consecutive streams and stages aligned, every comment kept where it was
// (before the item it precedes, or after the one it follows on a line), one
// blank line kept wherever the source had any. Formatting never changes what
// a file means, and formatting a formatted file changes nothing.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_FORMAT_FORMATTER_H
#define PIPEC_FORMAT_FORMATTER_H

#include "compiler/ast/AST.h"

#include "llvm/ADT/StringRef.h"

#include <string>

namespace pipec {

/// The canonical text of `file`, whose source is `source` (the buffer its
/// locations point into). The file must have parsed without errors.
std::string formatFile(const ast::File &file, llvm::StringRef source);

} // namespace pipec

#endif // PIPEC_FORMAT_FORMATTER_H
