//===- ASTBuilder.cpp -----------------------------------------------------===//
//
// The generated accessors (c->name(), c->INT()) dynamic_cast every child of
// a node at every call, a fifth of the front end's time on large files. Here
// each node's children are sorted once into tokens and rule contexts, told
// apart by their exact type, and the builder asks that list instead.
//
//===----------------------------------------------------------------------===//

#include "compiler/parse/ASTBuilder.h"

#include "compiler/parse/Literals.h"

#include "llvm/ADT/SmallVector.h"

#include <typeinfo>

using namespace pipec;
using namespace pipec::parse;

namespace pipec::parse {

/// The children of one parse-tree node: its tokens (error-recovery debris
/// too, as the generated accessors count it) and its rules' contexts.
class Children {
public:
  explicit Children(antlr4::ParserRuleContext *c) {
    for (antlr4::tree::ParseTree *child : c->children) {
      const std::type_info &type = typeid(*child);
      if (type == typeid(antlr4::tree::TerminalNodeImpl) ||
          type == typeid(antlr4::tree::ErrorNodeImpl)) {
        antlr4::Token *tok = static_cast<antlr4::tree::TerminalNode *>(child)->getSymbol();
        all.push_back({tok->getType(), tok, nullptr});
      } else {
        auto *rule = static_cast<antlr4::ParserRuleContext *>(child);
        all.push_back({rule->getRuleIndex(), nullptr, rule});
      }
    }
  }

  /// The first token of `type`, or null.
  antlr4::Token *token(size_t type) const {
    for (const Entry &e : all)
      if (e.token && e.kind == type)
        return e.token;
    return nullptr;
  }

  /// The first context of rule `index` (PipeParser::RuleName...), or null.
  template <typename Context> Context *rule(size_t index) const {
    for (const Entry &e : all)
      if (e.rule && e.kind == index)
        return static_cast<Context *>(e.rule);
    return nullptr;
  }

  /// Every context of rule `index`, in order.
  template <typename Context> llvm::SmallVector<Context *, 4> rules(size_t index) const {
    llvm::SmallVector<Context *, 4> found;
    for (const Entry &e : all)
      if (e.rule && e.kind == index)
        found.push_back(static_cast<Context *>(e.rule));
    return found;
  }

private:
  struct Entry {
    size_t kind; ///< the token's type, or the rule's index
    antlr4::Token *token;
    antlr4::ParserRuleContext *rule;
  };
  llvm::SmallVector<Entry, 16> all;
};

} // namespace pipec::parse

llvm::SMRange ASTBuilder::rangeOf(antlr4::ParserRuleContext *c) const {
  if (!c)
    return {};
  return ctx.rangeOf(c->getStart(), c->getStop());
}

/// item : setting | deviceDecl | streamDecl | bufferDecl | stageDecl | letDecl ;
void ASTBuilder::buildItem(PipeParser::ItemContext *c, ast::Pipeline &into) {
  if (!c)
    return;
  Children kids(c);
  if (auto *setting = kids.rule<PipeParser::SettingContext>(PipeParser::RuleSetting))
    into.settings.push_back(buildSetting(setting));
  else if (auto *device = kids.rule<PipeParser::DeviceDeclContext>(PipeParser::RuleDeviceDecl))
    into.devices.push_back(buildDeviceDecl(device));
  else if (auto *stream = kids.rule<PipeParser::StreamDeclContext>(PipeParser::RuleStreamDecl))
    into.streams.push_back(buildStreamDecl(stream));
  else if (auto *buffer = kids.rule<PipeParser::BufferDeclContext>(PipeParser::RuleBufferDecl))
    into.buffers.push_back(buildBufferDecl(buffer));
  else if (auto *stage = kids.rule<PipeParser::StageDeclContext>(PipeParser::RuleStageDecl))
    into.stages.push_back(buildStageDecl(stage));
  else if (auto *let = kids.rule<PipeParser::LetDeclContext>(PipeParser::RuleLetDecl))
    into.constants.push_back(buildLetDecl(let));
}

/// letDecl : LET IDENT ASSIGN amount SEMI ;
ast::LetDecl ASTBuilder::buildLetDecl(PipeParser::LetDeclContext *c) {
  Children kids(c);
  ast::LetDecl l;
  l.range = rangeOf(c);
  if (antlr4::Token *name = kids.token(PipeParser::IDENT))
    l.name = nameOf(ctx, name);
  if (auto *amount = kids.rule<PipeParser::AmountContext>(PipeParser::RuleAmount))
    l.value = buildAmount(amount);
  return l;
}

/// setting : ITERATIONS expr SEMI | SYNC (INFERRED | DECLARED) SEMI ;
ast::Setting ASTBuilder::buildSetting(PipeParser::SettingContext *c) {
  Children kids(c);
  ast::Setting s;
  s.range = rangeOf(c);
  if (kids.token(PipeParser::SYNC)) {
    s.kind = ast::Setting::Sync;
    s.syncDeclared = kids.token(PipeParser::DECLARED) != nullptr;
    return s;
  }
  if (auto *count = kids.rule<PipeParser::ExprContext>(PipeParser::RuleExpr)) {
    ExprBuilder b;
    buildExpr(count, b);
    s.iterations = b.count();
  }
  return s;
}

/// bufferDecl : BUFFER name (LBRACK expr RBRACK)? amount (HOST | ON name)? STATE? SEMI ;
ast::BufferDecl ASTBuilder::buildBufferDecl(PipeParser::BufferDeclContext *c) {
  Children kids(c);
  ast::BufferDecl b;
  b.range = rangeOf(c);
  auto names = kids.rules<PipeParser::NameContext>(PipeParser::RuleName);
  if (!names.empty())
    b.name = buildName(names.front());
  if (kids.token(PipeParser::ON) && names.size() > 1)
    b.device = buildName(names[1]);
  if (auto *slots = kids.rule<PipeParser::ExprContext>(PipeParser::RuleExpr)) {
    ExprBuilder e;
    buildExpr(slots, e);
    b.slots = e.count();
  }
  if (auto *amount = kids.rule<PipeParser::AmountContext>(PipeParser::RuleAmount))
    b.size = buildAmount(amount);
  b.host = kids.token(PipeParser::HOST) != nullptr;
  b.state = kids.token(PipeParser::STATE) != nullptr;
  return b;
}

/// access : (READS | WRITES) LPAREN accessItem (COMMA accessItem)* RPAREN ;
/// accessItem : name (QUALIFIER (LPAREN INT RPAREN)?)? ;
ast::Access ASTBuilder::buildAccess(PipeParser::AccessContext *c) {
  Children kids(c);
  ast::Access a;
  a.range = rangeOf(c);
  a.write = kids.token(PipeParser::WRITES) != nullptr;
  for (auto *item : kids.rules<PipeParser::AccessItemContext>(PipeParser::RuleAccessItem)) {
    Children parts(item);
    auto *n = parts.rule<PipeParser::NameContext>(PipeParser::RuleName);
    if (!n)
      continue; // recovery debris
    a.buffers.push_back(buildName(n));
    if (antlr4::Token *q = parts.token(PipeParser::QUALIFIER)) {
      ast::Qualifier qualifier;
      qualifier.text = ctx.textOf(q);
      if (antlr4::Token *distance = parts.token(PipeParser::INT))
        qualifier.distance = intOf(ctx, distance);
      a.qualifiers.resize(a.buffers.size());
      a.qualifiers.back() = qualifier;
    }
  }
  if (!a.qualifiers.empty())
    a.qualifiers.resize(a.buffers.size());
  return a;
}

/// deviceDecl : DEVICE name SEMI ;
ast::DeviceDecl ASTBuilder::buildDeviceDecl(PipeParser::DeviceDeclContext *c) {
  Children kids(c);
  ast::DeviceDecl d;
  d.range = rangeOf(c);
  if (auto *name = kids.rule<PipeParser::NameContext>(PipeParser::RuleName))
    d.name = buildName(name);
  return d;
}

/// streamDecl : STREAM name (ON name)? (PRIORITY priority)? SEMI ;
ast::StreamDecl ASTBuilder::buildStreamDecl(PipeParser::StreamDeclContext *c) {
  Children kids(c);
  ast::StreamDecl s;
  s.range = rangeOf(c);
  auto names = kids.rules<PipeParser::NameContext>(PipeParser::RuleName);
  if (!names.empty())
    s.name = buildName(names.front());
  if (kids.token(PipeParser::ON) && names.size() > 1)
    s.device = buildName(names[1]);
  if (auto *priority = kids.rule<PipeParser::PriorityContext>(PipeParser::RulePriority))
    s.priority = buildPriority(priority);
  return s;
}

/// priority : HIGH | NORMAL | LOW | MINUS? INT ;
ast::Priority ASTBuilder::buildPriority(PipeParser::PriorityContext *c) {
  Children kids(c);
  ast::Priority p;
  p.range = rangeOf(c);
  if (kids.token(PipeParser::HIGH)) {
    p.kind = ast::PriorityKind::High;
  } else if (kids.token(PipeParser::NORMAL)) {
    p.kind = ast::PriorityKind::Normal;
  } else if (kids.token(PipeParser::LOW)) {
    p.kind = ast::PriorityKind::Low;
  } else if (antlr4::Token *integer = kids.token(PipeParser::INT)) {
    p.kind = ast::PriorityKind::Raw;
    p.raw =
        signedPriority(intOf(ctx, integer).value, kids.token(PipeParser::MINUS) != nullptr);
  }
  return p;
}

/// stageDecl : STAGE name (ON name)? work attrs? access* deps? SEMI ;
ast::StageDecl ASTBuilder::buildStageDecl(PipeParser::StageDeclContext *c) {
  Children kids(c);
  ast::StageDecl s;
  s.range = rangeOf(c);
  auto names = kids.rules<PipeParser::NameContext>(PipeParser::RuleName);
  if (!names.empty())
    s.name = buildName(names[0]);
  if (kids.token(PipeParser::ON) && names.size() > 1) {
    s.stream = buildName(names[1]);
    s.streamList = kids.token(PipeParser::LPAREN) != nullptr;
    for (size_t i = 2; i < names.size(); ++i)
      s.moreStreams.push_back(buildName(names[i]));
  }
  if (auto *work = kids.rule<PipeParser::WorkContext>(PipeParser::RuleWork))
    buildWork(work, s);
  if (auto *attrs = kids.rule<PipeParser::AttrsContext>(PipeParser::RuleAttrs))
    s.attrs = buildAttrs(attrs);
  for (auto *a : kids.rules<PipeParser::AccessContext>(PipeParser::RuleAccess))
    s.accesses.push_back(buildAccess(a));
  if (auto *deps = kids.rule<PipeParser::DepsContext>(PipeParser::RuleDeps))
    s.deps = buildDeps(deps);
  return s;
}

/// work : KERNEL amount | COPY direction amount? (TO name)? | HOST amount
///      | MEMSET amount | CPU amount | collective amount ;
void ASTBuilder::buildWork(PipeParser::WorkContext *c, ast::StageDecl &into) {
  Children kids(c);
  if (antlr4::Token *t = kids.token(PipeParser::KERNEL)) {
    into.kind = StageKind::Kernel;
    into.kindRange = ctx.rangeOf(t);
  } else if (antlr4::Token *t = kids.token(PipeParser::COPY)) {
    into.kind = StageKind::Copy;
    into.kindRange = ctx.rangeOf(t);
  } else if (antlr4::Token *t = kids.token(PipeParser::HOST)) {
    into.kind = StageKind::Host;
    into.kindRange = ctx.rangeOf(t);
  } else if (antlr4::Token *t = kids.token(PipeParser::MEMSET)) {
    into.kind = StageKind::Memset;
    into.kindRange = ctx.rangeOf(t);
  } else if (antlr4::Token *t = kids.token(PipeParser::CPU)) {
    into.kind = StageKind::Cpu;
    into.kindRange = ctx.rangeOf(t);
  } else if (auto *op = kids.rule<PipeParser::CollectiveContext>(PipeParser::RuleCollective)) {
    into.kind = StageKind::Collective;
    into.kindRange = rangeOf(op);
    Children words(op);
    into.collective = words.token(PipeParser::ALLREDUCE)   ? CollectiveOp::AllReduce
                      : words.token(PipeParser::ALLGATHER) ? CollectiveOp::AllGather
                      : words.token(PipeParser::BROADCAST) ? CollectiveOp::Broadcast
                                                           : CollectiveOp::ReduceScatter;
  }
  if (auto *direction = kids.rule<PipeParser::DirectionContext>(PipeParser::RuleDirection))
    into.direction = buildDirection(direction);
  if (auto *amount = kids.rule<PipeParser::AmountContext>(PipeParser::RuleAmount))
    into.amount = buildAmount(amount);
  if (kids.token(PipeParser::TO))
    if (auto *name = kids.rule<PipeParser::NameContext>(PipeParser::RuleName))
      into.peer = buildName(name);
}

/// direction : H2D | D2H | D2D | P2P ;
CopyDirection ASTBuilder::buildDirection(PipeParser::DirectionContext *c) {
  Children kids(c);
  if (kids.token(PipeParser::D2H))
    return CopyDirection::D2H;
  if (kids.token(PipeParser::D2D))
    return CopyDirection::D2D;
  if (kids.token(PipeParser::P2P))
    return CopyDirection::P2P;
  return CopyDirection::H2D;
}

/// amount : expr IDENT? ;
ast::Amount ASTBuilder::buildAmount(PipeParser::AmountContext *c) {
  Children kids(c);
  ExprBuilder b;
  buildAmountExpr(kids, b);
  return b.amount();
}

void ASTBuilder::buildAmountExpr(const Children &kids, ExprBuilder &b) {
  auto *e = kids.rule<PipeParser::ExprContext>(PipeParser::RuleExpr);
  uint32_t root = e ? buildExpr(e, b) : b.number(ctx, nullptr);
  if (antlr4::Token *unit = kids.token(PipeParser::IDENT))
    b.withUnit(ctx, root, unit);
}

/// expr : expr (STAR | SLASH) expr | expr (PLUS | MINUS) expr
///      | LPAREN expr RPAREN | QUANTITY | INT | DECIMAL | IDENT ;
/// Binary operators nest to the left (`a+b+c` is `(a+b)+c`): the left spine
/// is walked in a loop, so that a long chain does not recurse as deep.
uint32_t ASTBuilder::buildExpr(PipeParser::ExprContext *c, ExprBuilder &b) {
  llvm::SmallVector<PipeParser::ExprContext *, 8> spine;
  for (;;) {
    auto operands = Children(c).rules<PipeParser::ExprContext>(PipeParser::RuleExpr);
    if (operands.size() != 2)
      break;
    spine.push_back(c);
    c = operands[0];
  }
  uint32_t value;
  {
    Children kids(c);
    auto *inner = kids.rule<PipeParser::ExprContext>(PipeParser::RuleExpr);
    antlr4::Token *open = kids.token(PipeParser::LPAREN);
    if (open && inner) {
      uint32_t in = buildExpr(inner, b);
      antlr4::Token *close = kids.token(PipeParser::RPAREN);
      value = b.parens(ctx, open, in, close ? close : c->getStop());
    } else if (inner) {
      value = buildExpr(inner, b); // recovery debris: an operator without its right side
    } else if (antlr4::Token *name = kids.token(PipeParser::IDENT)) {
      value = b.constant(ctx, name);
    } else {
      value = b.number(ctx, c->getStart());
    }
  }
  for (auto it = spine.rbegin(); it != spine.rend(); ++it) {
    Children kids(*it);
    auto operands = kids.rules<PipeParser::ExprContext>(PipeParser::RuleExpr);
    size_t op = kids.token(PipeParser::STAR)    ? PipeParser::STAR
                : kids.token(PipeParser::SLASH) ? PipeParser::SLASH
                : kids.token(PipeParser::PLUS)  ? PipeParser::PLUS
                                                : PipeParser::MINUS;
    uint32_t rhs = buildExpr(operands[1], b);
    value = b.binary(op, value, rhs);
  }
  return value;
}

/// attrs : LBRACK attr (COMMA attr)* RBRACK ;
std::vector<ast::Attr> ASTBuilder::buildAttrs(PipeParser::AttrsContext *c) {
  std::vector<ast::Attr> attrs;
  for (auto *a : Children(c).rules<PipeParser::AttrContext>(PipeParser::RuleAttr))
    attrs.push_back(buildAttr(a));
  return attrs;
}

/// attr : name (ASSIGN amount)? ;
ast::Attr ASTBuilder::buildAttr(PipeParser::AttrContext *c) {
  Children kids(c);
  ast::Attr a;
  a.range = rangeOf(c);
  if (auto *name = kids.rule<PipeParser::NameContext>(PipeParser::RuleName))
    a.name = buildName(name);
  if (auto *amount = kids.rule<PipeParser::AmountContext>(PipeParser::RuleAmount)) {
    ExprBuilder b;
    buildAmountExpr(Children(amount), b);
    b.attrValue(a);
  }
  return a;
}

/// deps : DEPENDS_ON LPAREN dep (COMMA dep)* RPAREN ;
std::vector<ast::Dep> ASTBuilder::buildDeps(PipeParser::DepsContext *c) {
  auto list = Children(c).rules<PipeParser::DepContext>(PipeParser::RuleDep);
  std::vector<ast::Dep> deps;
  deps.reserve(list.size());
  for (PipeParser::DepContext *d : list)
    deps.push_back(buildDep(d));
  return deps;
}

/// dep : name (QUALIFIER (LPAREN INT RPAREN)?)? ;
ast::Dep ASTBuilder::buildDep(PipeParser::DepContext *c) {
  Children kids(c);
  ast::Dep d;
  d.range = rangeOf(c);
  if (auto *name = kids.rule<PipeParser::NameContext>(PipeParser::RuleName))
    d.stage = buildName(name);
  if (antlr4::Token *q = kids.token(PipeParser::QUALIFIER)) {
    d.qualifier = std::make_unique<ast::Qualifier>();
    d.qualifier->text = ctx.textOf(q);
    // (K) belongs to a qualifier; an INT without one is recovery debris.
    if (antlr4::Token *distance = kids.token(PipeParser::INT))
      d.qualifier->distance = intOf(ctx, distance);
  }
  return d;
}

/// name : IDENT | KERNEL | COPY | HOST | H2D | D2H | D2D | HIGH | NORMAL | LOW
///      | SYNC | INFERRED | DECLARED | READS | WRITES ;
ast::Name ASTBuilder::buildName(PipeParser::NameContext *c) {
  return nameOf(ctx, c->getStart());
}
