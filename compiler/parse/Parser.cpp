//===- Parser.cpp - Runs the generated lexer and parser -------------------===//
//
// Each item is parsed in up to three tries, the cheapest first: the
// DirectParser, which takes only well-formed items; then the generated
// parser with the fast SLL prediction and a strategy that bails at the first
// error (as ANTLR's authors recommend); only when that fails, the full LL
// prediction with error recovery and reporting.
//
//===----------------------------------------------------------------------===//

#include "compiler/parse/Parser.h"

#include "compiler/parse/ASTBuilder.h"
#include "compiler/parse/ByteStream.h"
#include "compiler/parse/DirectParser.h"
#include "compiler/parse/Literals.h"
#include "compiler/parse/ParseContext.h"
#include "compiler/parse/Scanner.h"
#include "compiler/parse/SyntaxErrors.h"
#include "compiler/parse/TokenSource.h"
#include "compiler/parse/TokenWindow.h"
#include "compiler/parse/Tokens.h"

#include "PipeParser.h"
#include "antlr4-runtime.h"

#include "llvm/Support/SourceMgr.h"

using namespace pipec;
using namespace pipec::parse;

namespace {

/// Parses a file pipeline by pipeline and item by item. The frame of a
/// pipeline (`pipeline NAME {` ... `}`) is read here; each item (`stream`,
/// `stage`, `iterations`) is parsed by the DirectParser if well formed, else
/// by the generated parser -- first with SLL prediction and a strategy that
/// bails at the first error, then, only if that fails, with full LL
/// prediction and error recovery -- turned into AST at once, and its parse
/// tree freed, so memory stays small on large files.
class FileDriver {
public:
  FileDriver(ParseContext &ctx, TokenWindow &tokens, PipeParser &parser, bool directItems)
      : ctx(ctx), tokens(tokens), parser(parser), builder(ctx), direct(ctx, tokens),
        directItems(directItems), bail(std::make_shared<antlr4::BailErrorStrategy>()),
        report(std::make_shared<PipeErrorStrategy>(ctx)),
        frame(nullptr, antlr4::atn::ATNState::INVALID_STATE_NUMBER),
        itemCall(itemCallState(parser.getATN())) {}

  ast::File run(std::string path) {
    ast::File file;
    file.path = std::move(path);
    file.start = ctx.locAt(0);
    if (type(1) == PipeParser::VERSION)
      version(file);
    while (type(1) != antlr4::Token::EOF) {
      if (type(1) == PipeParser::VERSION) {
        error(tokens.LT(1), "the 'version' line comes first in the file; expected 'pipeline'");
        skipTo({PipeParser::PIPELINE});
        continue;
      }
      if (type(1) != PipeParser::PIPELINE) {
        error(tokens.LT(1), "expected 'pipeline'");
        skipTo({PipeParser::PIPELINE});
        continue;
      }
      file.pipelines.push_back(pipeline());
    }
    return file;
  }

private:
  size_t type(ssize_t k) { return tokens.LA(k); }

  /// A syntax error at `tok` (or just after the previous token, at the end
  /// of the file), as the error strategy words them.
  void error(antlr4::Token *tok, const std::string &what) {
    antlr4::Token *previous = tokens.index() > 0 ? tokens.LT(-1) : nullptr;
    llvm::SMRange range = ctx.rangeOf(tok);
    std::string msg = what;
    if (tok->getType() == antlr4::Token::EOF) {
      msg += " at end of file";
      if (previous)
        range = {ctx.rangeOf(previous).End, ctx.rangeOf(previous).End};
    } else if (previous) {
      msg += " after '" + previous->getText() + "'";
    }
    if (!range.Start.isValid())
      range = {ctx.locAt(0), ctx.locAt(0)};
    ctx.syntaxErrors.push_back(range.Start.getPointer());
    ctx.diags.error(range, msg);
    ctx.stopIfNeeded();
  }

  /// Skips tokens up to one of `types`, or the end of the file.
  void skipTo(std::initializer_list<size_t> types) {
    for (size_t t = type(1); t != antlr4::Token::EOF; t = type(1)) {
      for (size_t wanted : types)
        if (t == wanted)
          return;
      tokens.consume();
      forgetPassedTokens();
    }
  }

  /// Frees the tokens passed (see TokenWindow), telling the error strategy
  /// first, as it counts in token indexes.
  void forgetPassedTokens() {
    if (size_t drop = tokens.passable()) {
      report->forgetTokens(tokens, drop);
      tokens.forgetPassed();
    }
  }

  /// From `first` to the end of `last` (or just `first`, if `last` ends
  /// before it).
  llvm::SMRange spanFrom(llvm::SMRange first, antlr4::Token *last) {
    llvm::SMRange b = ctx.rangeOf(last);
    if (!b.Start.isValid() || b.End.getPointer() < first.Start.getPointer())
      return first;
    return {first.Start, b.End};
  }

  /// versionDecl : VERSION INT SEMI ;
  void version(ast::File &file) {
    const llvm::SMRange keyword = ctx.rangeOf(tokens.LT(1));
    tokens.consume();
    if (type(1) != PipeParser::INT) {
      error(tokens.LT(1), "expected the language version (a whole number)");
      skipTo({PipeParser::PIPELINE});
      return;
    }
    file.version = intOf(ctx, tokens.LT(1));
    tokens.consume();
    if (type(1) != PipeParser::SEMI) {
      // As for any forgotten ';': just past the line's last token.
      const llvm::SMLoc after = file.version->range.End;
      ctx.syntaxErrors.push_back(after.getPointer());
      ctx.diags.error({after, after}, "expected ';' after the 'version' line");
      ctx.stopIfNeeded();
      skipTo({PipeParser::PIPELINE});
      return;
    }
    file.versionRange = spanFrom(keyword, tokens.LT(1));
    tokens.consume();
    forgetPassedTokens();
  }

  /// pipeline : PIPELINE name LBRACE item* RBRACE ;
  ast::Pipeline pipeline() {
    ast::Pipeline p;
    const size_t errorsBefore = ctx.syntaxErrors.size();
    // Only the keyword's place is kept: its token is forgotten with the
    // rest once the items after it are parsed.
    const llvm::SMRange keyword = ctx.rangeOf(tokens.LT(1));
    tokens.consume();
    if (isNameToken(type(1))) {
      p.name = {ctx.textOf(tokens.LT(1))};
      tokens.consume();
    } else {
      std::string what = "expected pipeline name";
      if (isReservedWord(type(1)))
        error(tokens.LT(1), what + " after 'pipeline'; '" + tokens.LT(1)->getText() +
                                "' is a reserved word");
      else
        error(tokens.LT(1), what);
    }
    if (type(1) == PipeParser::LBRACE) {
      tokens.consume();
    } else if (ctx.syntaxErrors.size() == errorsBefore) {
      error(tokens.LT(1), "expected '{'");
    }
    for (;;) {
      size_t t = type(1);
      if (t == PipeParser::STREAM || t == PipeParser::STAGE || t == PipeParser::ITERATIONS ||
          t == PipeParser::BUFFER || t == PipeParser::SYNC || t == PipeParser::LET ||
          t == PipeParser::DEVICE) {
        item(p);
        continue;
      }
      if (t == PipeParser::RBRACE) {
        p.range = spanFrom(keyword, tokens.LT(1));
        tokens.consume();
        break;
      }
      p.range = tokens.index() > 0 ? spanFrom(keyword, tokens.LT(-1)) : keyword;
      error(tokens.LT(1),
            "expected 'device', 'stream', 'buffer', 'stage', 'let', 'iterations', 'sync' "
            "or '}'");
      if (t == antlr4::Token::EOF || t == PipeParser::PIPELINE)
        break;
      tokens.consume();
      skipTo({PipeParser::STREAM, PipeParser::STAGE, PipeParser::ITERATIONS,
              PipeParser::BUFFER, PipeParser::SYNC, PipeParser::LET, PipeParser::DEVICE,
              PipeParser::RBRACE, PipeParser::PIPELINE});
      if (type(1) == PipeParser::PIPELINE)
        break;
    }
    p.hasSyntaxErrors = ctx.syntaxErrors.size() != errorsBefore;
    return p;
  }

  /// The state of rule `pipeline` that calls rule `item`. Each item is
  /// parsed as if called from there, so that error recovery knows what may
  /// follow an item (another item or '}') and never runs past it.
  static size_t itemCallState(const antlr4::atn::ATN &atn) {
    for (antlr4::atn::ATNState *state : atn.states)
      if (state && state->ruleIndex == PipeParser::RulePipeline)
        for (antlr4::atn::Transition *t : state->transitions)
          if (t->getSerializationType() == antlr4::atn::Transition::RULE &&
              t->target->ruleIndex == PipeParser::RuleItem)
            return state->stateNumber;
    return antlr4::atn::ATNState::INVALID_STATE_NUMBER;
  }

  PipeParser::ItemContext *parseItem() {
    parser.setContext(&frame);
    parser.setState(itemCall);
    PipeParser::ItemContext *tree = parser.item();
    frame.children.clear(); // the tracker owns them, and frees them below
    return tree;
  }

  /// item : setting | streamDecl | bufferDecl | stageDecl | letDecl ;
  void item(ast::Pipeline &into) {
    if (!directItems || !direct.parseItem(into))
      generatedItem(into);
    forgetPassedTokens(); // the item's tokens are done with
  }

  /// The item, by the generated parser.
  void generatedItem(ast::Pipeline &into) {
    auto *interpreter = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
    const size_t start = tokens.index();
    PipeParser::ItemContext *tree = nullptr;
    try {
      interpreter->setPredictionMode(antlr4::atn::PredictionMode::SLL);
      parser.setErrorHandler(bail);
      tree = parseItem();
    } catch (antlr4::ParseCancellationException &) {
      tokens.seek(start);
      interpreter->setPredictionMode(antlr4::atn::PredictionMode::LL);
      report->reset(&parser);
      parser.setErrorHandler(report);
      tree = parseItem();
      if (tokens.index() == start) // nothing consumed: move on regardless
        tokens.consume();
    }
    builder.buildItem(tree, into);
    parser.getTreeTracker().reset(); // this item's parse tree is done with
  }

  ParseContext &ctx;
  TokenWindow &tokens;
  PipeParser &parser;
  ASTBuilder builder;
  DirectParser direct;
  const bool directItems;
  std::shared_ptr<antlr4::BailErrorStrategy> bail;
  std::shared_ptr<PipeErrorStrategy> report;
  /// Stands for the pipeline rule's context while an item is parsed.
  PipeParser::PipelineContext frame;
  size_t itemCall;
};

} // namespace

ast::File pipec::parseFile(llvm::SourceMgr &sm, unsigned bufferId, llvm::StringRef path,
                           DiagnosticEngine &diags) {
  return parseFile(sm, bufferId, path, diags, sm.getMemoryBuffer(bufferId)->getBuffer(),
                   ParseOptions());
}

ast::File pipec::parseFile(llvm::SourceMgr &sm, unsigned, llvm::StringRef path,
                           DiagnosticEngine &diags, llvm::StringRef range,
                           ParseOptions options) {
  // Locations point into `range`, inside the buffer: a part of a file has
  // the whole file's line numbers without a copy of it.
  ByteStream input(range);
  ParseContext ctx(range, diags);
  (void)sm;

  Scanner lexer(input);
  FilteringTokenSource source(lexer, ctx);
  TokenWindow tokens(&source, options.freeAfter);
  PipeParser parser(&tokens);
  parser.removeErrorListeners();

  ast::File empty;
  empty.path = path.str();
  empty.start = ctx.locAt(0);
  try {
    ast::File file = FileDriver(ctx, tokens, parser, options.directItems).run(path.str());
    file.comments = std::move(ctx.comments);
    return file;
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
