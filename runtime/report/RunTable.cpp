//===- RunTable.cpp - The default output of `pipec run` -------------------===//

#include "runtime/report/Reports.h"

#include "compiler/emit/Emitters.h"
#include "compiler/program/TimeFormat.h"
#include "model/Gap.h"
#include "model/GraphCost.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace pipec;
using namespace pipec::runtime;
using llvm::formatv;

static void row(llvm::raw_ostream &os, llvm::StringRef label, double us,
                llvm::StringRef note = "") {
  os << "  " << llvm::left_justify(label, 16) << llvm::right_justify(formatTime(us), 12);
  if (!note.empty())
    os << "   " << note;
  os << '\n';
}
/// How much of the overlap the program allows this run achieved: the
/// sequential time less the lower bound is what can overlap at most; the
/// sequential time less the makespan is what did.
static std::string overlap(const Analysis &a, const LoweringRun &r) {
  double possible = a.sequentialUs - a.lowerBoundUs;
  double achieved = a.sequentialUs - r.makespanUs;
  if (possible <= 1e-9)
    return "none possible: the lower bound is the sequential time";
  if (achieved <= 0)
    return formatv("none achieved: the makespan exceeds the sequential time "
                   "({0}) by {1} of overheads",
                   formatTime(a.sequentialUs), formatTime(-achieved));
  return formatv("achieved {0} of the possible overlap ({1} of {2})",
                 formatPercent(std::min(1.0, achieved / possible)), formatTime(achieved),
                 formatTime(possible));
}

void runtime::printRunTable(llvm::ArrayRef<LoweringRun> runs, const Backend &backend,
                            llvm::raw_ostream &os) {
  for (size_t i = 0; i < runs.size(); ++i) {
    const LoweringRun &r = runs[i];
    const Schedule &s = *r.schedule;
    const Analysis &a = s.analysis;
    if (i)
      os << '\n';
    os << formatv("pipeline '{0}', lowered to {1}, on {2}: {3}, {4} "
                  "replay{5}\n",
                  s.pipeline.name, spelling(r.lowering),
                  backend.name() == llvm::StringRef("sim") ? "the device model" : "the GPU",
                  backend.device(), r.replays, r.replays == 1 ? "" : "s");
    if (r.timing != TimingMethod::Model)
      os << "  timeline measured with "
         << (r.timing == TimingMethod::Cupti ? "CUPTI activity records" : "CUDA timing events")
         << (r.timingNote.empty() ? "" : " (" + r.timingNote + ")") << '\n';
    for (const std::string &note : r.notes)
      os << "  note: " << note << '\n';
    row(os, "makespan", r.makespanUs, "first stage start to last stage end");
    row(os, "replay", r.timings.replayMedian,
        formatv("median; p95 {0}; host's first call to last stage end",
                formatTime(r.timings.replayP95))
            .str());
    row(os, "host submit", r.timings.submitMedian, "host time to issue one replay");
    // Where the host's time went, when it did more than make API calls.
    const HostTime &h = r.hostUs;
    auto hostLine = [](const HostTime &h) {
      return formatv("cpu stages {0}, dispatch (issue=) {1}, API calls {2}, blocked {3}",
                     formatTime(h.cpu), formatTime(h.issue), formatTime(h.api),
                     formatTime(h.blocked))
          .str();
    };
    if (h.cpu > 0 || h.issue > 0 || h.blocked > 0) {
      // With several devices, each device's host thread on a line.
      if (r.hostThreadsUs.empty())
        os << "  " << llvm::left_justify("host thread", 28) << "   " << hostLine(h) << '\n';
      for (size_t d = 0; d < r.hostThreadsUs.size(); ++d)
        os << "  " << llvm::left_justify(d ? "" : "host threads", 16)
           << llvm::right_justify(r.schedule->pipeline.devices[d].name, 12) << "   "
           << hostLine(r.hostThreadsUs[d]) << '\n';
    }
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
    if (!a.bounds.empty())
      row(os, "lower bound", a.lowerBoundUs,
          formatv("set by {0}: {1} of the makespan", a.bounds[a.binding].words,
                  formatPercent(r.makespanUs > 0 ? a.lowerBoundUs / r.makespanUs : 1))
              .str());
    if (!r.objectiveWords.empty())
      row(os, "objective", r.objectiveUs, r.objectiveWords);
    // Why the run is longer than the bound, when it is by more than a
    // microsecond.
    if (!r.gap.empty() && r.makespanUs - a.lowerBoundUs >= kMinGainUs) {
      os << formatv("  {0,-16}{1,12}   makespan - lower bound, cost by cost on the device "
                    "model: what taking it away alone saves, and its fair share of taking "
                    "them all away (Shapley: the shares add up to all of them at once, which "
                    "with what remains is the gap):\n",
                    "gap", formatTime(r.makespanUs - a.lowerBoundUs));
      os << formatv("  {0,-16}{1,12} {2,10}\n", "", "alone", "share");
      for (const GapPart &part : r.gap) {
        const bool last = &part >= &r.gap.back() - 1;
        if (std::abs(part.us) >= kMinGainUs || std::abs(part.shareUs) >= kMinGainUs || last)
          os << formatv("  {0,-16}{1,12} {2,10}   {3}{4}\n", "", formatTime(part.us),
                        last ? std::string() : formatTime(part.shareUs), part.cause,
                        gapPartNotes(part));
      }
    }
    os << "  " << llvm::left_justify("overlap", 16) << llvm::right_justify("", 12) << "   "
       << overlap(a, r) << '\n';
    // Each device's share of the run (several devices).
    for (size_t d = 0; d < r.devices.size(); ++d)
      os << "  " << llvm::left_justify(d ? "" : "devices", 16)
         << llvm::right_justify(r.devices[d].name, 12) << "   "
         << describeDeviceUse(r.devices[d], "the makespan") << '\n';
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
    GraphAdvice g = compareRuns(a, b, a.replays);
    os << formatv("\n'{0}': a CUDA graph is {1}:\n", a.schedule->pipeline.name,
                  g.suitable ? "worth it" : "not worth it");
    for (const std::string &reason : g.reasons)
      os << "  " << reason << '\n';
  }
}
