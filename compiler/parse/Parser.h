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
ast::File parseFile(llvm::SourceMgr &sm, unsigned bufferId,
                    llvm::StringRef path, DiagnosticEngine &diags);
/// The same for `range`, a part of the buffer (`check --split-input-file`):
/// locations, and so line numbers, are the whole file's. The parser frees
/// the tokens it has passed once `freeAfter` of them pile up (tests free
/// them after every item, to check that nothing needed them).
inline constexpr size_t kFreePassedTokensAfter = 4096;
ast::File parseFile(llvm::SourceMgr &sm, unsigned bufferId, llvm::StringRef path,
                    DiagnosticEngine &diags, llvm::StringRef range,
                    size_t freeAfter = kFreePassedTokensAfter);

} // namespace pipec

#endif // PIPEC_PARSE_PARSER_H
