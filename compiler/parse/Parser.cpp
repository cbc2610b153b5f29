//===- Parser.cpp - Runs the generated lexer and parser -------------------===//
//
// Parsing is two-staged, as ANTLR's authors recommend: first the fast SLL
// prediction with a strategy that bails at the first error; only when that
// fails, the full LL prediction with error recovery and reporting.
//
//===----------------------------------------------------------------------===//

#include "compiler/parse/Parser.h"

#include "compiler/parse/ASTBuilder.h"
#include "compiler/parse/ParseContext.h"
#include "compiler/parse/SourceText.h"
#include "compiler/parse/SyntaxErrors.h"
#include "compiler/parse/TokenSource.h"

#include "PipeLexer.h"
#include "PipeParser.h"
#include "antlr4-runtime.h"

#include "llvm/Support/SourceMgr.h"

using namespace pipec;
using namespace pipec::parse;

namespace {

/// An ANTLR input stream over already-decoded code points.
class CodePointStream : public antlr4::ANTLRInputStream {
public:
  explicit CodePointStream(const std::u32string &points) {
    _data = points;
    p = 0;
  }
};

/// The lexer matches every character (BAD_CHAR catches the rest), so this
/// listener should never hear anything; if it does, it reports rather than
/// letting ANTLR print to the console.
class LexerErrors : public antlr4::BaseErrorListener {
public:
  explicit LexerErrors(ParseContext &ctx) : ctx(ctx) {}
  void syntaxError(antlr4::Recognizer *recognizer, antlr4::Token *,
                   size_t line, size_t column, const std::string &,
                   std::exception_ptr) override {
    auto *lexer = static_cast<antlr4::Lexer *>(recognizer);
    ctx.diags.error({ctx.locAt(lexer->tokenStartCharIndex),
                     ctx.locAt(lexer->tokenStartCharIndex)},
                    "unexpected character");
    (void)line;
    (void)column;
    ctx.stopIfNeeded();
  }

private:
  ParseContext &ctx;
};

} // namespace

ast::File pipec::parseFile(llvm::SourceMgr &sm, unsigned bufferId,
                           llvm::StringRef path, DiagnosticEngine &diags) {
  const llvm::MemoryBuffer *buffer = sm.getMemoryBuffer(bufferId);
  SourceText text(buffer->getBuffer());
  ParseContext ctx(buffer->getBufferStart(), text, diags);

  CodePointStream input(text.codePoints());
  PipeLexer lexer(&input);
  LexerErrors lexerErrors(ctx);
  lexer.removeErrorListeners();
  lexer.addErrorListener(&lexerErrors);
  FilteringTokenSource source(lexer, ctx);
  antlr4::CommonTokenStream tokens(&source);
  PipeParser parser(&tokens);
  parser.removeErrorListeners();

  ast::File empty;
  empty.path = path.str();
  empty.start = ctx.locAt(0);
  try {
    auto *interpreter = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
    PipeParser::FileContext *tree = nullptr;
    interpreter->setPredictionMode(antlr4::atn::PredictionMode::SLL);
    parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
    try {
      tree = parser.file();
    } catch (antlr4::ParseCancellationException &) {
      tokens.seek(0);
      parser.reset();
      interpreter->setPredictionMode(antlr4::atn::PredictionMode::LL);
      parser.setErrorHandler(std::make_shared<PipeErrorStrategy>(ctx));
      tree = parser.file();
    }
    return ASTBuilder(ctx).buildFile(tree, path.str());
  } catch (StopParsing &) {
    return empty;
  } catch (std::exception &e) {
    // Not expected; never let the runtime's exceptions escape the parser.
    if (!diags.shouldStop())
      diags.error({ctx.locAt(0), ctx.locAt(0)},
                  llvm::Twine("internal parser error: ") + e.what());
    return empty;
  }
}
