#include "FrontendHelpers.h"

#include <doctest/doctest.h>

#include "Seed.h"

#include <random>

using namespace pipec;
using pipec::test::FrontendRun;
using pipec::test::parseWith;

TEST_CASE("parser: the seed sample gives the AST it spells") {
  FrontendRun run(R"(pipeline infer {
  stream copy    priority low;
  stream compute priority high;
  stage H2D    on copy    copy h2d 12us;
  stage Kernel on compute kernel 40us [blocks=264] depends_on(H2D, Kernel@prev);
})");
  REQUIRE(run.errors == 0);
  REQUIRE(run.file.pipelines.size() == 1);
  const ast::Pipeline &p = run.file.pipelines[0];
  CHECK(p.name.text == "infer");
  REQUIRE(p.streams.size() == 2);
  CHECK(p.streams[0].priority.kind == ast::PriorityKind::Low);
  REQUIRE(p.stages.size() == 2);
  CHECK(p.stages[0].kind == StageKind::Copy);
  CHECK(p.stages[0].direction == CopyDirection::H2D);
  CHECK(p.stages[0].amount.number == "12");
  CHECK(p.stages[0].amount.unit == "us");
  const ast::StageDecl &k = p.stages[1];
  CHECK(k.stream->text == "compute");
  REQUIRE(k.attrs.size() == 1);
  CHECK(k.attrs[0].value()->value == 264);
  REQUIRE(k.deps.size() == 2);
  CHECK_FALSE(k.deps[0].qualifier);
  CHECK(k.deps[1].qualifier->text == "@prev");
}

TEST_CASE("parser: contextual keywords are names where a name is expected") {
  FrontendRun run("pipeline copy { stream kernel; stream h2d priority -2;"
                  " stage host on kernel host 1us;"
                  " stage low on h2d copy d2d 1MB depends_on(host); }");
  CHECK(run.errors == 0);
  REQUIRE(run.program.pipelines.size() == 1);
  CHECK(run.program.pipelines[0].stages[1].name == "low");
}

TEST_CASE("parser: locations are byte columns, also after non-ASCII text") {
  // The comment holds a 3-byte character; the error column counts bytes.
  FrontendRun run("pipeline p { /* \xe2\x80\x94 */ stage A on x kernel 1us; }");
  REQUIRE(run.all.size() == 1);
  CHECK(run.all[0].column == 35); // 34 bytes before it, 32 code points
  CHECK(run.all[0].message == "unknown stream 'x'");
}

TEST_CASE("parser: invalid UTF-8, NUL and CRLF are handled") {
  FrontendRun crlf("pipeline p {\r\n  stage A kernel 1us;\r\n}\r\n");
  CHECK(crlf.errors == 0);
  FrontendRun nul(std::string("pipeline p { stage A kernel 1us; }\0", 36));
  CHECK(nul.has("unexpected character U+0000"));
  FrontendRun bad("pipeline p { \xff stage A kernel 1us; }");
  CHECK(bad.has("byte 0xff is not valid UTF-8"));
  CHECK(bad.all[0].column == 14);
}

TEST_CASE("parser: one missing semicolon gives one error") {
  FrontendRun run("pipeline p {\n stream s\n stage A on s kernel 1us;\n"
                  " stage B on s kernel 1us depends_on(A);\n}\n");
  REQUIRE(run.errors == 1);
  CHECK(run.all[0].message == "expected ';' after stream declaration");
  CHECK(run.all[0].line == 2);
  CHECK(run.all[0].column == 10);
}

TEST_CASE("parser: the error limit stops a flood") {
  std::string text(1 << 20, '$');
  for (size_t i = 0; i < text.size(); i += 2)
    text[i] = ' ';
  FrontendRun run(text, 20);
  CHECK(run.errors == 21); // 20 and the "too many errors" one
  CHECK(run.all.back().message.find("too many errors") == 0);
}

TEST_CASE("parser: random bytes never crash and always give an error") {
  PIPEC_SEEDED(rng, 7);
  std::string alphabet = "pipeline stream stage on depends_on kernel copy h2d "
                         "{}()[];,=@-0123456789.us\n/*";
  for (int round = 0; round < 300; ++round) {
    std::string text;
    size_t n = rng() % 200;
    for (size_t i = 0; i < n; ++i)
      text += (rng() % 4 == 0) ? static_cast<char>(rng() % 256)
                               : alphabet[rng() % alphabet.size()];
    FrontendRun run(text, 20);
    // Either valid, or at least one error: never silence and no crash.
    if (run.errors == 0)
      CHECK(!run.file.pipelines.empty());
  }
}

namespace {

/// Parses `text` freeing passed tokens after `freeAfter`.
std::string parseFreeing(const std::string &text, size_t freeAfter) {
  ParseOptions options;
  options.freeAfter = freeAfter;
  return parseWith(text, options);
}

} // namespace

TEST_CASE("parser: freeing passed tokens changes nothing it reports") {
  // The parser frees tokens between items and inside error recovery; the
  // slow, obvious parse keeps them all. Random mixes of good items, broken
  // items and debris must give the same diagnostics and the same AST.
  const std::vector<std::string> pieces = {"stream s;",
                                           "stream t priority -1;",
                                           "stage a on s kernel 10us;",
                                           "stage b kernel 5us depends_on a;",
                                           "buffer x 1MB;",
                                           "stage c on t kernel 3us reads x;",
                                           "iterations 3;",
                                           "(((((",
                                           ";",
                                           "stage",
                                           "kernel",
                                           "10 us",
                                           "depends_on",
                                           "@",
                                           "/* c */",
                                           "// l\n",
                                           "\n",
                                           "stage d on s copy h2d 1MB;",
                                           "sync x;",
                                           "stage e kernel ))) 4us;",
                                           "stream ;;;",
                                           "12",
                                           "x",
                                           "stage y on s kernel",
                                           "stream u",
                                           "stage z on",
                                           "buffer"};
  PIPEC_SEEDED(rng, 11);
  for (int round = 0; round < 1000; ++round) {
    std::string text = "pipeline p {\n";
    size_t n = 1 + rng() % 60;
    for (size_t i = 0; i < n; ++i) {
      text += pieces[rng() % pieces.size()] + ' ';
      if (rng() % 30 == 0)
        text += "}\npipeline q {\n";
    }
    text += "\n}\n";
    INFO(text);
    CHECK(parseFreeing(text, 1) == parseFreeing(text, SIZE_MAX));
  }
}
TEST_CASE("parser: freeing tokens keeps quiet-until-boundary across items") {
  // The error in the first item makes the parser quiet until a ';' or '}';
  // that ';' is freed before the second item is parsed, and the second
  // item's error must still be reported.
  for (const char *text :
       {"pipeline p {\n stage e kernel ))) 4us;\n stage ;\n}\n",
        "pipeline p {\n stage e kernel (((\n stage f kernel ))) 1us;\n stage ;\n}\n",
        "pipeline p {\n stream ;\n stream t;\n stage ;\n}\n"}) {
    INFO(text);
    std::string kept = parseFreeing(text, SIZE_MAX);
    CHECK(parseFreeing(text, 1) == kept);
  }
  CHECK(parseFreeing("pipeline p {\n stage e kernel ))) 4us;\n stage ;\n}\n", 1)
            .find("3:8 expected stage name after 'stage'") != std::string::npos);
}
