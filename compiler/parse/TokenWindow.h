//===- TokenWindow.h - A token stream that forgets what the parser passed ===//
//
// ANTLR's CommonTokenStream keeps every token it ever fetched, about 140
// bytes each: ten megabytes of '(' held 1.4 GB although the parser had long
// skipped them. The file driver parses one item at a time and never looks
// back further than the token before the current one, so between items it
// calls forgetPassed(), which drops the tokens before that one and numbers
// the rest from zero again: memory follows the longest item, not the file.
// Inside an item, error recovery skips debris with skipUntil(), which frees
// each skipped token but the first and the last (nothing refers to the
// others: no rule starts among them, no parse-tree node is made), so a megabyte of debris in
// one item costs a few bytes a token, not a token and a tree node each.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PARSE_TOKENWINDOW_H
#define PIPEC_PARSE_TOKENWINDOW_H

#include "antlr4-runtime.h"

namespace pipec::parse {

class TokenWindow : public antlr4::CommonTokenStream {
public:
  /// Frees passed tokens once at least `freeAfter` (> 0) have piled up;
  /// SIZE_MAX keeps every token, debris too (the obvious stream, for tests).
  TokenWindow(antlr4::TokenSource *source, size_t freeAfter)
      : antlr4::CommonTokenStream(source), freeAfter(freeAfter ? freeAfter : 1) {}

  /// How many tokens forgetPassed() would drop now (none, until enough
  /// have been passed to pay for moving the rest).
  size_t passable() const;

  /// Drops the tokens before LT(-1), numbering the rest from zero. Call
  /// only between items, when no parse is under way (nothing holds a token
  /// index or a token).
  void forgetPassed();

  /// Consumes tokens up to one in `stop` or the end of the file, freeing
  /// all but the first and last consumed and those in `keep`. get()
  /// answers null for a freed token.
  void skipUntil(const antlr4::misc::IntervalSet &stop, const antlr4::misc::IntervalSet &keep);

  /// LT(1) and consume(), less the generic stream's channel search and
  /// checks (for the DirectParser's loop): every token this window holds is
  /// on the default channel, as the FilteringTokenSource drops the rest.
  /// Like consume(), advance() fetches the next token at once: the generic
  /// stream's LT(1) counts on it.
  antlr4::Token *peek() {
    lazyInit();
    return _tokens[_p].get();
  }
  /// Passes the token peek() answers, which must not be the end of file.
  void advance() {
    if (++_p >= _tokens.size())
      fetch(_p + 1 - _tokens.size());
  }
  /// LT(-1) after advance(): the token passed last.
  antlr4::Token *previous() const { return _tokens[_p - 1].get(); }

  /// Tokens held now (for tests and benchmarks).
  size_t held() const { return _tokens.size(); }

protected:
  /// Fetches from the token source, which must give WritableTokens (the
  /// Scanner's CommonTokens).
  size_t fetch(size_t n) override;

private:
  size_t freeAfter;
};

} // namespace pipec::parse

#endif // PIPEC_PARSE_TOKENWINDOW_H
