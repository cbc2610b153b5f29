//===- ASTBuilder.cpp -----------------------------------------------------===//

#include "compiler/parse/ASTBuilder.h"

#include <algorithm>
#include <limits>

using namespace pipec;
using namespace pipec::parse;

llvm::SMRange ASTBuilder::rangeOf(antlr4::ParserRuleContext *c) const {
  if (!c)
    return {};
  return ctx.rangeOf(c->getStart(), c->getStop());
}

std::string ASTBuilder::textOf(antlr4::Token *tok) const {
  // Conjured tokens carry text such as "<missing IDENT>": keep it out.
  if (!ctx.isReal(tok))
    return "";
  return tok->getText();
}

/// item : setting | streamDecl | bufferDecl | stageDecl ;
void ASTBuilder::buildItem(PipeParser::ItemContext *c, ast::Pipeline &into) {
  if (!c)
    return;
  if (c->setting())
    into.settings.push_back(buildSetting(c->setting()));
  else if (c->streamDecl())
    into.streams.push_back(buildStreamDecl(c->streamDecl()));
  else if (c->bufferDecl())
    into.buffers.push_back(buildBufferDecl(c->bufferDecl()));
  else if (c->stageDecl())
    into.stages.push_back(buildStageDecl(c->stageDecl()));
}

/// setting : ITERATIONS INT SEMI | SYNC (INFERRED | DECLARED) SEMI ;
ast::Setting ASTBuilder::buildSetting(PipeParser::SettingContext *c) {
  ast::Setting s;
  s.range = rangeOf(c);
  if (c->SYNC()) {
    s.kind = ast::Setting::Sync;
    s.syncDeclared = c->DECLARED() != nullptr;
    return s;
  }
  s.iterations = buildInt(c->INT());
  return s;
}

/// bufferDecl : BUFFER name (LBRACK INT RBRACK)? amount HOST? SEMI ;
ast::BufferDecl ASTBuilder::buildBufferDecl(PipeParser::BufferDeclContext *c) {
  ast::BufferDecl b;
  b.range = rangeOf(c);
  if (c->name())
    b.name = buildName(c->name());
  if (c->INT())
    b.slots = buildInt(c->INT());
  if (c->amount())
    b.size = buildAmount(c->amount());
  b.host = c->HOST() != nullptr;
  return b;
}

/// access : (READS | WRITES) LPAREN name (COMMA name)* RPAREN ;
ast::Access ASTBuilder::buildAccess(PipeParser::AccessContext *c) {
  ast::Access a;
  a.range = rangeOf(c);
  a.write = c->WRITES() != nullptr;
  for (PipeParser::NameContext *n : c->name())
    a.buffers.push_back(buildName(n));
  return a;
}

/// streamDecl : STREAM name (PRIORITY priority)? SEMI ;
ast::StreamDecl ASTBuilder::buildStreamDecl(PipeParser::StreamDeclContext *c) {
  ast::StreamDecl s;
  s.range = rangeOf(c);
  if (c->name())
    s.name = buildName(c->name());
  if (c->priority())
    s.priority = buildPriority(c->priority());
  return s;
}

/// priority : HIGH | NORMAL | LOW | MINUS? INT ;
ast::Priority ASTBuilder::buildPriority(PipeParser::PriorityContext *c) {
  ast::Priority p;
  p.range = rangeOf(c);
  if (c->HIGH()) {
    p.kind = ast::PriorityKind::High;
  } else if (c->NORMAL()) {
    p.kind = ast::PriorityKind::Normal;
  } else if (c->LOW()) {
    p.kind = ast::PriorityKind::Low;
  } else if (c->INT()) {
    p.kind = ast::PriorityKind::Raw;
    uint64_t magnitude = buildInt(c->INT()).value;
    constexpr uint64_t maxMagnitude = std::numeric_limits<int64_t>::max();
    int64_t value = static_cast<int64_t>(std::min(magnitude, maxMagnitude));
    p.raw = c->MINUS() ? -value : value;
  }
  return p;
}

/// stageDecl : STAGE name (ON name)? work attrs? deps? SEMI ;
ast::StageDecl ASTBuilder::buildStageDecl(PipeParser::StageDeclContext *c) {
  ast::StageDecl s;
  s.range = rangeOf(c);
  std::vector<PipeParser::NameContext *> names = c->name();
  if (!names.empty())
    s.name = buildName(names[0]);
  if (c->ON() && names.size() > 1)
    s.stream = buildName(names[1]);
  if (c->work())
    buildWork(c->work(), s);
  if (c->attrs())
    s.attrs = buildAttrs(c->attrs());
  for (PipeParser::AccessContext *a : c->access())
    s.accesses.push_back(buildAccess(a));
  if (c->deps())
    s.deps = buildDeps(c->deps());
  return s;
}

/// work : KERNEL amount | COPY direction amount | HOST amount ;
void ASTBuilder::buildWork(PipeParser::WorkContext *c, ast::StageDecl &into) {
  if (c->KERNEL()) {
    into.kind = StageKind::Kernel;
    into.kindRange = ctx.rangeOf(c->KERNEL()->getSymbol());
  } else if (c->COPY()) {
    into.kind = StageKind::Copy;
    into.kindRange = ctx.rangeOf(c->COPY()->getSymbol());
  } else if (c->HOST()) {
    into.kind = StageKind::Host;
    into.kindRange = ctx.rangeOf(c->HOST()->getSymbol());
  } else if (c->MEMSET()) {
    into.kind = StageKind::Memset;
    into.kindRange = ctx.rangeOf(c->MEMSET()->getSymbol());
  }
  if (c->direction())
    into.direction = buildDirection(c->direction());
  if (c->amount())
    into.amount = buildAmount(c->amount());
}

/// direction : H2D | D2H | D2D ;
CopyDirection ASTBuilder::buildDirection(PipeParser::DirectionContext *c) {
  if (c->D2H())
    return CopyDirection::D2H;
  if (c->D2D())
    return CopyDirection::D2D;
  return CopyDirection::H2D;
}

/// amount : QUANTITY | INT | DECIMAL ;
ast::Amount ASTBuilder::buildAmount(PipeParser::AmountContext *c) {
  ast::Amount a = splitAmount(textOf(c->getStart()));
  a.range = rangeOf(c);
  return a;
}

/// A QUANTITY token as an amount: `48KiB` is {"48", "KiB"}.
ast::Amount ASTBuilder::buildQuantity(antlr4::tree::TerminalNode *t) {
  ast::Amount a = splitAmount(textOf(t->getSymbol()));
  a.range = ctx.rangeOf(t->getSymbol(), t->getSymbol());
  return a;
}

ast::Amount ASTBuilder::splitAmount(const std::string &text) {
  ast::Amount a;
  size_t unitStart = text.find_first_not_of("0123456789.");
  if (unitStart == std::string::npos)
    unitStart = text.size();
  a.number = text.substr(0, unitStart);
  a.unit = text.substr(unitStart);
  return a;
}

/// attrs : LBRACK attr (COMMA attr)* RBRACK ;
std::vector<ast::Attr> ASTBuilder::buildAttrs(PipeParser::AttrsContext *c) {
  std::vector<ast::Attr> attrs;
  for (PipeParser::AttrContext *a : c->attr())
    attrs.push_back(buildAttr(a));
  return attrs;
}

/// attr : name (ASSIGN (INT | QUANTITY))? ;
ast::Attr ASTBuilder::buildAttr(PipeParser::AttrContext *c) {
  ast::Attr a;
  a.range = rangeOf(c);
  if (c->name())
    a.name = buildName(c->name());
  if (c->INT())
    a.value = buildInt(c->INT());
  if (c->QUANTITY())
    a.amount = buildQuantity(c->QUANTITY());
  return a;
}

/// deps : DEPENDS_ON LPAREN dep (COMMA dep)* RPAREN ;
std::vector<ast::Dep> ASTBuilder::buildDeps(PipeParser::DepsContext *c) {
  std::vector<PipeParser::DepContext *> list = c->dep();
  std::vector<ast::Dep> deps;
  deps.reserve(list.size());
  for (PipeParser::DepContext *d : list)
    deps.push_back(buildDep(d));
  return deps;
}

/// dep : name (QUALIFIER (LPAREN INT RPAREN)?)? ;
ast::Dep ASTBuilder::buildDep(PipeParser::DepContext *c) {
  ast::Dep d;
  d.range = rangeOf(c);
  if (c->name())
    d.stage = buildName(c->name());
  if (antlr4::tree::TerminalNode *q = c->QUALIFIER())
    d.qualifier = ast::Name{textOf(q->getSymbol()), ctx.rangeOf(q->getSymbol())};
  if (c->INT())
    d.distance = buildInt(c->INT());
  return d;
}

/// name : IDENT | KERNEL | COPY | HOST | H2D | D2H | D2D | HIGH | NORMAL | LOW
///      | SYNC | INFERRED | DECLARED | READS | WRITES ;
ast::Name ASTBuilder::buildName(PipeParser::NameContext *c) {
  antlr4::Token *tok = c->getStart();
  return {textOf(tok), ctx.rangeOf(tok)};
}

/// INT, saturating at UINT64_MAX.
ast::IntLit ASTBuilder::buildInt(antlr4::tree::TerminalNode *node) {
  ast::IntLit lit;
  if (!node)
    return lit;
  lit.range = ctx.rangeOf(node->getSymbol());
  for (char digit : textOf(node->getSymbol())) {
    uint64_t d = static_cast<uint64_t>(digit - '0');
    if (lit.value > (std::numeric_limits<uint64_t>::max() - d) / 10) {
      lit.value = std::numeric_limits<uint64_t>::max();
      break;
    }
    lit.value = lit.value * 10 + d;
  }
  return lit;
}
