//===- RunTable.cpp - The default output of `pipec run` -------------------===//

#include "runtime/report/Reports.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace pipec;
using namespace pipec::runtime;
using llvm::formatv;

static void row(llvm::raw_ostream &os, llvm::StringRef label, double us,
                llvm::StringRef note = "") {
  os << "  " << llvm::left_justify(label, 16)
     << llvm::right_justify(formatv("{0:f1} us", us).str(), 12);
  if (!note.empty())
    os << "   " << note;
  os << '\n';
}

void runtime::printRunTable(llvm::ArrayRef<LoweringRun> runs,
                            const Backend &backend, llvm::raw_ostream &os) {
  for (size_t i = 0; i < runs.size(); ++i) {
    const LoweringRun &r = runs[i];
    const Schedule &s = *r.schedule;
    const Analysis &a = s.analysis;
    if (i)
      os << '\n';
    os << formatv("pipeline '{0}', lowered to {1}, on {2}: {3}, {4} "
                  "replay{5}\n",
                  s.pipeline.name, spelling(r.lowering),
                  backend.name() == llvm::StringRef("sim") ? "the device model"
                                                           : "the GPU",
                  backend.device(), r.replays, r.replays == 1 ? "" : "s");
    if (r.timing != TimingMethod::Model)
      os << "  timeline measured with "
         << (r.timing == TimingMethod::Cupti ? "CUPTI activity records"
                                             : "CUDA timing events")
         << (r.timingNote.empty() ? "" : " (" + r.timingNote + ")") << '\n';
    row(os, "makespan", r.makespanUs, "first stage start to last stage end");
    row(os, "replay", r.timings.replayMedian,
        formatv("median; p95 {0:f1} us; host's first call to last stage end",
                r.timings.replayP95)
            .str());
    row(os, "host submit", r.timings.submitMedian, "host time to issue one replay");
    if (r.lowering == Lowering::Graph) {
      row(os, "capture", r.timings.capture, "stream capture, once");
      row(os, "instantiate", r.timings.instantiate, "cudaGraphInstantiate, once");
      row(os, "first launch", r.timings.firstLaunch, "includes the upload");
      if (r.explicitInstantiateUs > 0) {
        row(os, "explicit build", r.explicitBuildUs,
            "cudaGraphAdd*Node with the schedule's edges");
        row(os, "explicit inst.", r.explicitInstantiateUs,
            "its instantiation; replays run this graph");
      }
    }
    double achieved = a.sequentialUs > 0 ? 1 - r.makespanUs / a.sequentialUs : 0;
    os << "  " << llvm::left_justify("overlap", 16)
       << llvm::right_justify(formatv("{0:p1}", achieved).str(), 12)
       << formatv("   achieved; the analysis allows {0:p1} (lower bound "
                  "{1:f1} us, {2:p0} of it reached)\n",
                  a.overlapRatio, a.lowerBoundUs,
                  r.makespanUs > 0 ? a.lowerBoundUs / r.makespanUs : 1.0);
    if (r.violations)
      os << formatv("  DEPENDENCY VIOLATIONS: {0} stage pair(s) started before "
                    "what they depend on had ended\n",
                    r.violations);
    else
      os << "  dependency violations: none\n";
  }

  // Both lowerings of one pipeline: say which is faster, and when a graph
  // pays back its instantiation.
  for (size_t i = 0; i + 1 < runs.size(); ++i) {
    const LoweringRun &a = runs[i], &b = runs[i + 1];
    if (a.schedule != b.schedule || a.lowering != Lowering::Streams ||
        b.lowering != Lowering::Graph)
      continue;
    double saved = a.timings.replayMedian - b.timings.replayMedian;
    os << formatv("\n'{0}': graph replay {1:f1} us vs streams {2:f1} us: ",
                  a.schedule->pipeline.name, b.timings.replayMedian,
                  a.timings.replayMedian);
    if (saved > 0)
      os << formatv("the graph saves {0:f1} us per replay and pays back its "
                    "capture and instantiation ({1:f1} us) after {2:f1} "
                    "replays\n",
                    saved, b.timings.capture + b.timings.instantiate,
                    (b.timings.capture + b.timings.instantiate) / saved);
    else
      os << "streams are as fast or faster; a graph does not pay here\n";
  }
}
