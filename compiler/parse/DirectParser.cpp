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

using namespace pipec;
using namespace pipec::parse;

template <typename Wanted> antlr4::Token *DirectParser::acceptIf(Wanted wanted) {
  antlr4::Token *tok = tokens.peek();
  if (!wanted(tok->getType()))
    return nullptr;
  tokens.advance();
  return tok;
}

antlr4::Token *DirectParser::accept(size_t type) {
  return acceptIf([type](size_t t) { return t == type; });
}

/// name : IDENT | KERNEL | COPY | ... (Tokens.h: isNameToken)
antlr4::Token *DirectParser::name() { return acceptIf(isNameToken); }

/// amount : QUANTITY | INT | DECIMAL ;
antlr4::Token *DirectParser::amount() {
  return acceptIf([](size_t t) {
    return t == PipeParser::QUANTITY || t == PipeParser::INT ||
           t == PipeParser::DECIMAL;
  });
}

bool DirectParser::endAtSemi(antlr4::Token *first, llvm::SMRange &range) {
  antlr4::Token *semi = accept(PipeParser::SEMI);
  if (!semi)
    return false;
  range = ctx.rangeOf(first, semi);
  return true;
}

/// item : setting | streamDecl | bufferDecl | stageDecl ;
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
  case PipeParser::BUFFER:
    matched = bufferDecl(into);
    break;
  case PipeParser::ITERATIONS:
  case PipeParser::SYNC:
    matched = setting(into);
    break;
  default:
    break;
  }
  if (!matched)
    tokens.seek(start);
  return matched;
}

/// setting : ITERATIONS INT SEMI | SYNC (INFERRED | DECLARED) SEMI ;
bool DirectParser::setting(ast::Pipeline &into) {
  ast::Setting s;
  antlr4::Token *first = tokens.peek();
  if (accept(PipeParser::ITERATIONS)) {
    antlr4::Token *count = accept(PipeParser::INT);
    if (!count)
      return false;
    s.iterations = intOf(ctx, count);
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

/// streamDecl : STREAM name (PRIORITY priority)? SEMI ;
bool DirectParser::streamDecl(ast::Pipeline &into) {
  ast::StreamDecl s;
  antlr4::Token *first = tokens.peek();
  tokens.advance(); // STREAM
  antlr4::Token *n = name();
  if (!n)
    return false;
  s.name = nameOf(ctx, n);
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

/// bufferDecl : BUFFER name (LBRACK INT RBRACK)? amount HOST? SEMI ;
bool DirectParser::bufferDecl(ast::Pipeline &into) {
  ast::BufferDecl b;
  antlr4::Token *first = tokens.peek();
  tokens.advance(); // BUFFER
  antlr4::Token *n = name();
  if (!n)
    return false;
  b.name = nameOf(ctx, n);
  if (accept(PipeParser::LBRACK)) {
    antlr4::Token *slots = accept(PipeParser::INT);
    if (!slots || !accept(PipeParser::RBRACK))
      return false;
    b.slots = intOf(ctx, slots);
  }
  antlr4::Token *size = amount();
  if (!size)
    return false;
  b.size = amountOf(ctx, size);
  b.host = accept(PipeParser::HOST) != nullptr;
  b.state = accept(PipeParser::STATE) != nullptr;
  if (!endAtSemi(first, b.range))
    return false;
  into.buffers.push_back(b);
  return true;
}

/// stageDecl : STAGE name (ON name)? work attrs? access* deps? SEMI ;
bool DirectParser::stageDecl(ast::Pipeline &into) {
  ast::StageDecl s;
  antlr4::Token *first = tokens.peek();
  tokens.advance(); // STAGE
  antlr4::Token *n = name();
  if (!n)
    return false;
  s.name = nameOf(ctx, n);
  if (accept(PipeParser::ON)) {
    antlr4::Token *stream = name();
    if (!stream)
      return false;
    s.stream = nameOf(ctx, stream);
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
///      | CPU amount ;
/// direction : H2D | D2H | D2D ;
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
    else
      return false;
    if (antlr4::Token *size = amount())
      into.amount = amountOf(ctx, size);
    return true;
  }
  antlr4::Token *size = amount();
  if (!size)
    return false;
  into.amount = amountOf(ctx, size);
  return true;
}

/// attrs : LBRACK attr (COMMA attr)* RBRACK ;
/// attr : name (ASSIGN (INT | QUANTITY))? ;
bool DirectParser::attrs(std::vector<ast::Attr> &into) {
  tokens.advance(); // LBRACK
  do {
    ast::Attr a;
    antlr4::Token *n = name();
    if (!n)
      return false;
    a.name = nameOf(ctx, n);
    if (accept(PipeParser::ASSIGN)) {
      if (antlr4::Token *value = accept(PipeParser::INT))
        a.value = intOf(ctx, value);
      else if (antlr4::Token *size = accept(PipeParser::QUANTITY))
        a.amount = amountOf(ctx, size);
      else
        return false;
    }
    a.range = ctx.rangeOf(n, tokens.previous());
    into.push_back(a);
  } while (accept(PipeParser::COMMA));
  return accept(PipeParser::RBRACK) != nullptr;
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
