//===- TokenWindow.cpp ----------------------------------------------------===//

#include "compiler/parse/TokenWindow.h"

#include <cstdint>

using namespace pipec::parse;

size_t TokenWindow::passable() const {
  // Compact only once enough has been passed, so that the cost of moving
  // the kept tokens down is paid for by the tokens dropped.
  if (_p < freeAfter + 1 || _p > _tokens.size())
    return 0;
  return _p - 1; // keep LT(-1) for "after '...'" messages
}

void TokenWindow::skipUntil(const antlr4::misc::IntervalSet &stop,
                            const antlr4::misc::IntervalSet &keep) {
  const size_t first = index();
  for (size_t t = LA(1); t != antlr4::Token::EOF && !stop.contains(t); t = LA(1)) {
    const size_t here = index();
    consume();
    // The one before is debris in the middle of the run.
    if (freeAfter != SIZE_MAX && here > first + 1 && _tokens[here - 1] &&
        !keep.contains(_tokens[here - 1]->getType()))
      _tokens[here - 1].reset();
  }
}

void TokenWindow::forgetPassed() {
  const size_t drop = passable();
  if (drop == 0)
    return;
  _tokens.erase(_tokens.begin(), _tokens.begin() + static_cast<long>(drop));
  _p -= drop;
  for (size_t i = 0; i < _tokens.size(); ++i)
    if (_tokens[i])
      static_cast<antlr4::WritableToken *>(_tokens[i].get())->setTokenIndex(i);
}

size_t TokenWindow::fetch(size_t n) {
  // BufferedTokenStream::fetch, less a dynamic_cast per token: the tokens
  // here are the Scanner's, all CommonTokens.
  if (_fetchedEOF)
    return 0;
  for (size_t i = 0; i < n; ++i) {
    std::unique_ptr<antlr4::Token> t = _tokenSource->nextToken();
    static_cast<antlr4::WritableToken *>(t.get())->setTokenIndex(_tokens.size());
    const bool eof = t->getType() == antlr4::Token::EOF;
    _tokens.push_back(std::move(t));
    if (eof) {
      _fetchedEOF = true;
      return i + 1;
    }
  }
  return n;
}
