//===- ASTBuilder.h - Parse tree to AST, one function per grammar rule ----===//
//
// Internal to compiler/parse/. The parse tree may hold the parser's
// error-recovery debris (missing children, conjured tokens); every function
// here tolerates it, so a damaged pipeline still yields an AST node.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PARSE_ASTBUILDER_H
#define PIPEC_PARSE_ASTBUILDER_H

#include "compiler/ast/AST.h"
#include "compiler/parse/ParseContext.h"

#include "PipeParser.h"

namespace pipec::parse {

class Children;
class ExprBuilder;

class ASTBuilder {
public:
  explicit ASTBuilder(ParseContext &ctx) : ctx(ctx) {}

  /// Adds the item to `into`.
  void buildItem(PipeParser::ItemContext *c, ast::Pipeline &into);

private:
  ast::Setting buildSetting(PipeParser::SettingContext *c);
  ast::DeviceDecl buildDeviceDecl(PipeParser::DeviceDeclContext *c);
  ast::StreamDecl buildStreamDecl(PipeParser::StreamDeclContext *c);
  ast::Priority buildPriority(PipeParser::PriorityContext *c);
  ast::StageDecl buildStageDecl(PipeParser::StageDeclContext *c);
  void buildWork(PipeParser::WorkContext *c, ast::StageDecl &into);
  CopyDirection buildDirection(PipeParser::DirectionContext *c);
  ast::Amount buildAmount(PipeParser::AmountContext *c);
  void buildAmountExpr(const Children &kids, ExprBuilder &b);
  uint32_t buildExpr(PipeParser::ExprContext *c, ExprBuilder &b);
  ast::LetDecl buildLetDecl(PipeParser::LetDeclContext *c);
  ast::BufferDecl buildBufferDecl(PipeParser::BufferDeclContext *c);
  ast::Access buildAccess(PipeParser::AccessContext *c);
  std::vector<ast::Attr> buildAttrs(PipeParser::AttrsContext *c);
  ast::Attr buildAttr(PipeParser::AttrContext *c);
  std::vector<ast::Dep> buildDeps(PipeParser::DepsContext *c);
  ast::Dep buildDep(PipeParser::DepContext *c);
  ast::Name buildName(PipeParser::NameContext *c);

  llvm::SMRange rangeOf(antlr4::ParserRuleContext *c) const;

  ParseContext &ctx;
};

} // namespace pipec::parse

#endif // PIPEC_PARSE_ASTBUILDER_H
