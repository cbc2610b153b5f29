//===- TokenSource.h - The lexer's tokens, less comments and bad characters ===//
//
// Wraps the lexer (the Scanner; the generated PipeLexer in tests). Characters that start no
// token reach here as BAD_CHAR tokens: each run of them becomes one "unexpected character"
// error and is dropped, so the parser never sees it. Comments are dropped too, after checking
// that block comments are closed.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PARSE_TOKENSOURCE_H
#define PIPEC_PARSE_TOKENSOURCE_H

#include "compiler/parse/ParseContext.h"

#include "PipeLexer.h"

namespace pipec::parse {

class FilteringTokenSource : public antlr4::TokenSource {
public:
  FilteringTokenSource(antlr4::TokenSource &lexer, ParseContext &ctx)
      : lexer(lexer), ctx(ctx) {}

  std::unique_ptr<antlr4::Token> nextToken() override;
  size_t getLine() const override { return lexer.getLine(); }
  size_t getCharPositionInLine() override { return lexer.getCharPositionInLine(); }
  antlr4::CharStream *getInputStream() override { return lexer.getInputStream(); }
  std::string getSourceName() override { return lexer.getSourceName(); }
  antlr4::TokenFactory<antlr4::CommonToken> *getTokenFactory() override {
    return lexer.getTokenFactory();
  }

private:
  std::unique_ptr<antlr4::Token> pull();
  void reportBadChars(size_t first, size_t last);

  antlr4::TokenSource &lexer;
  ParseContext &ctx;
  std::unique_ptr<antlr4::Token> pending;
  /// '(' open since the last ';', '{' or '}'.
  unsigned parens = 0;
  static constexpr unsigned kMaxParens = 64;
};

} // namespace pipec::parse

#endif // PIPEC_PARSE_TOKENSOURCE_H
