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

#include "llvm/ADT/SmallVector.h"

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

/// Builds an expression node by node, children first (both parsers build
/// the same nodes in the same order), then makes an Amount or an IntLit of
/// it: one literal stays a plain literal, without an expression.
class ExprBuilder {
public:
  /// QUANTITY, INT or DECIMAL.
  uint32_t number(const ParseContext &ctx, const antlr4::Token *tok);
  /// IDENT: a constant.
  uint32_t constant(const ParseContext &ctx, const antlr4::Token *tok);
  /// `lhs OP rhs`, OP being the token `op` (STAR, SLASH, PLUS or MINUS).
  uint32_t binary(size_t op, uint32_t lhs, uint32_t rhs);
  /// `( inner )`.
  uint32_t parens(const ParseContext &ctx, const antlr4::Token *open, uint32_t inner,
                  const antlr4::Token *close);
  /// `inner UNIT`.
  uint32_t withUnit(const ParseContext &ctx, uint32_t inner, const antlr4::Token *unit);

  /// The amount whose root is the last node built.
  ast::Amount amount();
  /// The count (`iterations`, a ring's slots) whose root is the last node.
  ast::IntLit count();
  /// An attribute's value: an integer literal as `value`, else `amount`.
  void attrValue(ast::Attr &into);

private:
  uint32_t add(ast::ExprNode node);
  /// The whole expression, made only when it is more than one literal.
  std::shared_ptr<const ast::Expr> share();
  /// Built here; copied out only for an expression (most amounts are one
  /// literal, and a million of them allocate nothing).
  llvm::SmallVector<ast::ExprNode, 4> nodes;
};

/// A `priority` integer with its sign, saturating at INT64_MAX's magnitude.
inline int64_t signedPriority(uint64_t magnitude, bool negative) {
  constexpr uint64_t most = static_cast<uint64_t>(INT64_MAX);
  const int64_t value = static_cast<int64_t>(magnitude < most ? magnitude : most);
  return negative ? -value : value;
}

} // namespace pipec::parse

#endif // PIPEC_PARSE_LITERALS_H
