//===- Scanner.h - The .pipe lexer, written out by hand -------------------===//
//
// The lexer rules of grammar/Pipe.g4 are its specification: the Scanner gives
// the very tokens the generated PipeLexer gives (type, channel, code point
// span, line, column), keywords, longest match and all, a randomized test
// holds the two equal (tests/unit/ScannerTest.cpp), and the fuzzer compares
// them on every input. It is written out because the generated lexer is most
// of the front end's time on large files: ANTLR 4.9 walks a DFA held in
// locked hash maps for every character; this is one switch per character and
// no allocation but the token itself.
//
// Internal to compiler/parse/.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PARSE_SCANNER_H
#define PIPEC_PARSE_SCANNER_H

#include "antlr4-runtime.h"

#include <string>

namespace pipec::parse {

class Scanner : public antlr4::TokenSource {
public:
  /// Scans `points`, the code points `input` holds (the tokens name that
  /// stream as theirs, so that getText() reads from it).
  Scanner(antlr4::CharStream &input, const std::u32string &points);

  std::unique_ptr<antlr4::Token> nextToken() override;
  size_t getLine() const override { return line; }
  size_t getCharPositionInLine() override { return column; }
  antlr4::CharStream *getInputStream() override { return &input; }
  std::string getSourceName() override { return input.getSourceName(); }
  antlr4::TokenFactory<antlr4::CommonToken> *getTokenFactory() override {
    return antlr4::CommonTokenFactory::DEFAULT.get();
  }

private:
  /// The token type of the word [begin, end): a keyword's, or IDENT.
  size_t wordType(size_t begin, size_t end) const;
  /// Moves past code points up to `end`, counting lines as ANTLR does
  /// (only '\n' starts one).
  void advanceTo(size_t end);
  std::unique_ptr<antlr4::Token> make(size_t type, size_t channel,
                                      size_t start, size_t stop);

  antlr4::CharStream &input;
  const std::u32string &text;
  size_t pos = 0;
  size_t line = 1;
  size_t column = 0;
};

} // namespace pipec::parse

#endif // PIPEC_PARSE_SCANNER_H
