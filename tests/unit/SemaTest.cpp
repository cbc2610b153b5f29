#include "FrontendHelpers.h"
#include "RandomPrograms.h"

#include "compiler/sema/Suggest.h"
#include "compiler/sema/Units.h"

#include <doctest/doctest.h>

#include "Seed.h"

using namespace pipec;
using pipec::test::FrontendRun;

TEST_CASE("sema: units normalise to microseconds and bytes") {
  using sema::parseQuantity;
  using sema::Quantity;
  CHECK(parseQuantity("12", "us").micros == doctest::Approx(12));
  CHECK(parseQuantity("1.5", "ms").micros == doctest::Approx(1500));
  CHECK(parseQuantity("250", "ns").micros == doctest::Approx(0.25));
  CHECK(parseQuantity("2", "s").micros == doctest::Approx(2e6));
  CHECK(parseQuantity("4", "KiB").bytes == 4096);
  CHECK(parseQuantity("0.5", "KB").bytes == 500);
  CHECK(parseQuantity("1.5", "MiB").bytes == 1572864);
  CHECK(parseQuantity("1.5", "B").fractionalBytes);
  CHECK(parseQuantity("1025", "GiB").tooLarge);
  CHECK_FALSE(parseQuantity("1024", "GiB").tooLarge);
  CHECK(parseQuantity("12", "").kind == Quantity::Bare);
  CHECK(parseQuantity("12", "TB").kind == Quantity::UnknownUnit);
  CHECK(parseQuantity("99999999999999999999999999999999999", "B").tooLarge);
}

TEST_CASE("sema: did you mean picks the unique nearest name within 2") {
  std::vector<llvm::StringRef> names = {"compute", "copy", "post"};
  CHECK(sema::suggestName("comptue", names) == 0u);
  CHECK(sema::suggestName("cop", names) == 1u);
  CHECK_FALSE(sema::suggestName("elsewhere", names).has_value());
  std::vector<llvm::StringRef> tie = {"ab", "ac"};
  CHECK_FALSE(sema::suggestName("a", tie).has_value());
}

TEST_CASE("sema: the program has resolved streams, durations and deps") {
  FrontendRun run(R"(pipeline p {
  iterations 3;
  stream copy priority low;
  stream compute priority high;
  stream other;
  stream raw priority -4;
  stage In on copy copy h2d 52MB;
  stage K on compute kernel 40us [blocks=264, threads=512] depends_on(In, K@prev);
  stage Free kernel 1us [dynamic] depends_on(K);
  stage O on other host 1us depends_on(Free);
  stage R on raw host 1us;
})");
  REQUIRE(run.errors == 0);
  const program::Pipeline &p = run.program.pipelines.at(0);
  CHECK(p.iterations == 3);
  CHECK(p.streams[0].cudaPriority == 0);
  CHECK(p.streams[1].cudaPriority == -5);
  CHECK(p.streams[2].cudaPriority == -2); // normal: midpoint towards low
  CHECK(p.streams[3].cudaPriority == -4);
  CHECK(p.stages[0].bytes == 52000000u);
  CHECK(p.stages[0].durationUs == doctest::Approx(1000)); // 52 GB/s
  CHECK(p.stages[1].kernel().blocks == 264);
  CHECK(p.stages[1].kernel().threads == 512);
  REQUIRE(p.stages[1].deps.size() == 2);
  CHECK(p.stages[1].deps[1].previousIteration());
  CHECK(p.stages[2].stream == program::kNoStream);
  CHECK(p.stages[2].dynamic);
}

TEST_CASE("sema: all errors of a file are reported in source order") {
  FrontendRun run(R"(pipeline p {
  stage A on nope kernel 1us depends_on(Z);
  stage B kernel 4KB depends_on(B);
})");
  REQUIRE(run.errors == 4);
  CHECK(run.all[0].message == "unknown stream 'nope'");
  CHECK(run.all[1].message == "unknown stage 'Z'");
  CHECK(run.all[2].message.find("expects a time") != std::string::npos);
  CHECK(run.all[3].message ==
        "stage 'B' depends on itself; write 'B@prev' to depend on its previous iteration");
  for (size_t i = 1; i < run.all.size(); ++i)
    CHECK(std::make_pair(run.all[i - 1].line, run.all[i - 1].column) <=
          std::make_pair(run.all[i].line, run.all[i].column));
}

TEST_CASE("sema: a pipeline with a syntax error is not analysed further") {
  FrontendRun run("pipeline a { stage A on nowhere kernel 1us }\n"
                  "pipeline b { stage B on nowhere kernel 1us; }\n");
  // a: the syntax error only; b: its unknown stream.
  REQUIRE(run.errors == 2);
  CHECK(run.all[0].message.find("expected ';'") == 0);
  CHECK(run.all[1].message == "unknown stream 'nowhere'");
}

#include "compiler/sema/Suggest.h"

#include <random>

TEST_CASE("suggest: the index answers as the slow scan does") {
  PIPEC_SEEDED(rng, 51);
  const char alphabet[] = "abc_1";
  auto word = [&](size_t length) {
    std::string w;
    for (size_t i = 0; i < length; ++i)
      w += alphabet[rng() % 5];
    return w;
  };
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<std::string> storage;
    for (int i = 0, n = 1 + rng() % 40; i < n; ++i)
      storage.push_back(word(1 + rng() % (trial % 3 == 0 ? 30 : 6)));
    std::vector<llvm::StringRef> names(storage.begin(), storage.end());
    pipec::sema::NameIndex index(names);
    for (int q = 0; q < 20; ++q) {
      std::string typo = word(1 + rng() % (trial % 3 == 0 ? 30 : 6));
      uint64_t budget = 1'000'000;
      auto fast = index.suggest(typo, budget);
      auto slow = pipec::sema::suggestName(typo, names);
      INFO(typo);
      REQUIRE(fast.has_value() == slow.has_value());
      if (fast)
        CHECK(names[*fast] == names[*slow]);
    }
  }
}

namespace {

/// Everything sema decided, as text: diagnostics and the program.
std::string describe(const FrontendRun &run) {
  std::string out;
  for (const test::Captured &c : run.all)
    out += std::to_string(int(c.severity)) + " " + std::to_string(c.line) + ":" +
           std::to_string(c.column) + " " + c.message + "\n";
  for (const program::Pipeline &p : run.program.pipelines) {
    out += "pipeline " + p.name + " x" + std::to_string(p.iterations) + "\n";
    for (const program::Stage &st : p.stages) {
      out += "  " + st.name + " on " + std::to_string(st.stream) + " " +
             std::to_string(st.durationUs) + "us kind " + std::to_string(st.work.index());
      if (const auto *kernel = std::get_if<program::KernelWork>(&st.work))
        out += " blocks " + std::to_string(kernel->blocks);
      for (const program::Dependency &d : st.deps)
        out += " <- " + std::to_string(d.stage) + "@" + std::to_string(d.distance) + "/" +
               std::to_string(d.inferredFrom);
      for (const program::Access &a : st.accesses)
        out += (a.write ? " w" : " r") + std::to_string(a.buffer);
      out += "\n";
    }
  }
  return out;
}

} // namespace

TEST_CASE("sema: analysing while freeing the AST decides exactly the same") {
  // Random programs, some broken (unknown, misspelt and redefined names, a
  // cycle), some with buffers to infer dependencies from: the consuming
  // analyze (pipec check, compile) against the one that keeps the AST.
  PIPEC_SEEDED(rng, 18);
  for (int round = 0; round < 400; ++round) {
    std::string text = test::randomWorkload(rng);
    const size_t close = text.rfind('}');
    switch (rng() % 6) {
    case 0: // a dependency on a misspelt name
      text.insert(close, "  stage Bad kernel 1us depends_on(X0x, Nowhere);\n");
      break;
    case 1: // a redefinition, and a cycle through it
      text.insert(close, "  stage X0 kernel 1us depends_on(X0);\n");
      break;
    case 2: // buffers, for sync inferred
      text.insert(text.find('\n') + 1, "  buffer b0 1MiB;\n  buffer b1[2] 4KB;\n");
      text.insert(text.rfind('}'), "  stage W kernel 2us writes(b0, b1);\n"
                                   "  stage R kernel 3us reads(b0) writes(b1);\n"
                                   "  stage U kernel 1us reads(b2);\n");
      break;
    default:
      break;
    }
    FrontendRun kept(text), consumed(text, 0, DeviceProfile(), true);
    INFO(text);
    CHECK(describe(consumed) == describe(kept));
  }
}
