// The DirectParser against the generated parser, on random items drawn from
// the grammar, some of them then broken a token at a time:
//  - it takes exactly the items the grammar accepts: every item of a file
//    the generated parser reads without an error, and never all items of a
//    file with one;
//  - the parse with it gives the same diagnostics and AST as without it.

#include "FrontendHelpers.h"
#include "Seed.h"

#include "compiler/parse/DirectParser.h"
#include "compiler/parse/Scanner.h"
#include "compiler/parse/TokenSource.h"

#include "PipeParser.h"

#include <doctest/doctest.h>

#include <random>

using namespace pipec;
using namespace pipec::parse;
using pipec::test::parseWith;

namespace {

/// Random items from grammar/Pipe.g4's parser rules, as token texts.
class ItemGenerator {
public:
  explicit ItemGenerator(unsigned seed) : rng(seed) {}

  std::vector<std::string> item() {
    std::vector<std::string> out;
    switch (rng() % 8) {
    case 6:
      out = {"device", name(), ";"};
      break;
    case 0:
      out = {"iterations"};
      count(out);
      out.push_back(";");
      break;
    case 5:
      append(out, {"let", pick({"N", "T", "let", "4"}), "="});
      amount(out);
      out.push_back(";");
      break;
    case 1:
      out = {"sync", pick({"inferred", "declared"}), ";"};
      break;
    case 2:
      out = {"stream", name()};
      if (rng() % 3 == 0)
        append(out, {"on", name()});
      if (rng() % 2) {
        out.push_back("priority");
        switch (rng() % 3) {
        case 0:
          out.push_back(pick({"high", "normal", "low"}));
          break;
        case 1:
          out.push_back("-");
          [[fallthrough]];
        default:
          out.push_back(integer());
        }
      }
      out.push_back(";");
      break;
    case 3:
      out = {"buffer", name()};
      if (rng() % 2) {
        out.push_back("[");
        count(out);
        out.push_back("]");
      }
      amount(out);
      if (rng() % 3 == 0)
        out.push_back("host");
      else if (rng() % 2)
        append(out, {"on", name()});
      out.push_back(";");
      break;
    default:
      out = stage();
    }
    return out;
  }

  /// Breaks `tokens` once: a token dropped, doubled, or replaced by another.
  void mutate(std::vector<std::string> &tokens) {
    static const std::vector<std::string> any = {
        "pipeline", "stream", "stage", "on",       "depends_on", "priority", "iterations",
        "buffer",   "kernel", "copy",  "host",     "memset",     "h2d",      "reads",
        "writes",   "high",   "sync",  "declared", "x",          "@prev",    "4us",
        "7",        "2.5",    "{",     "}",        "(",          ")",        "[",
        "]",        ";",      ",",     "=",        "-",          "+",        "*",
        "/",        "let",    "us",    "device",   "p2p",        "to",       "allreduce",
        "broadcast"};
    size_t at = rng() % tokens.size();
    switch (rng() % 3) {
    case 0:
      tokens.erase(tokens.begin() + static_cast<long>(at));
      break;
    case 1:
      tokens.insert(tokens.begin() + static_cast<long>(at), tokens[at]);
      break;
    default:
      tokens[at] = any[rng() % any.size()];
    }
  }

  std::mt19937 rng;

private:
  std::vector<std::string> stage() {
    std::vector<std::string> out = {"stage", name()};
    if (rng() % 4 == 0) {
      append(out, {"on", "(", name()});
      for (unsigned k = rng() % 3; k > 0; --k)
        append(out, {",", name()});
      out.push_back(")");
    } else if (rng() % 2) {
      append(out, {"on", name()});
    }
    switch (rng() % 5) {
    case 1:
      out.push_back(pick({"allreduce", "allgather", "reducescatter", "broadcast"}));
      amount(out);
      break;
    case 0:
      append(out, {"copy", pick({"h2d", "d2h", "d2d", "p2p"})});
      if (rng() % 2)
        amount(out);
      if (rng() % 3 == 0)
        append(out, {"to", name()});
      break;
    default:
      out.push_back(pick({"kernel", "host", "memset"}));
      amount(out);
    }
    if (rng() % 3 == 0) {
      out.push_back("[");
      for (unsigned k = 0, n = 1 + rng() % 3; k < n; ++k) {
        if (k)
          out.push_back(",");
        out.push_back(name());
        if (rng() % 2) {
          out.push_back("=");
          if (rng() % 2)
            out.push_back(integer());
          else
            amount(out);
        }
      }
      out.push_back("]");
    }
    for (unsigned a = 0, n = rng() % 3; a < n; ++a) {
      append(out, {pick({"reads", "writes"}), "("});
      list(out, [&] {
        out.push_back(name());
        if (rng() % 4 == 0) { // a ring read K back (or debris)
          out.push_back(pick({"@prev", "@next"}));
          if (rng() % 2)
            append(out, {"(", integer(), ")"});
        }
      });
      out.push_back(")");
    }
    if (rng() % 2) {
      append(out, {"depends_on", "("});
      list(out, [&] {
        out.push_back(name());
        if (rng() % 3 == 0) {
          out.push_back(pick({"@prev", "@next"}));
          if (rng() % 2)
            append(out, {"(", integer(), ")"});
        }
      });
      out.push_back(")");
    }
    out.push_back(";");
    return out;
  }

  template <typename Element> void list(std::vector<std::string> &out, Element element) {
    for (unsigned k = 0, n = 1 + rng() % 3; k < n; ++k) {
      if (k)
        out.push_back(",");
      element();
    }
  }
  std::string pick(std::initializer_list<const char *> words) {
    return *(words.begin() + rng() % words.size());
  }
  static void append(std::vector<std::string> &out, std::initializer_list<std::string> more) {
    out.insert(out.end(), more);
  }
  std::string name() {
    // Words the `name` rule allows, keywords among them.
    return pick({"a",    "B_2",       "kernel",    "copy",          "host",     "memset",
                 "h2d",  "d2h",       "d2d",       "high",          "normal",   "low",
                 "sync", "inferred",  "declared",  "reads",         "writes",   "p2p",
                 "to",   "allreduce", "allgather", "reducescatter", "broadcast"});
  }
  std::string integer() {
    return pick({"0", "3", "18446744073709551615", "99999999999999999999"});
  }
  /// A literal, mostly; else arithmetic over literals and constants, with
  /// parentheses and a unit after it.
  void amount(std::vector<std::string> &out) {
    expr(out, 0);
    if (rng() % 6 == 0)
      out.push_back(pick({"us", "KiB", "xs"}));
  }
  void count(std::vector<std::string> &out) {
    if (rng() % 3)
      out.push_back(integer());
    else
      expr(out, 0);
  }
  void expr(std::vector<std::string> &out, unsigned depth) {
    if (rng() % 3 || depth > 3) {
      out.push_back(pick({"4us", "1.5ms", "12", "2.5", "48KiB", "N", "T"}));
      return;
    }
    if (rng() % 4 == 0) {
      out.push_back("(");
      expr(out, depth + 1);
      out.push_back(")");
      return;
    }
    expr(out, depth + 1);
    out.push_back(pick({"+", "-", "*", "/"}));
    expr(out, depth + 1);
  }
};

/// How many items the DirectParser alone takes, in a row, from the start of
/// the only pipeline of `text`, and whether it then stands at its '}'.
std::pair<size_t, bool> directItems(const std::string &text) {
  DiagnosticEngine diags([](const Diagnostic &) {}, 0);
  ByteStream input(text);
  ParseContext ctx(text, diags);
  Scanner lexer(input);
  FilteringTokenSource source(lexer, ctx);
  TokenWindow tokens(&source, SIZE_MAX);
  for (int k = 0; k < 3; ++k) // pipeline p {
    tokens.consume();
  DirectParser direct(ctx, tokens);
  ast::Pipeline p;
  size_t taken = 0;
  while (direct.parseItem(p))
    ++taken;
  return {taken, tokens.LA(1) == PipeParser::RBRACE && tokens.LA(2) == antlr4::Token::EOF};
}

/// Every field of the AST, ranges as byte offsets (the dump leaves most
/// ranges out).
class Spelling {
public:
  explicit Spelling(const char *base) : base(base) {}

  std::string of(const ast::File &file) {
    for (const ast::Pipeline &p : file.pipelines) {
      put("pipeline", p.name).put(p.range).put(p.hasSyntaxErrors);
      for (const ast::LetDecl &x : p.constants)
        put("let", x.name).put(x.value).put(x.range);
      for (const ast::Setting &x : p.settings)
        put("setting").put(x.kind).put(x.iterations).put(x.syncDeclared).put(x.range);
      for (const ast::DeviceDecl &x : p.devices)
        put("device", x.name).put(x.range);
      for (const ast::StreamDecl &x : p.streams) {
        put("stream", x.name)
            .put(int(x.priority.kind))
            .put(x.priority.raw)
            .put(x.priority.range)
            .put(x.range);
        if (x.device)
          put("on", *x.device);
      }
      for (const ast::BufferDecl &x : p.buffers) {
        put("buffer", x.name).put(x.size).put(x.host).put(x.range);
        if (x.device)
          put("on", *x.device);
        if (x.slots)
          put(*x.slots);
      }
      for (const ast::StageDecl &x : p.stages) {
        put("stage", x.name)
            .put(int(x.kind))
            .put(x.kindRange)
            .put(int(x.direction))
            .put(x.amount)
            .put(x.range);
        if (x.stream)
          put("on", *x.stream);
        put(x.streamList).put(int(x.collective));
        for (const ast::Name &more : x.moreStreams)
          put("", more);
        if (x.peer)
          put("to", *x.peer);
        for (const ast::Attr &a : x.attrs) {
          put("attr", a.name).put(a.range);
          if (a.value())
            put(*a.value());
          if (a.amount())
            put(*a.amount());
        }
        for (const ast::Access &a : x.accesses) {
          put("access").put(a.write).put(a.range).put(int(a.qualifiers.size()));
          for (size_t i = 0; i < a.buffers.size(); ++i) {
            put("", a.buffers[i]);
            if (const ast::Qualifier *q = a.qualifierOf(i)) {
              put("qualifier", *q);
              if (q->distance)
                put(*q->distance);
            }
          }
        }
        for (const ast::Dep &d : x.deps) {
          put("dep", d.stage).put(d.range);
          if (d.qualifier) {
            put("qualifier", *d.qualifier);
            if (d.qualifier->distance)
              put(*d.qualifier->distance);
          }
        }
      }
    }
    return out;
  }

private:
  Spelling &put(const char *what) {
    out += std::string("\n") + what;
    return *this;
  }
  Spelling &put(const char *what, const ast::Name &n) {
    return put(what).put(n.text).put(n.range());
  }
  Spelling &put(llvm::StringRef text) {
    out += " '" + text.str() + "'";
    return *this;
  }
  Spelling &put(uint64_t v) {
    out += ' ' + std::to_string(v);
    return *this;
  }
  Spelling &put(int64_t v) {
    out += ' ' + std::to_string(v);
    return *this;
  }
  Spelling &put(int v) { return put(int64_t(v)); }
  Spelling &put(bool v) { return put(int64_t(v)); }
  Spelling &put(const ast::IntLit &v) {
    put(v.value).put(v.range);
    return v.expr ? put(*v.expr) : *this;
  }
  Spelling &put(const ast::Amount &a) {
    put(a.number).put(a.unit).put(a.range());
    return a.expr ? put(*a.expr) : *this;
  }
  Spelling &put(const ast::Expr &e) {
    for (const ast::ExprNode &n : e.nodes)
      put("node")
          .put(int(n.kind))
          .put(uint64_t(n.lhs))
          .put(uint64_t(n.rhs))
          .put(n.number)
          .put(n.unit)
          .put(n.range);
    return *this;
  }
  Spelling &put(llvm::SMRange r) {
    if (!r.Start.isValid())
      return put("<none>");
    return put(int64_t(r.Start.getPointer() - base)).put(int64_t(r.End.getPointer() - base));
  }

  const char *base;
  std::string out;
};

/// The whole AST of `text`, spelt out.
std::string spelt(const std::string &text, bool directItems) {
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, "t.pipe"),
                                      llvm::SMLoc());
  DiagnosticEngine diags([](const Diagnostic &) {}, 0);
  ParseOptions options;
  options.directItems = directItems;
  llvm::StringRef buffer = sm.getMemoryBuffer(id)->getBuffer();
  ast::File file = parseFile(sm, id, "t.pipe", diags, buffer, options);
  return Spelling(buffer.data()).of(file);
}

std::string withoutDirect(const std::string &text) {
  ParseOptions options;
  options.directItems = false;
  return parseWith(text, options);
}

} // namespace

TEST_CASE("direct parser: takes exactly the items the grammar accepts, "
          "and builds the same AST") {
  ItemGenerator gen(test::seed(5));
  INFO("seed " << test::seed(5) << " (PIPEC_TEST_SEED=N runs every randomized test with N)");
  size_t wellFormed = 0, broken = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string text = "pipeline p {\n";
    const size_t n = 1 + gen.rng() % 4;
    const bool mutate = gen.rng() % 2;
    for (size_t i = 0; i < n; ++i) {
      std::vector<std::string> tokens = gen.item();
      if (mutate && i == n - 1)
        gen.mutate(tokens);
      for (const std::string &t : tokens)
        text += t + ' ';
      text += '\n';
    }
    text += "}\n";
    INFO(text);
    const std::string reference = withoutDirect(text);
    CHECK(parseWith(text, ParseOptions()) == reference);
    CHECK(spelt(text, true) == spelt(text, false));
    // The generated parser's verdict: no diagnostic, the dump first.
    const bool accepted = reference.rfind("File ", 0) == 0;
    auto [taken, atEnd] = directItems(text);
    if (accepted) {
      ++wellFormed;
      CHECK(taken == n);
      CHECK(atEnd);
    } else {
      ++broken;
      CHECK_FALSE((taken == n && atEnd));
    }
  }
  // Both kinds were drawn, many times.
  CHECK(wellFormed > 1000);
  CHECK(broken > 500);
}

TEST_CASE("direct parser: declines an item it cannot take whole, "
          "consuming nothing") {
  for (const char *text :
       {"pipeline p {\nstage a kernel 1us depends_on(b;\n}\n",
        "pipeline p {\nstream s priority - high;\n}\n", "pipeline p {\nbuffer b [2 1MB;\n}\n",
        "pipeline p {\nstage a on kernel 1us;\n}\n"}) {
    INFO(text);
    auto [taken, atEnd] = directItems(text);
    CHECK(taken == 0);
    CHECK_FALSE(atEnd);
    CHECK(parseWith(text, ParseOptions()) == withoutDirect(text));
  }
}
