//===- Literals.cpp -------------------------------------------------------===//

#include "compiler/parse/Literals.h"

#include "PipeParser.h"

#include <algorithm>
#include <limits>

using namespace pipec;
using namespace pipec::parse;

namespace {
/// Digits as an integer, saturating at UINT64_MAX.
uint64_t digitsValue(llvm::StringRef text) {
  uint64_t value = 0;
  for (char digit : text) {
    uint64_t d = static_cast<uint64_t>(digit - '0');
    if (value > (std::numeric_limits<uint64_t>::max() - d) / 10)
      return std::numeric_limits<uint64_t>::max();
    value = value * 10 + d;
  }
  return value;
}
} // namespace

ast::IntLit pipec::parse::intOf(const ParseContext &ctx, const antlr4::Token *tok) {
  ast::IntLit lit;
  if (!tok)
    return lit;
  lit.range = ctx.rangeOf(tok);
  lit.value = digitsValue(ctx.textOf(tok));
  return lit;
}

uint32_t ExprBuilder::add(ast::ExprNode node) {
  nodes.push_back(node);
  return static_cast<uint32_t>(nodes.size() - 1);
}

std::shared_ptr<const ast::Expr> ExprBuilder::share() {
  auto expr = std::make_shared<ast::Expr>();
  expr->nodes.assign(nodes.begin(), nodes.end());
  return expr;
}

uint32_t ExprBuilder::number(const ParseContext &ctx, const antlr4::Token *tok) {
  ast::Amount split = splitAmount(ctx.textOf(tok));
  ast::ExprNode node;
  node.kind = ast::ExprNode::Number;
  node.number = split.number;
  node.unit = split.unit;
  node.range = ctx.rangeOf(tok);
  return add(node);
}

uint32_t ExprBuilder::constant(const ParseContext &ctx, const antlr4::Token *tok) {
  ast::ExprNode node;
  node.kind = ast::ExprNode::Constant;
  node.number = ctx.textOf(tok);
  node.range = ctx.rangeOf(tok);
  return add(node);
}

uint32_t ExprBuilder::binary(size_t op, uint32_t lhs, uint32_t rhs) {
  ast::ExprNode node;
  node.kind = op == PipeParser::STAR    ? ast::ExprNode::Mul
              : op == PipeParser::SLASH ? ast::ExprNode::Div
              : op == PipeParser::PLUS  ? ast::ExprNode::Add
                                        : ast::ExprNode::Sub;
  node.lhs = lhs;
  node.rhs = rhs;
  node.range = {nodes[lhs].range.Start, nodes[rhs].range.End};
  return add(node);
}

uint32_t ExprBuilder::parens(const ParseContext &ctx, const antlr4::Token *open,
                             uint32_t inner, const antlr4::Token *close) {
  ast::ExprNode node;
  node.kind = ast::ExprNode::Parens;
  node.lhs = inner;
  node.range = ctx.rangeOf(open, close);
  return add(node);
}

uint32_t ExprBuilder::withUnit(const ParseContext &ctx, uint32_t inner,
                               const antlr4::Token *unit) {
  ast::ExprNode node;
  node.kind = ast::ExprNode::WithUnit;
  node.lhs = inner;
  node.unit = ctx.textOf(unit);
  node.range = {nodes[inner].range.Start, ctx.rangeOf(unit).End};
  return add(node);
}

ast::Amount ExprBuilder::amount() {
  ast::Amount a;
  const ast::ExprNode &root = nodes.back();
  if (nodes.size() == 1 && root.kind == ast::ExprNode::Number) {
    a.number = root.number;
    a.unit = root.unit;
    return a;
  }
  a.expr = share();
  return a;
}

ast::IntLit ExprBuilder::count() {
  ast::IntLit lit;
  const ast::ExprNode &root = nodes.back();
  lit.range = root.range;
  if (nodes.size() == 1 && root.kind == ast::ExprNode::Number && root.unit.empty() &&
      root.number.find('.') == llvm::StringRef::npos) {
    lit.value = digitsValue(root.number);
    return lit;
  }
  lit.expr = share();
  return lit;
}

void ExprBuilder::attrValue(ast::Attr &into) {
  const ast::ExprNode &root = nodes.back();
  if (nodes.size() == 1 && root.kind == ast::ExprNode::Number && root.unit.empty() &&
      root.number.find('.') == llvm::StringRef::npos)
    into.given = count();
  else
    into.given = amount();
}

ast::Amount pipec::parse::splitAmount(llvm::StringRef text) {
  ast::Amount a;
  size_t unitStart = std::min(text.find_first_not_of("0123456789."), text.size());
  a.number = text.take_front(unitStart);
  a.unit = text.drop_front(unitStart);
  return a;
}
