//===- SyntaxErrors.cpp ---------------------------------------------------===//

#include "compiler/parse/SyntaxErrors.h"

#include "compiler/parse/TokenWindow.h"
#include "compiler/parse/Tokens.h"

#include "PipeParser.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

using namespace pipec;
using namespace pipec::parse;
using antlr4::Parser;
using antlr4::ParserRuleContext;
using antlr4::Token;

namespace {

/// Walks up from the rule that failed to the innermost rule that is not
/// `name` or `amount`, which say nothing of their role by themselves.
ParserRuleContext *roleContext(ParserRuleContext *rule) {
  while (rule && rule->parent &&
         (rule->getRuleIndex() == PipeParser::RuleName ||
          rule->getRuleIndex() == PipeParser::RuleAmount ||
          rule->getRuleIndex() == PipeParser::RuleExpr ||
          rule->getRuleIndex() == PipeParser::RuleDep ||
          rule->getRuleIndex() == PipeParser::RuleAttr))
    rule = dynamic_cast<ParserRuleContext *>(rule->parent);
  return rule;
}

/// What kind of name the rule expects: "stage name", "stream name", ...
std::string nameRole(ParserRuleContext *rule) {
  ParserRuleContext *role = roleContext(rule);
  if (!role)
    return "a name";
  switch (role->getRuleIndex()) {
  case PipeParser::RulePipeline:
    return "pipeline name";
  case PipeParser::RuleStreamDecl: {
    auto *stream = static_cast<PipeParser::StreamDeclContext *>(role);
    return stream->ON() ? "device name" : "stream name";
  }
  case PipeParser::RuleDeviceDecl:
    return "device name";
  case PipeParser::RuleStageDecl: {
    auto *stage = static_cast<PipeParser::StageDeclContext *>(role);
    return stage->ON() ? "stream name" : "stage name";
  }
  case PipeParser::RuleDeps:
    return "stage name";
  case PipeParser::RuleBufferDecl:
    return static_cast<PipeParser::BufferDeclContext *>(role)->ON() ? "device name"
                                                                    : "buffer name";
  case PipeParser::RuleAccess:
    return "buffer name";
  case PipeParser::RuleAttrs:
    return "attribute name";
  case PipeParser::RuleLetDecl:
    return "constant name";
  default:
    return "a name";
  }
}

/// What an amount must be where the rule expects one.
std::string amountRole(ParserRuleContext *rule) {
  ParserRuleContext *role = roleContext(rule);
  for (antlr4::tree::ParseTree *r = rule; r && r != role; r = r->parent)
    if (auto *c = dynamic_cast<ParserRuleContext *>(r);
        c && c->getRuleIndex() == PipeParser::RuleAttr)
      return "an integer or a size";
  // Where the expression is no amount of its own: a count.
  const bool count =
      rule && rule->getRuleIndex() == PipeParser::RuleExpr && role && rule->parent == role;
  if (role && role->getRuleIndex() == PipeParser::RuleSetting)
    return "an integer";
  if (role && role->getRuleIndex() == PipeParser::RuleBufferDecl)
    return count ? "an integer" : "a size";
  if (role && role->getRuleIndex() == PipeParser::RuleLetDecl)
    return "a number, a time or a size";
  if (role && role->getRuleIndex() == PipeParser::RuleWork) {
    auto *work = static_cast<PipeParser::WorkContext *>(role);
    if (work->COPY())
      return "a size or a time";
  }
  return "a time";
}

std::string joinAlternatives(const std::vector<std::string> &items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i != 0)
      out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

std::string describeExpected(Parser *parser, ParserRuleContext *rule) {
  antlr4::misc::IntervalSet expected = parser->getExpectedTokens();
  bool names = expected.contains(size_t(PipeParser::IDENT));
  bool amount = expected.contains(size_t(PipeParser::QUANTITY));
  bool integer = expected.contains(size_t(PipeParser::INT));
  // An identifier where an amount starts is a constant, and one after an
  // amount (where its operators may follow) a unit: neither is a name to
  // ask for, and neither are the operators.
  const bool afterAmount = expected.contains(size_t(PipeParser::STAR));
  if (amount || afterAmount)
    names = false;
  std::vector<std::string> items;
  if (names)
    items.push_back(nameRole(rule));
  if (amount)
    items.push_back(amountRole(rule));
  for (ssize_t rawType : expected.toList()) {
    size_t type = static_cast<size_t>(rawType);
    if (names && isNameToken(type))
      continue;
    if (amount && (type == PipeParser::QUANTITY || type == PipeParser::INT ||
                   type == PipeParser::DECIMAL))
      continue;
    if (type == PipeParser::MINUS && integer)
      continue;
    if ((amount || afterAmount) &&
        (type == PipeParser::IDENT || type == PipeParser::LPAREN || type == PipeParser::PLUS ||
         type == PipeParser::MINUS || type == PipeParser::STAR || type == PipeParser::SLASH))
      continue;
    if (type == PipeParser::IDENT && !names)
      continue;
    if (type == PipeParser::INT)
      items.push_back("an integer");
    else if (type == Token::EOF)
      items.push_back("end of file");
    else if (type == PipeParser::QUALIFIER)
      items.push_back("'@prev'");
    else
      items.push_back(parser->getVocabulary().getLiteralName(type));
  }
  // "end of file" only when nothing else would do.
  if (items.size() > 1)
    items.erase(std::remove(items.begin(), items.end(), "end of file"), items.end());
  if (items.empty())
    return "a declaration";
  return joinAlternatives(items);
}

/// For "expected ';' after stream declaration".
const char *declarationName(ParserRuleContext *rule) {
  if (!rule)
    return nullptr;
  switch (rule->getRuleIndex()) {
  case PipeParser::RuleStreamDecl:
    return "stream declaration";
  case PipeParser::RuleDeviceDecl:
    return "device declaration";
  case PipeParser::RuleStageDecl:
    return "stage declaration";
  case PipeParser::RuleSetting:
    return static_cast<PipeParser::SettingContext *>(rule)->SYNC() ? "'sync' setting"
                                                                   : "'iterations' setting";
  case PipeParser::RuleBufferDecl:
    return "buffer declaration";
  default:
    return nullptr;
  }
}

/// The keyword among `expected` nearest `typo` (at most 2 edits, and fewer
/// than the word has), or "".
std::string nearestKeyword(Parser *parser, const antlr4::misc::IntervalSet &expected,
                           llvm::StringRef typo) {
  std::string best;
  unsigned bestDistance = 3;
  for (ssize_t type : expected.toList()) {
    std::string literal = std::string(parser->getVocabulary().getLiteralName(size_t(type)));
    if (literal.size() < 3 || literal.front() != '\'' || literal.back() != '\'')
      continue;
    literal = literal.substr(1, literal.size() - 2);
    if (!std::isalpha(static_cast<unsigned char>(literal.front())))
      continue;
    const unsigned d = typo.edit_distance(literal, true, bestDistance);
    if (d < bestDistance && d < typo.size())
      bestDistance = d, best = literal;
  }
  return best;
}

/// Shortens a token's text for a message.
std::string quoteToken(Token *tok) {
  std::string text = tok->getText();
  if (text.size() > 32)
    text = text.substr(0, 29) + "...";
  return "'" + text + "'";
}

} // namespace

/// Whether a ';' or '}' lies among tokens [from, to) (freed debris is
/// never one: skipUntil keeps them).
bool PipeErrorStrategy::passesBoundary(antlr4::TokenStream &stream, size_t from,
                                       size_t to) const {
  for (size_t i = from; i < to; ++i) {
    Token *tok = stream.get(i);
    if (!tok)
      continue;
    size_t type = tok->getType();
    if (type == PipeParser::SEMI || type == PipeParser::RBRACE)
      return true;
  }
  return false;
}

void PipeErrorStrategy::forgetTokens(antlr4::TokenStream &stream, size_t drop) {
  if (lastError >= drop) {
    lastError -= drop;
    return;
  }
  // Token `drop` becomes token 0, and the scan after the next error
  // starts past it: decide now about the tokens that go.
  if (quietUntilBoundary && passesBoundary(stream, lastError + 1, drop + 1))
    quietUntilBoundary = false;
  lastError = 0;
}

Token *PipeErrorStrategy::singleTokenDeletion(Parser *parser) {
  // Where the declaration could end (';' expected), a word that starts one
  // starts the next: `stage ;` twice is two declarations, not one with an
  // extra 'stage'. Where a name is expected (`stage stream kernel 1us;`),
  // deleting the reserved word is the better guess.
  switch (parser->getInputStream()->LA(1)) {
  case PipeParser::STAGE:
  case PipeParser::STREAM:
  case PipeParser::DEVICE:
  case PipeParser::BUFFER:
  case PipeParser::ITERATIONS:
  case PipeParser::PIPELINE:
  case PipeParser::RBRACE:
    if (parser->getExpectedTokens().contains(size_t(PipeParser::SEMI)))
      return nullptr;
    break;
  default:
    break;
  }
  return DefaultErrorStrategy::singleTokenDeletion(parser);
}

void PipeErrorStrategy::consumeUntil(Parser *parser, const antlr4::misc::IntervalSet &set) {
  auto *window = dynamic_cast<TokenWindow *>(parser->getTokenStream());
  if (!window)
    return DefaultErrorStrategy::consumeUntil(parser, set);
  window->skipUntil(set, antlr4::misc::IntervalSet::of(PipeParser::SEMI)
                             .Or(antlr4::misc::IntervalSet::of(PipeParser::RBRACE)));
}

void PipeErrorStrategy::report(Parser *parser, Token *offending) {
  auto *stream = parser->getTokenStream();
  Token *previous = nullptr;
  if (offending && ctx.isReal(offending) && offending->getTokenIndex() > 0 &&
      offending->getTokenIndex() != static_cast<size_t>(-1))
    previous = stream->get(offending->getTokenIndex() - 1);
  else if (stream->index() > 0)
    previous = stream->LT(-1);

  // After an error that the parser could not simply patch over, stay quiet
  // until it has passed a ';' or '}': what comes before is debris.
  size_t here = ctx.isReal(offending) ? offending->getTokenIndex() : stream->index();
  if (quietUntilBoundary && here >= lastError && !passesBoundary(*stream, lastError + 1, here))
    return;
  lastError = here;
  quietUntilBoundary = true;

  ParserRuleContext *rule = parser->getContext();
  antlr4::misc::IntervalSet expected = parser->getExpectedTokens();
  std::string what = describeExpected(parser, rule);
  llvm::SMRange range = ctx.rangeOf(offending);
  llvm::SMLoc afterPrevious = previous ? ctx.rangeOf(previous).End : llvm::SMLoc();
  std::string msg;

  bool atEnd = !offending || offending->getType() == Token::EOF;
  const char *decl = declarationName(rule);
  bool startsNext = !atEnd && previous &&
                    (offending->getLine() > previous->getLine() ||
                     offending->getType() == PipeParser::RBRACE ||
                     offending->getType() == PipeParser::STAGE ||
                     offending->getType() == PipeParser::STREAM ||
                     offending->getType() == PipeParser::ITERATIONS);
  if (!atEnd && decl && expected.contains(size_t(PipeParser::SEMI)) && previous &&
      startsNext) {
    // A forgotten ';' before the next line or declaration: point just past the
    // last token, as clang does.
    msg = std::string("expected ';' after ") + decl;
    range = {afterPrevious, afterPrevious};
    quietUntilBoundary = false; // the parser inserts the ';' and goes on
  } else if (atEnd) {
    msg = "expected " + what + " at end of file";
    if (afterPrevious.isValid())
      range = {afterPrevious, afterPrevious};
  } else {
    msg = "expected " + what;
    if (previous)
      msg += " after " + quoteToken(previous);
    if (expected.contains(size_t(PipeParser::IDENT)) && isReservedWord(offending->getType()))
      msg += "; " + quoteToken(offending) + " is a reserved word";
    // A misspelt keyword (`kernal`): the nearest one expected here.
    if (offending->getType() == PipeParser::IDENT) {
      const std::string best = nearestKeyword(parser, expected, offending->getText());
      if (!best.empty())
        msg += "; did you mean '" + best + "'?";
    }
    // A misspelt clause (`depend_on(A)`): the word before the '(' is no
    // keyword, and one expected here is a typo away.
    if (offending->getType() == PipeParser::LPAREN && previous &&
        previous->getType() == PipeParser::IDENT) {
      const std::string best = nearestKeyword(parser, expected, previous->getText());
      if (!best.empty()) {
        msg = "unknown clause " + quoteToken(previous) + "; did you mean '" + best + "'?";
        range = ctx.rangeOf(previous);
      }
    }
    // `reads(x) depends_on(A) writes(y)`: a stage's accesses come first.
    if ((offending->getType() == PipeParser::READS ||
         offending->getType() == PipeParser::WRITES) &&
        expected.contains(size_t(PipeParser::SEMI)))
      msg += "; a stage's reads() and writes() come before its depends_on()";
  }
  // `stage A kernel 10us on s;`: the stream written after the work.
  bool inStage = false;
  for (antlr4::tree::ParseTree *r = rule; r; r = r->parent)
    if (auto *c = dynamic_cast<ParserRuleContext *>(r))
      inStage |= c->getRuleIndex() == PipeParser::RuleStageDecl;
  const bool streamAfterWork = !atEnd && inStage && offending->getType() == PipeParser::ON;
  if (!range.Start.isValid())
    range = {ctx.locAt(0), ctx.locAt(0)};
  ctx.syntaxErrors.push_back(range.Start.getPointer());
  // The stage as it should read, from its own tokens: its name, `on`
  // and the stream, then the work written before them.
  std::string rewritten = "stage A on s kernel 10us;";
  if (streamAfterWork) {
    ParserRuleContext *stage = rule;
    while (stage && stage->getRuleIndex() != PipeParser::RuleStageDecl)
      stage = dynamic_cast<ParserRuleContext *>(stage->parent);
    antlr4::TokenStream *tokens = parser->getTokenStream();
    const size_t first = stage ? stage->getStart()->getTokenIndex() : 0;
    if (stage && here + 1 < tokens->size() && first + 2 < here &&
        tokens->get(here + 1)->getType() != Token::EOF) {
      // The work as written (its spacing kept).
      antlr4::CharStream *chars = tokens->getTokenSource()->getInputStream();
      const std::string work = chars->getText(antlr4::misc::Interval(
          tokens->get(first + 2)->getStartIndex(), tokens->get(here - 1)->getStopIndex()));
      rewritten = "stage " + tokens->get(first + 1)->getText() + " on " +
                  tokens->get(here + 1)->getText() + " " + work + ";";
    }
  }
  {
    InFlightDiagnostic error = ctx.diags.error(range, msg);
    if (streamAfterWork)
      error.attachNote(range, "'on STREAM' goes right after the stage's name, before its "
                              "work: '" +
                                  rewritten + "'");
  } // reported here, before the error limit is looked at
  ctx.stopIfNeeded();
}

void PipeErrorStrategy::reportNoViableAlternative(Parser *parser,
                                                  const antlr4::NoViableAltException &e) {
  report(parser, e.getOffendingToken());
}

void PipeErrorStrategy::reportInputMismatch(Parser *parser,
                                            const antlr4::InputMismatchException &e) {
  report(parser, e.getOffendingToken());
}

void PipeErrorStrategy::reportFailedPredicate(Parser *parser,
                                              const antlr4::FailedPredicateException &e) {
  report(parser, e.getOffendingToken());
}

void PipeErrorStrategy::reportUnwantedToken(Parser *parser) {
  if (inErrorRecoveryMode(parser))
    return;
  beginErrorCondition(parser);
  report(parser, parser->getCurrentToken());
}

void PipeErrorStrategy::reportMissingToken(Parser *parser) {
  if (inErrorRecoveryMode(parser))
    return;
  beginErrorCondition(parser);
  report(parser, parser->getCurrentToken());
}
