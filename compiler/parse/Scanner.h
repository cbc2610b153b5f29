//===- Scanner.h - The .pipe lexer, written out by hand -------------------===//
//
// The lexer rules of grammar/Pipe.g4 are its specification: the Scanner gives
// the very tokens the generated PipeLexer gives (type, channel, span, line,
// column), keywords, longest match and all; a randomized test holds the two
// equal (tests/unit/ScannerTest.cpp), and the fuzzer compares them on every
// input. One difference, by design: it reads the UTF-8 bytes, and a token's
// [start, stop] are byte offsets where the generated lexer's are code point
// indexes (the same tokens: each ends on a code point's last byte). It is
// written out because the generated lexer was most of the front end's time
// on large files -- ANTLR 4.9 walks a DFA held in locked hash maps for every
// character, over the file decoded to 4 bytes a character -- where this is
// one switch per character and no allocation but the token's.
//
// Internal to compiler/parse/.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PARSE_SCANNER_H
#define PIPEC_PARSE_SCANNER_H

#include "compiler/parse/ByteStream.h"

#include "antlr4-runtime.h"

#include <string>

namespace pipec::parse {

class Scanner : public antlr4::TokenSource {
public:
  /// Scans the bytes `input` holds (the tokens name it as their stream, so
  /// that getText() reads from it).
  explicit Scanner(ByteStream &input);

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
  /// Moves past the bytes up to `end`, counting lines as ANTLR does (only
  /// '\n' starts one) and columns in code points.
  void advanceTo(size_t end);
  std::unique_ptr<antlr4::Token> make(size_t type, size_t channel, size_t start, size_t stop);

  ByteStream &input;
  llvm::StringRef text;
  size_t pos = 0;
  size_t line = 1;
  size_t column = 0;
};

} // namespace pipec::parse

#endif // PIPEC_PARSE_SCANNER_H
