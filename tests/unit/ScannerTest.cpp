// The hand-written Scanner against the lexer ANTLR generates from the same
// grammar: on every input, the same tokens, field by field (the generated
// lexer's code point indexes mapped to the Scanner's byte offsets).

#include "compiler/parse/Scanner.h"
#include "compiler/parse/SourceText.h"

#include "PipeLexer.h"

#include <doctest/doctest.h>

#include "Seed.h"

#include <random>
#include <sstream>

using namespace pipec::parse;

namespace {

/// An ANTLR input stream whose code points SourceText decodes, with the
/// byte offset of each.
class Input : public antlr4::ANTLRInputStream {
public:
  explicit Input(const std::string &bytes) : text(bytes, _data) {}
  SourceText text;
};

/// Fails the test if the generated lexer ever reports an error: the grammar
/// promises that BAD_CHAR takes every character nothing else does.
class NoErrors : public antlr4::BaseErrorListener {
public:
  void syntaxError(antlr4::Recognizer *, antlr4::Token *, size_t line, size_t column,
                   const std::string &msg, std::exception_ptr) override {
    FAIL("generated lexer error at " << line << ":" << column << ": " << msg);
  }
};

/// A token's fields; `start` and `stop` as byte offsets. Text only for
/// the parser's tokens: the generated lexer spells an invalid byte in a
/// comment as its escape's UTF-8, the Scanner as the byte.
std::string describe(antlr4::Token &t, size_t start, size_t stop) {
  std::ostringstream os;
  os << "type " << t.getType() << " channel " << t.getChannel() << " ["
     << static_cast<long long>(start) << ", " << static_cast<long long>(stop) << "] line "
     << t.getLine() << " column " << t.getCharPositionInLine();
  if (t.getChannel() == antlr4::Token::DEFAULT_CHANNEL)
    os << " text '" << t.getText() << "'";
  return os.str();
}

/// Every token of `bytes` from both lexers, described, until EOF.
std::pair<std::vector<std::string>, std::vector<std::string>>
bothLexers(const std::string &bytes) {
  Input forGenerated(bytes);
  ByteStream forScanner(bytes);
  PipeLexer generated(&forGenerated);
  NoErrors noErrors;
  generated.removeErrorListeners();
  generated.addErrorListener(&noErrors);
  Scanner scanner(forScanner);
  std::vector<std::string> a, b;
  for (;;) {
    std::unique_ptr<antlr4::Token> t = generated.nextToken();
    // Code point [start, stop] -> bytes [first of start, last of stop].
    size_t start = forGenerated.text.byteOffset(t->getStartIndex());
    size_t stop = forGenerated.text.byteOffset(t->getStopIndex() + 1) - 1;
    a.push_back(describe(*t, start, stop));
    if (t->getType() == antlr4::Token::EOF)
      break;
  }
  for (;;) {
    std::unique_ptr<antlr4::Token> t = scanner.nextToken();
    b.push_back(describe(*t, t->getStartIndex(), t->getStopIndex()));
    if (t->getType() == antlr4::Token::EOF || b.size() > a.size())
      break;
  }
  return {a, b};
}

void checkSame(const std::string &bytes) {
  auto [generated, scanner] = bothLexers(bytes);
  INFO("input: '" << bytes << "'");
  CHECK(scanner.size() == generated.size());
  for (size_t i = 0; i < std::min(generated.size(), scanner.size()); ++i) {
    if (generated[i] != scanner[i]) {
      INFO("token " << i);
      CHECK(scanner[i] == generated[i]);
      return;
    }
  }
}

} // namespace

TEST_CASE("scanner: the generated lexer's tokens on hand-picked edges") {
  for (const char *text :
       {"",
        " ",
        "\n\n x",
        "pipeline",
        "pipelines",
        "stage_",
        "on on_ on1",
        "depends_on depends_o depends_onx",
        "1",
        "12us",
        "1.5",
        "1.5us",
        "1.",
        "1.x",
        "1..5",
        "1.5.3",
        "12_",
        "0x1F",
        ".5",
        "@",
        "@prev",
        "@prev(2)",
        "@1",
        "@_",
        "/",
        "//",
        "// x\r\ny",
        "/*",
        "/*/",
        "/**/",
        "/* a */ b",
        "/* a * / b",
        "*/",
        "a\fb\vc\td",
        "- -1",
        "=[],;{}()",
        "\xc3\xa9t\xc3\xa9",
        "\xff\xfe",
        "\xf8\xd0\x93\xf8",
        "\xed\xb2\x80",
        "\xf0\x9f\x98\x80x",
        "kernel\n  copy h2d d2h d2d host memset",
        "high normal low sync inferred declared reads writes buffer iterations"}) {
    checkSame(text);
  }
  checkSame(std::string("a\0b", 3)); // NUL inside the text
  checkSame(std::string("a\0b\0", 4));
}

TEST_CASE("scanner: the generated lexer's tokens on random text") {
  // Every literal token of the grammar (its keywords and punctuation, read
  // from the generated lexer: a keyword added to Pipe.g4 is drawn too), and
  // pieces chosen to meet at every boundary the lexer rules care about.
  std::vector<std::string> pieces = {"stag",
                                     "depends",
                                     "_",
                                     "x",
                                     "A9",
                                     "0",
                                     "12",
                                     "7",
                                     ".",
                                     "..",
                                     "us",
                                     "MiB",
                                     "e",
                                     "@",
                                     "@prev",
                                     "/",
                                     "*",
                                     "//",
                                     "/*",
                                     "*/",
                                     " ",
                                     "\t",
                                     "\n",
                                     "\r\n",
                                     "\r",
                                     "\f",
                                     "\v",
                                     "{",
                                     "}",
                                     "(",
                                     ")",
                                     "[",
                                     "]",
                                     ";",
                                     ",",
                                     "=",
                                     "-",
                                     "#",
                                     "\"",
                                     "\xc3\xa9",
                                     "\xe2\x80\x94",
                                     "\xff",
                                     "\x80",
                                     "\xc3",
                                     "\xf0\x9f\x98\x80",
                                     std::string(1, '\0')};
  antlr4::ANTLRInputStream none("");
  PipeLexer lexer(&none);
  const antlr4::dfa::Vocabulary &vocabulary = lexer.getVocabulary();
  size_t keywords = 0;
  for (size_t t = 1; t <= vocabulary.getMaxTokenType(); ++t) {
    const std::string literal = vocabulary.getLiteralName(t); // "'pipeline'"
    if (literal.size() > 2) {
      pieces.push_back(literal.substr(1, literal.size() - 2));
      keywords += std::isalpha(static_cast<unsigned char>(literal[1])) != 0;
    }
  }
  CHECK(keywords >= 34); // every keyword of the grammar, today 34
  PIPEC_SEEDED(rng, 20261203);
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    const int n = std::uniform_int_distribution<int>(0, 40)(rng);
    for (int i = 0; i < n; ++i)
      text += pieces[std::uniform_int_distribution<size_t>(0, pieces.size() - 1)(rng)];
    checkSame(text);
  }
}

TEST_CASE("scanner: a token stream ends at EOF, keywords before names") {
  auto [generated, scanned] = bothLexers("stage x");
  REQUIRE(scanned.size() == 3); // STAGE, IDENT, EOF
  CHECK(scanned[0].rfind("type " + std::to_string(PipeLexer::STAGE) + " ", 0) == 0);
  CHECK(scanned[1].rfind("type " + std::to_string(PipeLexer::IDENT) + " ", 0) == 0);
  CHECK(scanned == generated);
}
