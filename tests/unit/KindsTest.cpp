//===- KindsTest.cpp - Every stage kind through every layer ---------------===//
//
// For each kind of StageKinds.def (and each copy direction and collective
// operation): a small program that uses it is checked, laid out by `fmt`
// and read back to the same program, scheduled, run on the device model in
// both lowerings, and written by every emitter and report. A kind that a
// layer does not handle fails here; a kind added to the table without a
// sample here fails too (and, with warnings as errors, does not build:
// samplesOf switches over the kinds).
//
//===----------------------------------------------------------------------===//

#include "compiler/emit/Emitters.h"
#include "compiler/format/Formatter.h"
#include "compiler/schedule/Schedule.h"
#include "model/SimBackend.h"
#include "runtime/Backend.h"
#include "runtime/report/Reports.h"

#include "FrontendHelpers.h"
#include "ProgramText.h"

#include "llvm/Support/JSON.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace pipec;

namespace {

const char *kOneDevice = "  stream s;\n  stream t;\n";
const char *kTwoDevices = "  device a;\n  device b;\n  stream s on a;\n  stream t on b;\n";

/// Between a kernel before it and one after it: K is the stage of the kind.
std::string around(const std::string &version, const char *streams, const std::string &stage) {
  return version + "pipeline p {\n  iterations 2;\n" + streams +
         "  stage P on s kernel 5us;\n" + stage +
         "\n  stage N on s kernel 5us depends_on(K);\n}\n";
}

std::string twoDevices(const std::string &stage) {
  return around("version 4;\n", kTwoDevices, stage);
}

/// Programs that use `kind`, in every variant it has.
std::vector<std::string> samplesOf(StageKind kind) {
  std::vector<std::string> out;
  switch (kind) {
  case StageKind::Kernel:
    out.push_back(around("", kOneDevice,
                         "  stage K on t kernel 20us [blocks=264, threads=256] "
                         "depends_on(P);"));
    break;
  case StageKind::Copy:
    for (CopyDirection d : kCopyDirections) {
      if (d == CopyDirection::P2P)
        out.push_back(twoDevices("  stage K on s copy p2p 4MB to b depends_on(P);"));
      else
        out.push_back(
            around("", kOneDevice,
                   std::string("  stage K on t copy ") + spelling(d) + " 4MB depends_on(P);"));
    }
    break;
  case StageKind::Host:
    out.push_back(around("", kOneDevice, "  stage K on t host 20us depends_on(P);"));
    break;
  case StageKind::Memset:
    out.push_back(around("", kOneDevice, "  stage K on t memset 4MB depends_on(P);"));
    break;
  case StageKind::Cpu:
    out.push_back(around("version 3;\n", kOneDevice, "  stage K cpu 20us depends_on(P);"));
    break;
  case StageKind::Collective:
    for (CollectiveOp op : kCollectiveOps)
      out.push_back(twoDevices(std::string("  stage K on (s, t) ") + spelling(op) +
                               " 4MB depends_on(P);"));
    break;
  }
  return out;
}

std::string emitted(void (*emit)(llvm::ArrayRef<const Schedule *>, llvm::raw_ostream &),
                    const Schedule &s) {
  std::string out;
  llvm::raw_string_ostream os(out);
  emit({&s}, os);
  return os.str();
}

} // namespace

TEST_CASE("kinds: every stage kind is read, laid out, scheduled, run and written by every "
          "layer") {
  size_t programs = 0;
  for (StageKind kind : kStageKinds) {
    INFO("kind " << spelling(kind));
    CHECK(std::string(spelling(kind)) != "?");
    CHECK(std::string(nounOf(kind)) != "?");
    const std::vector<std::string> samples = samplesOf(kind);
    CHECK_MESSAGE(!samples.empty(), "no sample program for this kind in KindsTest.cpp");
    for (const std::string &text : samples) {
      INFO(text);
      ++programs;
      test::FrontendRun front(text);
      REQUIRE(front.errors == 0);
      const program::Pipeline &p = front.program.pipelines.at(0);
      uint32_t k = 0;
      while (k < p.stages.size() && p.stages[k].name.rfind("K", 0) != 0)
        ++k;
      REQUIRE(k < p.stages.size());
      CHECK(p.stages[k].kind() == kind);
      // A file that says an older version than the kind's is refused.
      if (versionOf(kind) > 1) {
        std::string older = text;
        older.replace(older.find("version "), 10,
                      "version " + std::to_string(versionOf(kind) - 1) + ";");
        test::FrontendRun refused(older);
        CHECK(refused.has(std::string(nounOf(kind)) + " came with language version"));
      }

      // fmt's layout reads back as the same program.
      const std::string laidOut = formatFile(front.file, text);
      test::FrontendRun again(laidOut);
      REQUIRE(again.errors == 0);
      CHECK(test::programText(again.program) == test::programText(front.program));

      // Scheduled, and run in each lowering the program has: every instance
      // runs, none sooner than its time, the orderings kept, above the bound.
      DeviceProfile profile;
      Schedule s(p, profile, ScheduleOptions());
      auto backend = runtime::makeSimBackend(profile);
      std::vector<runtime::LoweringRun> runs;
      for (Lowering l : {Lowering::Streams, Lowering::Graph}) {
        if (l == Lowering::Graph && p.deviceCount() > 1)
          continue; // several devices lower to streams only
        auto r = backend->run(s, l, runtime::RunOptions());
        REQUIRE(static_cast<bool>(r));
        CHECK(r->violations == 0);
        CHECK(s.analysis.lowerBoundUs <= r->makespanUs + 1e-6);
        for (uint32_t v = 0; v < s.instances.size(); ++v) {
          CHECK(r->end[v] >= 0);
          if (s.instances.stageOf(v) == k)
            CHECK(r->end[v] - r->start[v] >= p.stages[k].durationUs - 1e-6);
        }
        runs.push_back(std::move(*r));
      }

      // Every emitter and report writes it.
      std::string textOut;
      {
        llvm::raw_string_ostream os(textOut);
        emitText(s, os);
      }
      CHECK(textOut.find("K") != std::string::npos);
      std::string json;
      {
        llvm::raw_string_ostream os(json);
        emitJSON({&s}, text, os);
      }
      llvm::Expected<llvm::json::Value> doc = llvm::json::parse(json);
      REQUIRE(static_cast<bool>(doc));
      CHECK(json.find(std::string("\"kind\":\"") + spelling(kind) + "\"") !=
            std::string::npos);
      CHECK(emitted(emitDot, s).find("K") != std::string::npos);
      std::string cuda;
      {
        llvm::raw_string_ostream os(cuda);
        llvm::Error e = emitCuda({&s}, text, profile, os);
        CHECK_FALSE(static_cast<bool>(e));
        llvm::consumeError(std::move(e));
      }
      CHECK(cuda.find("int main(") != std::string::npos);
      std::string html, trace;
      {
        llvm::raw_string_ostream os(html), ts(trace);
        runtime::writeHtml(runs, *backend, text, os);
        runtime::writeTrace(runs, ts);
      }
      CHECK(html.find("K") != std::string::npos);
      CHECK(static_cast<bool>(llvm::json::parse(trace)));
    }
  }
  CHECK(programs >= 12); // 6 kinds: copies in 4 directions, collectives of 4 operations
}
