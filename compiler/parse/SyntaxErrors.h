//===- SyntaxErrors.h - ANTLR error recovery, reported in a user's words --===//
//
// Keeps ANTLR's recovery (single-token insertion and deletion, resync) but
// replaces its messages: instead of a token dump, "expected ';' after stream
// declaration", "expected stage name after 'stage'", "expected a time at end
// of file". Every syntax error goes through the diagnostic engine.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PARSE_SYNTAXERRORS_H
#define PIPEC_PARSE_SYNTAXERRORS_H

#include "compiler/parse/ParseContext.h"

#include "DefaultErrorStrategy.h"

namespace pipec::parse {

class PipeErrorStrategy : public antlr4::DefaultErrorStrategy {
public:
  explicit PipeErrorStrategy(ParseContext &ctx) : ctx(ctx) {}

  /// The stream is about to drop its first `drop` tokens and number the
  /// rest from zero: keeps what the quiet-until-boundary rule needs.
  void forgetTokens(antlr4::TokenStream &stream, size_t drop);

  /// Before each declaration the file driver parses with this strategy: an
  /// error in it is a new error, whatever the last declaration left
  /// unfinished (the quiet-until-boundary rule works within one).
  void reset(antlr4::Parser *parser) override {
    antlr4::DefaultErrorStrategy::reset(parser);
    quietUntilBoundary = false;
    lastError = 0;
  }

protected:
  void reportNoViableAlternative(antlr4::Parser *parser,
                                 const antlr4::NoViableAltException &e) override;
  void reportInputMismatch(antlr4::Parser *parser,
                           const antlr4::InputMismatchException &e) override;
  void reportFailedPredicate(antlr4::Parser *parser,
                             const antlr4::FailedPredicateException &e) override;
  void reportUnwantedToken(antlr4::Parser *parser) override;
  void reportMissingToken(antlr4::Parser *parser) override;
  /// Never deletes a word that starts a declaration (or the '}' that ends
  /// the pipeline) as extraneous where the declaration could end: that
  /// would take two declarations for one (`stage ;` twice, one error).
  antlr4::Token *singleTokenDeletion(antlr4::Parser *parser) override;
  /// Skips debris without parse-tree nodes, freeing the tokens as it goes
  /// when the stream is a TokenWindow.
  void consumeUntil(antlr4::Parser *parser, const antlr4::misc::IntervalSet &set) override;

private:
  void report(antlr4::Parser *parser, antlr4::Token *offending);
  bool passesBoundary(antlr4::TokenStream &stream, size_t from, size_t to) const;

  ParseContext &ctx;
  size_t lastError = 0;            ///< token index of the last error
  bool quietUntilBoundary = false; ///< suppress errors until ';' or '}'
};

} // namespace pipec::parse

#endif // PIPEC_PARSE_SYNTAXERRORS_H
