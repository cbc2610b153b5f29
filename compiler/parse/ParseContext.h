//===- ParseContext.h - State shared by the parser's pieces (internal) ----===//
//
// Internal to compiler/parse/: ANTLR types may appear here, and nowhere above.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PARSE_PARSECONTEXT_H
#define PIPEC_PARSE_PARSECONTEXT_H

#include "compiler/diag/Diagnostics.h"
#include "llvm/ADT/StringRef.h"

#include "Token.h"

#include <vector>

namespace pipec::parse {

/// Thrown to abandon parsing once the error limit is reached.
struct StopParsing {};

class ParseContext {
public:
  /// `source`: the bytes parsed, inside a SourceMgr buffer.
  ParseContext(llvm::StringRef source, DiagnosticEngine &diags)
      : source(source), diags(diags) {}

  /// The location of byte `offset` (tokens span byte offsets).
  llvm::SMLoc locAt(size_t offset) const {
    return llvm::SMLoc::getFromPointer(source.data() + offset);
  }
  bool isReal(const antlr4::Token *tok) const {
    return tok && tok->getStartIndex() != kInvalidIndex &&
           tok->getStopIndex() != kInvalidIndex && tok->getStartIndex() <= source.size();
  }
  /// A token's text, in the source buffer ("" for the end of the file and
  /// for a token the parser conjured while recovering: its text, such as
  /// "<missing IDENT>", is not the user's). AST nodes keep only this text,
  /// their range being where it lies.
  llvm::StringRef textOf(const antlr4::Token *tok) const {
    if (!isReal(tok) || tok->getType() == antlr4::Token::EOF)
      return "";
    const size_t begin = tok->getStartIndex();
    return source.substr(begin, tok->getStopIndex() + 1 - begin);
  }
  /// [first byte, one past the last byte] of a token; invalid for tokens the
  /// parser conjured while recovering from an error.
  llvm::SMRange rangeOf(const antlr4::Token *tok) const {
    if (!isReal(tok))
      return {};
    if (tok->getType() == antlr4::Token::EOF)
      return {locAt(source.size()), locAt(source.size())};
    return {locAt(tok->getStartIndex()), locAt(tok->getStopIndex() + 1)};
  }
  /// From the start of `first` to the end of `last`.
  llvm::SMRange rangeOf(const antlr4::Token *first, const antlr4::Token *last) const {
    llvm::SMRange a = rangeOf(first), b = rangeOf(last);
    if (!a.Start.isValid())
      return b;
    if (!b.Start.isValid() || b.End.getPointer() < a.Start.getPointer())
      return a;
    return {a.Start, b.End};
  }

  void stopIfNeeded() const {
    if (diags.shouldStop())
      throw StopParsing{};
  }

  const llvm::StringRef source;
  DiagnosticEngine &diags;
  /// Where each syntax error was reported, to mark damaged pipelines.
  std::vector<const char *> syntaxErrors;
  /// Every comment the lexer saw, in order.
  std::vector<llvm::SMRange> comments;

private:
  static constexpr size_t kInvalidIndex = static_cast<size_t>(-1);
};

} // namespace pipec::parse

#endif // PIPEC_PARSE_PARSECONTEXT_H
