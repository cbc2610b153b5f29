//===- Literals.h - Names, integers and amounts from single tokens --------===//
//
// Internal to compiler/parse/. Shared by the two ways an item becomes AST:
// the DirectParser's and the ASTBuilder's (over ANTLR's parse tree), so that
// both make the very same nodes from the same tokens.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PARSE_LITERALS_H
#define PIPEC_PARSE_LITERALS_H

#include "compiler/ast/AST.h"
#include "compiler/parse/ParseContext.h"

namespace pipec::parse {

/// A name token (IDENT, or a word the `name` rule allows).
inline ast::Name nameOf(const ParseContext &ctx, const antlr4::Token *tok) {
  return {ctx.textOf(tok)};
}

/// An INT token's value, saturating at UINT64_MAX; zero with no range for a
/// missing token.
ast::IntLit intOf(const ParseContext &ctx, const antlr4::Token *tok);

/// `text` split at its unit: `48KiB` is {"48", "KiB"}.
ast::Amount splitAmount(llvm::StringRef text);

/// An amount token (QUANTITY, INT or DECIMAL), split and placed.
inline ast::Amount amountOf(const ParseContext &ctx, const antlr4::Token *tok) {
  return splitAmount(ctx.textOf(tok));
}

/// A `priority` integer with its sign, saturating at INT64_MAX's magnitude.
inline int64_t signedPriority(uint64_t magnitude, bool negative) {
  constexpr uint64_t most = static_cast<uint64_t>(INT64_MAX);
  const int64_t value = static_cast<int64_t>(magnitude < most ? magnitude : most);
  return negative ? -value : value;
}

} // namespace pipec::parse

#endif // PIPEC_PARSE_LITERALS_H
