//===- Parser.h - .pipe source to AST -------------------------------------===//
//
// The only entry point of the parser layer. No ANTLR type crosses it.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PARSE_PARSER_H
#define PIPEC_PARSE_PARSER_H

#include "compiler/ast/AST.h"
#include "compiler/diag/Diagnostics.h"

#include "llvm/ADT/StringRef.h"

namespace llvm {
class SourceMgr;
}

namespace pipec {

/// Parses buffer `bufferId` of `sm`, reporting lexical and syntax errors to
/// `diags`. The AST holds every pipeline the parser could recover; those with
/// syntax errors are marked (Pipeline::hasSyntaxErrors). `path` is the name
/// the AST and its dump use for the file.
ast::File parseFile(llvm::SourceMgr &sm, unsigned bufferId, llvm::StringRef path,
                    DiagnosticEngine &diags);
/// How the parser works; what it answers is the same whatever they are
/// (tests and the fuzzer hold it to that).
struct ParseOptions {
  /// The parser frees the tokens it has passed once this many pile up
  /// (tests free them after every item, to check that nothing needed them).
  size_t freeAfter = 4096;
  /// Well-formed items are parsed directly, not by the generated parser
  /// (tests and the fuzzer turn it off to compare).
  bool directItems = true;
};
/// The same for `range`, a part of the buffer (`check --split-input-file`):
/// locations, and so line numbers, are the whole file's.
ast::File parseFile(llvm::SourceMgr &sm, unsigned bufferId, llvm::StringRef path,
                    DiagnosticEngine &diags, llvm::StringRef range, ParseOptions options = {});

} // namespace pipec

#endif // PIPEC_PARSE_PARSER_H
