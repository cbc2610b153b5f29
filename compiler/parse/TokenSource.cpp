//===- TokenSource.cpp ----------------------------------------------------===//

#include "compiler/parse/TokenSource.h"

#include "llvm/Support/FormatVariadic.h"

#include "compiler/parse/SourceText.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace pipec;
using namespace pipec::parse;

std::unique_ptr<antlr4::Token> FilteringTokenSource::pull() {
  if (pending)
    return std::move(pending);
  return lexer.nextToken();
}

void FilteringTokenSource::reportBadChars(size_t first, size_t last) {
  // [first, last] are byte offsets; the message counts characters.
  char32_t c = 0;
  const size_t length = SourceText::decode(ctx.source, first, c);
  size_t more = 0;
  for (size_t at = first + length; at <= last; ++more) {
    char32_t ignored;
    at += SourceText::decode(ctx.source, at, ignored);
  }
  std::string msg;
  llvm::raw_string_ostream os(msg);
  os << "unexpected character";
  if (auto byte = SourceText::invalidByte(c))
    os << ": byte " << llvm::format("0x%02x", *byte) << " is not valid UTF-8";
  else if (c >= 0x21 && c < 0x7F)
    os << " '" << static_cast<char>(c) << "'";
  else if (c >= 0x80)
    os << " '" << ctx.source.substr(first, length) << "' "
       << llvm::format("(U+%04X)", static_cast<unsigned>(c));
  else
    os << ' ' << llvm::format("U+%04X", static_cast<unsigned>(c));
  if (more)
    os << " (and " << more << " more)";
  ctx.diags.error({ctx.locAt(first), ctx.locAt(last + 1)}, os.str());
  ctx.stopIfNeeded();
}

std::unique_ptr<antlr4::Token> FilteringTokenSource::nextToken() {
  for (;;) {
    std::unique_ptr<antlr4::Token> tok = pull();
    switch (tok->getType()) {
    case PipeLexer::BAD_CHAR: {
      // Fold a run of adjacent bad characters into one error.
      size_t first = tok->getStartIndex(), last = tok->getStopIndex();
      for (;;) {
        std::unique_ptr<antlr4::Token> next = lexer.nextToken();
        if (next->getType() == PipeLexer::BAD_CHAR && next->getStartIndex() == last + 1) {
          last = next->getStopIndex();
          continue;
        }
        pending = std::move(next);
        break;
      }
      reportBadChars(first, last);
      continue;
    }
    case PipeLexer::BLOCK_COMMENT: {
      const llvm::StringRef text = ctx.source;
      size_t start = tok->getStartIndex(), stop = tok->getStopIndex();
      bool closed = stop >= start + 3 && text[stop - 1] == '*' && text[stop] == '/';
      if (!closed) {
        ctx.diags.error({ctx.locAt(start), ctx.locAt(start + 2)}, "unterminated /* comment");
        ctx.stopIfNeeded();
      }
      ctx.comments.push_back(ctx.rangeOf(tok.get()));
      continue;
    }
    case PipeLexer::LINE_COMMENT:
      ctx.comments.push_back(ctx.rangeOf(tok.get()));
      continue;
    case PipeLexer::LPAREN:
      // The parsers recurse per parenthesis: a file of them must not
      // exhaust the stack. Past the limit they are reported and dropped.
      if (++parens > kMaxParens) {
        if (parens == kMaxParens + 1) {
          ctx.diags.error(
              ctx.rangeOf(tok.get()),
              llvm::formatv("parentheses nested more than {0} deep", kMaxParens).str());
          ctx.stopIfNeeded();
        }
        continue;
      }
      return tok;
    case PipeLexer::RPAREN:
      if (parens > kMaxParens) {
        --parens;
        continue; // the partner of a dropped '('
      }
      parens -= parens > 0;
      return tok;
    case PipeLexer::SEMI:
    case PipeLexer::LBRACE:
    case PipeLexer::RBRACE:
      parens = 0;
      return tok;
    default:
      return tok;
    }
  }
}
