//===- DirectParser.cpp ---------------------------------------------------===//
//
// One function per grammar rule, each answering whether its rule matched;
// nodes are added to their parent only once the whole item has matched.
// Ranges are as the ASTBuilder takes them from a rule's context: from its
// first token to its last.
//
//===----------------------------------------------------------------------===//

#include "compiler/parse/DirectParser.h"

#include "compiler/parse/Literals.h"
#include "compiler/parse/Tokens.h"

#include <algorithm>
#include <iterator>

using namespace pipec;
using namespace pipec::parse;

static bool isLiteral(size_t t) {
  return t == PipeParser::QUANTITY || t == PipeParser::INT || t == PipeParser::DECIMAL;
}

template <typename Wanted> antlr4::Token *DirectParser::acceptIf(Wanted wanted) {
  antlr4::Token *tok = tokens.peek();
  if (!wanted(tok->getType()))
    return nullptr;
  tokens.advance();
  return tok;
}

bool DirectParser::startsExpr(size_t type) {
  return isLiteral(type) || type == PipeParser::IDENT || type == PipeParser::LPAREN;
}

antlr4::Token *DirectParser::accept(size_t type) {
  return acceptIf([type](size_t t) { return t == type; });
}

/// name : IDENT | KERNEL | COPY | ... (Tokens.h: isNameToken)
antlr4::Token *DirectParser::name() { return acceptIf(isNameToken); }

/// amount : expr IDENT? ;
bool DirectParser::amount(ExprBuilder &b) {
  uint32_t root;
  if (!expr(b, root))
    return false;
  if (antlr4::Token *unit = accept(PipeParser::IDENT))
    b.withUnit(ctx, root, unit);
  return true;
}

/// expr : expr (STAR | SLASH) expr | expr (PLUS | MINUS) expr
///      | LPAREN expr RPAREN | QUANTITY | INT | DECIMAL | IDENT ;
/// As ANTLR reads the left-recursive rule: `*` and `/` bind tighter than
/// `+` and `-`, and each nests to the left.
bool DirectParser::expr(ExprBuilder &b, uint32_t &out) { return level(b, out, true); }

bool DirectParser::level(ExprBuilder &b, uint32_t &out, bool sums) {
  auto operand = [&](uint32_t &v) { return sums ? level(b, v, false) : primary(b, v); };
  auto joins = [&](size_t t) {
    return sums ? t == PipeParser::PLUS || t == PipeParser::MINUS
                : t == PipeParser::STAR || t == PipeParser::SLASH;
  };
  if (!operand(out))
    return false;
  while (joins(next())) {
    size_t op = next();
    tokens.advance();
    uint32_t rhs;
    if (!operand(rhs))
      return false;
    out = b.binary(op, out, rhs);
  }
  return true;
}

bool DirectParser::primary(ExprBuilder &b, uint32_t &out) {
  if (antlr4::Token *literal = acceptIf(isLiteral)) {
    out = b.number(ctx, literal);
    return true;
  }
  if (antlr4::Token *name = accept(PipeParser::IDENT)) {
    out = b.constant(ctx, name);
    return true;
  }
  // The token source passes at most 64 '(' open at once (TokenSource.h):
  // this recursion is that deep at most.
  antlr4::Token *open = accept(PipeParser::LPAREN);
  uint32_t inner;
  if (!open || !expr(b, inner))
    return false;
  antlr4::Token *close = accept(PipeParser::RPAREN);
  if (!close)
    return false;
  out = b.parens(ctx, open, inner, close);
  return true;
}

bool DirectParser::endAtSemi(antlr4::Token *first, llvm::SMRange &range) {
  antlr4::Token *semi = accept(PipeParser::SEMI);
  if (!semi)
    return false;
  range = ctx.rangeOf(first, semi);
  return true;
}

/// item : setting | deviceDecl | streamDecl | bufferDecl | stageDecl | letDecl ;
bool DirectParser::parseItem(ast::Pipeline &into) {
  const size_t start = tokens.index();
  bool matched = false;
  switch (next()) {
  case PipeParser::STAGE:
    matched = stageDecl(into);
    break;
  case PipeParser::STREAM:
    matched = streamDecl(into);
    break;
  case PipeParser::DEVICE:
    matched = deviceDecl(into);
    break;
  case PipeParser::BUFFER:
    matched = bufferDecl(into);
    break;
  case PipeParser::ITERATIONS:
  case PipeParser::SYNC:
    matched = setting(into);
    break;
  case PipeParser::LET:
    matched = letDecl(into);
    break;
  default:
    break;
  }
  if (!matched)
    tokens.seek(start);
  return matched;
}

/// letDecl : LET IDENT ASSIGN amount SEMI ;
bool DirectParser::letDecl(ast::Pipeline &into) {
  ast::LetDecl l;
  antlr4::Token *first = tokens.peek();
  tokens.advance(); // LET
  antlr4::Token *n = accept(PipeParser::IDENT);
  if (!n || !accept(PipeParser::ASSIGN))
    return false;
  l.name = nameOf(ctx, n);
  ExprBuilder value;
  if (!amount(value))
    return false;
  l.value = value.amount();
  if (!endAtSemi(first, l.range))
    return false;
  into.constants.push_back(std::move(l));
  return true;
}

/// setting : ITERATIONS expr SEMI | SYNC (INFERRED | DECLARED) SEMI ;
bool DirectParser::setting(ast::Pipeline &into) {
  ast::Setting s;
  antlr4::Token *first = tokens.peek();
  if (accept(PipeParser::ITERATIONS)) {
    ExprBuilder count;
    uint32_t root;
    if (!expr(count, root))
      return false;
    s.iterations = count.count();
  } else {
    tokens.advance(); // SYNC
    s.kind = ast::Setting::Sync;
    if (accept(PipeParser::DECLARED))
      s.syncDeclared = true;
    else if (!accept(PipeParser::INFERRED))
      return false;
  }
  if (!endAtSemi(first, s.range))
    return false;
  into.settings.push_back(s);
  return true;
}

/// deviceDecl : DEVICE name SEMI ;
bool DirectParser::deviceDecl(ast::Pipeline &into) {
  ast::DeviceDecl d;
  antlr4::Token *first = tokens.peek();
  tokens.advance(); // DEVICE
  antlr4::Token *n = name();
  if (!n)
    return false;
  d.name = nameOf(ctx, n);
  if (!endAtSemi(first, d.range))
    return false;
  into.devices.push_back(d);
  return true;
}

/// streamDecl : STREAM name (ON name)? (PRIORITY priority)? SEMI ;
bool DirectParser::streamDecl(ast::Pipeline &into) {
  ast::StreamDecl s;
  antlr4::Token *first = tokens.peek();
  tokens.advance(); // STREAM
  antlr4::Token *n = name();
  if (!n)
    return false;
  s.name = nameOf(ctx, n);
  if (accept(PipeParser::ON)) {
    antlr4::Token *device = name();
    if (!device)
      return false;
    s.device = nameOf(ctx, device);
  }
  if (accept(PipeParser::PRIORITY) && !priority(s.priority))
    return false;
  if (!endAtSemi(first, s.range))
    return false;
  into.streams.push_back(s);
  return true;
}

/// priority : HIGH | NORMAL | LOW | MINUS? INT ;
bool DirectParser::priority(ast::Priority &into) {
  antlr4::Token *first = tokens.peek();
  if (accept(PipeParser::HIGH)) {
    into.kind = ast::PriorityKind::High;
  } else if (accept(PipeParser::NORMAL)) {
    into.kind = ast::PriorityKind::Normal;
  } else if (accept(PipeParser::LOW)) {
    into.kind = ast::PriorityKind::Low;
  } else {
    const bool negative = accept(PipeParser::MINUS) != nullptr;
    antlr4::Token *integer = accept(PipeParser::INT);
    if (!integer)
      return false;
    into.kind = ast::PriorityKind::Raw;
    into.raw = signedPriority(intOf(ctx, integer).value, negative);
  }
  into.range = ctx.rangeOf(first, tokens.previous());
  return true;
}

/// bufferDecl : BUFFER name (LBRACK expr RBRACK)? amount (HOST | ON name)? STATE? SEMI ;
bool DirectParser::bufferDecl(ast::Pipeline &into) {
  ast::BufferDecl b;
  antlr4::Token *first = tokens.peek();
  tokens.advance(); // BUFFER
  antlr4::Token *n = name();
  if (!n)
    return false;
  b.name = nameOf(ctx, n);
  if (accept(PipeParser::LBRACK)) {
    ExprBuilder slots;
    uint32_t root;
    if (!expr(slots, root) || !accept(PipeParser::RBRACK))
      return false;
    b.slots = slots.count();
  }
  ExprBuilder size;
  if (!amount(size))
    return false;
  b.size = size.amount();
  b.host = accept(PipeParser::HOST) != nullptr;
  if (!b.host && accept(PipeParser::ON)) {
    antlr4::Token *device = name();
    if (!device)
      return false;
    b.device = nameOf(ctx, device);
  }
  b.state = accept(PipeParser::STATE) != nullptr;
  if (!endAtSemi(first, b.range))
    return false;
  into.buffers.push_back(b);
  return true;
}

/// stageDecl : STAGE name (ON (name | LPAREN name (COMMA name)* RPAREN))?
///             work attrs? access* deps? SEMI ;
bool DirectParser::stageDecl(ast::Pipeline &into) {
  ast::StageDecl s;
  antlr4::Token *first = tokens.peek();
  tokens.advance(); // STAGE
  antlr4::Token *n = name();
  if (!n)
    return false;
  s.name = nameOf(ctx, n);
  if (accept(PipeParser::ON)) {
    s.streamList = accept(PipeParser::LPAREN) != nullptr;
    antlr4::Token *stream = name();
    if (!stream)
      return false;
    s.stream = nameOf(ctx, stream);
    if (s.streamList) {
      while (accept(PipeParser::COMMA)) {
        antlr4::Token *more = name();
        if (!more)
          return false;
        s.moreStreams.push_back(nameOf(ctx, more));
      }
      if (!accept(PipeParser::RPAREN))
        return false;
    }
  }
  if (!work(s))
    return false;
  if (next() == PipeParser::LBRACK && !attrs(s.attrs))
    return false;
  while (next() == PipeParser::READS || next() == PipeParser::WRITES)
    if (!access(s.accesses))
      return false;
  if (next() == PipeParser::DEPENDS_ON && !deps(s.deps))
    return false;
  if (!endAtSemi(first, s.range))
    return false;
  into.stages.push_back(std::move(s));
  return true;
}

/// work : KERNEL amount | COPY direction amount? | HOST amount | MEMSET amount
///      | CPU amount | collective amount ;
/// direction : H2D | D2H | D2D | P2P ;
/// collective : ALLREDUCE | ALLGATHER | REDUCESCATTER | BROADCAST ;
bool DirectParser::work(ast::StageDecl &into) {
  antlr4::Token *keyword = tokens.peek();
  switch (next()) {
  case PipeParser::KERNEL:
    into.kind = StageKind::Kernel;
    break;
  case PipeParser::COPY:
    into.kind = StageKind::Copy;
    break;
  case PipeParser::HOST:
    into.kind = StageKind::Host;
    break;
  case PipeParser::MEMSET:
    into.kind = StageKind::Memset;
    break;
  case PipeParser::CPU:
    into.kind = StageKind::Cpu;
    break;
  case PipeParser::ALLREDUCE:
  case PipeParser::ALLGATHER:
  case PipeParser::REDUCESCATTER:
  case PipeParser::BROADCAST:
    into.kind = StageKind::Collective;
    into.collective = next() == PipeParser::ALLREDUCE   ? CollectiveOp::AllReduce
                      : next() == PipeParser::ALLGATHER ? CollectiveOp::AllGather
                      : next() == PipeParser::BROADCAST ? CollectiveOp::Broadcast
                                                        : CollectiveOp::ReduceScatter;
    break;
  default:
    return false;
  }
  tokens.advance();
  into.kindRange = ctx.rangeOf(keyword);
  if (into.kind == StageKind::Copy) {
    if (accept(PipeParser::H2D))
      into.direction = CopyDirection::H2D;
    else if (accept(PipeParser::D2H))
      into.direction = CopyDirection::D2H;
    else if (accept(PipeParser::D2D))
      into.direction = CopyDirection::D2D;
    else if (accept(PipeParser::P2P))
      into.direction = CopyDirection::P2P;
    else
      return false;
    if (startsExpr(next())) {
      ExprBuilder size;
      if (!amount(size))
        return false;
      into.amount = size.amount();
    }
    if (accept(PipeParser::TO)) {
      antlr4::Token *device = name();
      if (!device)
        return false;
      into.peer = nameOf(ctx, device);
    }
    return true;
  }
  ExprBuilder size;
  if (!amount(size))
    return false;
  into.amount = size.amount();
  return true;
}

/// attrs : LBRACK attr (COMMA attr)* RBRACK ;
/// attr : name (ASSIGN amount)? ;
bool DirectParser::attrs(std::vector<ast::Attr> &into) {
  tokens.advance(); // LBRACK
  std::vector<ast::Attr> &list = attrScratch;
  list.clear();
  auto done = [&](bool ok) {
    into.reserve(into.size() + list.size());
    std::move(list.begin(), list.end(), std::back_inserter(into));
    return ok;
  };
  do {
    ast::Attr a;
    antlr4::Token *n = name();
    if (!n)
      return done(false);
    a.name = nameOf(ctx, n);
    if (accept(PipeParser::ASSIGN)) {
      ExprBuilder value;
      if (!amount(value))
        return done(false);
      value.attrValue(a);
    }
    a.range = ctx.rangeOf(n, tokens.previous());
    list.push_back(std::move(a));
  } while (accept(PipeParser::COMMA));
  return done(accept(PipeParser::RBRACK) != nullptr);
}

/// access : (READS | WRITES) LPAREN name (COMMA name)* RPAREN ;
bool DirectParser::access(std::vector<ast::Access> &into) {
  ast::Access a;
  antlr4::Token *first = tokens.peek();
  a.write = first->getType() == PipeParser::WRITES;
  tokens.advance();
  if (!accept(PipeParser::LPAREN))
    return false;
  do {
    antlr4::Token *n = name();
    if (!n)
      return false;
    a.buffers.push_back(nameOf(ctx, n));
    // accessItem : name (QUALIFIER (LPAREN INT RPAREN)?)? ;
    if (antlr4::Token *q = accept(PipeParser::QUALIFIER)) {
      ast::Qualifier qualifier;
      qualifier.text = ctx.textOf(q);
      if (accept(PipeParser::LPAREN)) {
        antlr4::Token *distance = accept(PipeParser::INT);
        if (!distance || !accept(PipeParser::RPAREN))
          return false;
        qualifier.distance = intOf(ctx, distance);
      }
      a.qualifiers.resize(a.buffers.size());
      a.qualifiers.back() = qualifier;
    }
  } while (accept(PipeParser::COMMA));
  if (!a.qualifiers.empty())
    a.qualifiers.resize(a.buffers.size());
  antlr4::Token *close = accept(PipeParser::RPAREN);
  if (!close)
    return false;
  a.range = ctx.rangeOf(first, close);
  into.push_back(std::move(a));
  return true;
}

/// deps : DEPENDS_ON LPAREN dep (COMMA dep)* RPAREN ;
/// dep : name (QUALIFIER (LPAREN INT RPAREN)?)? ;
bool DirectParser::deps(std::vector<ast::Dep> &into) {
  tokens.advance(); // DEPENDS_ON
  if (!accept(PipeParser::LPAREN))
    return false;
  do {
    ast::Dep d;
    antlr4::Token *n = name();
    if (!n)
      return false;
    d.stage = nameOf(ctx, n);
    if (antlr4::Token *q = accept(PipeParser::QUALIFIER)) {
      d.qualifier = std::make_unique<ast::Qualifier>();
      d.qualifier->text = ctx.textOf(q);
      if (accept(PipeParser::LPAREN)) {
        antlr4::Token *distance = accept(PipeParser::INT);
        if (!distance || !accept(PipeParser::RPAREN))
          return false;
        d.qualifier->distance = intOf(ctx, distance);
      }
    }
    d.range = ctx.rangeOf(n, tokens.previous());
    into.push_back(std::move(d));
  } while (accept(PipeParser::COMMA));
  return accept(PipeParser::RPAREN) != nullptr;
}
