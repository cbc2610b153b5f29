//===- DirectParser.h - Well-formed items, parsed without ANTLR's runtime --===//
//
// Internal to compiler/parse/. The grammar (grammar/Pipe.g4) stays the
// specification and ANTLR's parser the authority on everything that is not
// well formed: the FileDriver offers each item here first, and only an item
// this parser declines goes to the generated parser (SLL, then LL with error
// recovery), whose diagnostics are the product's.
//
// Why: on large flat files (one declaration per kernel, as imported traces
// and generated pipelines are) ANTLR 4.9's runtime was most of the front
// end's time -- a context per rule, a node per token, dynamic_casts and
// std::function calls per rule -- while the items themselves are LL(1) and
// almost always well formed. This parser accepts exactly the items the
// grammar accepts and builds the very AST the ASTBuilder builds from ANTLR's
// tree; tests/unit/DirectParserTest.cpp holds the two equal on random
// items, well formed and broken, and the fuzzer compares them on every input.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PARSE_DIRECTPARSER_H
#define PIPEC_PARSE_DIRECTPARSER_H

#include "compiler/ast/AST.h"
#include "compiler/parse/Literals.h"
#include "compiler/parse/ParseContext.h"
#include "compiler/parse/TokenWindow.h"

namespace pipec::parse {

class DirectParser {
public:
  DirectParser(const ParseContext &ctx, TokenWindow &tokens) : ctx(ctx), tokens(tokens) {}

  /// If the tokens at the window's position form one item (a setting, a
  /// stream, a buffer or a stage declaration), consumes them, adds the item
  /// to `into` and answers true. Otherwise answers false, having consumed
  /// nothing and added nothing.
  bool parseItem(ast::Pipeline &into);

private:
  bool setting(ast::Pipeline &into);
  bool letDecl(ast::Pipeline &into);
  bool deviceDecl(ast::Pipeline &into);
  bool streamDecl(ast::Pipeline &into);
  bool priority(ast::Priority &into);
  bool bufferDecl(ast::Pipeline &into);
  bool stageDecl(ast::Pipeline &into);
  bool work(ast::StageDecl &into);
  bool attrs(std::vector<ast::Attr> &into);
  bool access(std::vector<ast::Access> &into);
  bool deps(std::vector<ast::Dep> &into);

  /// The next token, consumed, if it is of `type` (a name, for `name()`);
  /// otherwise null, and nothing consumed.
  antlr4::Token *accept(size_t type);
  template <typename Wanted> antlr4::Token *acceptIf(Wanted wanted);
  antlr4::Token *name();
  bool amount(ExprBuilder &b);
  /// expr, by precedence: sums of products of primaries.
  bool expr(ExprBuilder &b, uint32_t &out);
  /// One level: `sums` (+ and - over products) or products (* and / over
  /// primaries), left to right.
  bool level(ExprBuilder &b, uint32_t &out, bool sums);
  bool primary(ExprBuilder &b, uint32_t &out);
  static bool startsExpr(size_t type);
  /// The declaration's closing ';': its range runs from `first` to it.
  bool endAtSemi(antlr4::Token *first, llvm::SMRange &range);
  size_t next() { return tokens.peek()->getType(); }

  const ParseContext &ctx;
  TokenWindow &tokens;
  /// A stage's attributes as they are read, then moved into one allocation
  /// of their number: a stage's list never grows by doubling.
  std::vector<ast::Attr> attrScratch;
};

} // namespace pipec::parse

#endif // PIPEC_PARSE_DIRECTPARSER_H
