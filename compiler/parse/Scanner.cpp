//===- Scanner.cpp --------------------------------------------------------===//
//
// Each case below names the lexer rule of grammar/Pipe.g4 it stands for.
// ANTLR's lexer takes the longest match and, between rules matching the same
// text, the first rule: keywords before IDENT, QUANTITY before DECIMAL before
// INT, BAD_CHAR last.
//
//===----------------------------------------------------------------------===//

#include "compiler/parse/Scanner.h"

#include "compiler/parse/SourceText.h"

#include "PipeLexer.h"

#include <cstring>

using namespace pipec::parse;

namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isWordStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool isWordPart(char c) { return isWordStart(c) || isDigit(c); }
/// WS : [ \t\r\n\f\u000B]+
bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == 0x0B;
}

struct Keyword {
  const char *text;
  size_t type;
};

/// The keyword rules, reserved and contextual.
constexpr Keyword kKeywords[] = {
    {"pipeline", PipeLexer::PIPELINE},
    {"stream", PipeLexer::STREAM},
    {"stage", PipeLexer::STAGE},
    {"on", PipeLexer::ON},
    {"depends_on", PipeLexer::DEPENDS_ON},
    {"priority", PipeLexer::PRIORITY},
    {"iterations", PipeLexer::ITERATIONS},
    {"buffer", PipeLexer::BUFFER},
    {"device", PipeLexer::DEVICE},
    {"kernel", PipeLexer::KERNEL},
    {"copy", PipeLexer::COPY},
    {"host", PipeLexer::HOST},
    {"memset", PipeLexer::MEMSET},
    {"cpu", PipeLexer::CPU},
    {"h2d", PipeLexer::H2D},
    {"d2h", PipeLexer::D2H},
    {"d2d", PipeLexer::D2D},
    {"p2p", PipeLexer::P2P},
    {"to", PipeLexer::TO},
    {"allreduce", PipeLexer::ALLREDUCE},
    {"allgather", PipeLexer::ALLGATHER},
    {"reducescatter", PipeLexer::REDUCESCATTER},
    {"broadcast", PipeLexer::BROADCAST},
    {"high", PipeLexer::HIGH},
    {"normal", PipeLexer::NORMAL},
    {"low", PipeLexer::LOW},
    {"sync", PipeLexer::SYNC},
    {"inferred", PipeLexer::INFERRED},
    {"declared", PipeLexer::DECLARED},
    {"reads", PipeLexer::READS},
    {"writes", PipeLexer::WRITES},
    {"state", PipeLexer::STATE},
    {"version", PipeLexer::VERSION},
    {"let", PipeLexer::LET},
};
/// The longest keyword's length ("reducescatter"): a longer word is a name.
constexpr size_t longestKeyword() {
  size_t longest = 0;
  for (const Keyword &k : kKeywords) {
    size_t length = 0;
    while (k.text[length])
      ++length;
    longest = length > longest ? length : longest;
  }
  return longest;
}
constexpr size_t kLongestKeyword = longestKeyword();

#if defined(__SANITIZE_ADDRESS__)
#define PIPEC_POOL_TOKENS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PIPEC_POOL_TOKENS 0
#endif
#endif
#ifndef PIPEC_POOL_TOKENS
#define PIPEC_POOL_TOKENS 1
#endif

/// Tokens come and go by the million (the token window frees each item's
/// once it is parsed), so freed ones are kept on a free list and reused
/// rather than returned to malloc; the list holds at most as many as were
/// ever alive at once. Under AddressSanitizer each token is its own
/// allocation, so that a use after the window freed it is still caught.
class ScannedToken final : public antlr4::CommonToken {
public:
  using antlr4::CommonToken::CommonToken;
#if PIPEC_POOL_TOKENS
  static void *operator new(size_t size) {
    if (size == sizeof(ScannedToken) && freeList) {
      FreeBlock *block = freeList;
      freeList = block->next;
      return block;
    }
    return ::operator new(size);
  }
  static void operator delete(void *p, size_t size) {
    if (size != sizeof(ScannedToken)) {
      ::operator delete(p);
      return;
    }
    auto *block = static_cast<FreeBlock *>(p);
    block->next = freeList;
    freeList = block;
  }

private:
  struct FreeBlock {
    FreeBlock *next;
  };
  static thread_local FreeBlock *freeList;
#endif
};

#if PIPEC_POOL_TOKENS
thread_local ScannedToken::FreeBlock *ScannedToken::freeList = nullptr;
#endif

} // namespace

Scanner::Scanner(ByteStream &input) : input(input), text(input.text()) {}

size_t Scanner::wordType(size_t begin, size_t end) const {
  const size_t length = end - begin;
  if (length > kLongestKeyword)
    return PipeLexer::IDENT;
  const char *word = text.data() + begin;
  for (const Keyword &k : kKeywords)
    if (k.text[0] == word[0] && std::strlen(k.text) == length &&
        std::memcmp(k.text, word, length) == 0)
      return k.type;
  return PipeLexer::IDENT;
}

void Scanner::advanceTo(size_t end) {
  while (pos < end) {
    const char c = text[pos];
    if (c == '\n') {
      ++line;
      column = 0;
      ++pos;
      continue;
    }
    ++column;
    if (static_cast<uint8_t>(c) < 0x80) {
      ++pos;
      continue;
    }
    char32_t ignored;
    pos += SourceText::decode(text, pos, ignored);
  }
}

std::unique_ptr<antlr4::Token> Scanner::make(size_t type, size_t channel, size_t start,
                                             size_t stop) {
  // As the generated lexer's factory makes them, less the empty text it
  // would copy in.
  auto tok = std::make_unique<ScannedToken>(
      std::pair<antlr4::TokenSource *, antlr4::CharStream *>(this, &input), type, channel,
      start, stop);
  tok->setLine(line);
  tok->setCharPositionInLine(column);
  return tok;
}

std::unique_ptr<antlr4::Token> Scanner::nextToken() {
  const size_t size = text.size();
  // WS : [ \t\r\n\f\u000B]+ -> skip ;
  size_t start = pos;
  while (start < size && isSpace(text[start]))
    ++start;
  advanceTo(start);
  if (start == size)
    return make(antlr4::Token::EOF, antlr4::Token::DEFAULT_CHANNEL, size, size - 1);

  auto at = [&](size_t i) -> char { return i < size ? text[i] : 0; };
  size_t end = start + 1; // one past the token's last code point
  size_t type = PipeLexer::BAD_CHAR;
  size_t channel = antlr4::Token::DEFAULT_CHANNEL;
  const char c = text[start];
  switch (c) {
  case '{':
    type = PipeLexer::LBRACE;
    break;
  case '}':
    type = PipeLexer::RBRACE;
    break;
  case '(':
    type = PipeLexer::LPAREN;
    break;
  case ')':
    type = PipeLexer::RPAREN;
    break;
  case '[':
    type = PipeLexer::LBRACK;
    break;
  case ']':
    type = PipeLexer::RBRACK;
    break;
  case ';':
    type = PipeLexer::SEMI;
    break;
  case ',':
    type = PipeLexer::COMMA;
    break;
  case '=':
    type = PipeLexer::ASSIGN;
    break;
  case '-':
    type = PipeLexer::MINUS;
    break;
  case '+':
    type = PipeLexer::PLUS;
    break;
  case '*':
    type = PipeLexer::STAR;
    break;
  case '/':
    type = PipeLexer::SLASH;
    if (at(start + 1) == '/') {
      // LINE_COMMENT : '//' ~[\r\n]* -> channel(HIDDEN) ;
      end = start + 2;
      while (end < size && text[end] != '\r' && text[end] != '\n')
        ++end;
      type = PipeLexer::LINE_COMMENT;
    } else if (at(start + 1) == '*') {
      // BLOCK_COMMENT : '/*' .*? ('*/' | EOF) -> channel(HIDDEN) ;
      end = start + 2;
      while (end < size && !(text[end] == '*' && at(end + 1) == '/'))
        ++end;
      end = end < size ? end + 2 : size;
      type = PipeLexer::BLOCK_COMMENT;
    }
    break;
  case '@':
    // QUALIFIER : '@' [A-Za-z_] [A-Za-z0-9_]* ;
    if (isWordStart(at(start + 1))) {
      end = start + 2;
      while (end < size && isWordPart(text[end]))
        ++end;
      type = PipeLexer::QUALIFIER;
    }
    break;
  default:
    if (isDigit(c)) {
      // QUANTITY : DIGITS ('.' DIGITS)? [A-Za-z_] [A-Za-z0-9_]* ;
      // DECIMAL  : DIGITS '.' DIGITS ;
      // INT      : DIGITS ;
      while (end < size && isDigit(text[end]))
        ++end;
      type = PipeLexer::INT;
      if (at(end) == '.' && isDigit(at(end + 1))) {
        end += 2;
        while (end < size && isDigit(text[end]))
          ++end;
        type = PipeLexer::DECIMAL;
      }
      if (isWordStart(at(end))) {
        while (end < size && isWordPart(text[end]))
          ++end;
        type = PipeLexer::QUANTITY;
      }
    } else if (isWordStart(c)) {
      // The keywords, then IDENT : [A-Za-z_] [A-Za-z0-9_]* ;
      while (end < size && isWordPart(text[end]))
        ++end;
      type = wordType(start, end);
    } else if (static_cast<uint8_t>(c) >= 0x80) {
      // BAD_CHAR : . ; one code point, however many bytes it takes.
      char32_t ignored;
      end = start + SourceText::decode(text, start, ignored);
    }
    break;
  }
  if (type == PipeLexer::BAD_CHAR || type == PipeLexer::LINE_COMMENT ||
      type == PipeLexer::BLOCK_COMMENT)
    channel = antlr4::Token::HIDDEN_CHANNEL;
  std::unique_ptr<antlr4::Token> tok = make(type, channel, start, end - 1);
  advanceTo(end);
  return tok;
}
