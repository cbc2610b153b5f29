//===- Compare.cpp - Two runs side by side (`pipec run --compare`) --------===//
//
// The before/after users make by hand: each figure of the run table for run
// A and run B, and B - A (with the change in percent of A where A is not
// zero). Runs are paired in order: the same lowering of the n-th pipeline
// of each file.
//
//===----------------------------------------------------------------------===//

#include "runtime/report/Reports.h"

#include "compiler/program/TimeFormat.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>

using namespace pipec;
using namespace pipec::runtime;
using llvm::formatv;

namespace {

constexpr unsigned kLabel = 16, kColumn = 14;

std::string signedTime(double us) {
  if (us == 0)
    return "0";
  return (us < 0 ? "-" : "+") + formatTime(std::abs(us));
}

std::string change(double a, double b) {
  if (a == 0 || a == b)
    return "";
  return formatv(" ({0}{1:f1}%)", b >= a ? "+" : "-", std::abs(b - a) / a * 100).str();
}

void timeRow(llvm::raw_ostream &os, llvm::StringRef label, double a, double b) {
  // Under a nanosecond apart is the same time: the model keeps times to a
  // picosecond, and two runs that start at different times may round the
  // same span a picosecond apart.
  if (std::abs(b - a) < 1e-3)
    b = a;
  os << "  " << llvm::left_justify(label, kLabel)
     << llvm::right_justify(formatTime(a), kColumn)
     << llvm::right_justify(formatTime(b), kColumn)
     << llvm::right_justify(signedTime(b - a), kColumn) << change(a, b) << '\n';
}

/// A share of the makespan, in percent, and B - A in points.
void shareRow(llvm::raw_ostream &os, llvm::StringRef label, double a, double b) {
  const double d = (b - a) * 100;
  os << "  " << llvm::left_justify(label, kLabel)
     << llvm::right_justify(formatPercent(a, 1), kColumn)
     << llvm::right_justify(formatPercent(b, 1), kColumn)
     << llvm::right_justify(
            d == 0 ? std::string("0")
                   : formatv("{0}{1:f1} pt", d > 0 ? "+" : "-", std::abs(d)).str(),
            kColumn)
     << '\n';
}

void countRow(llvm::raw_ostream &os, llvm::StringRef label, uint64_t a, uint64_t b) {
  const int64_t d = int64_t(b) - int64_t(a);
  os << "  " << llvm::left_justify(label, kLabel)
     << llvm::right_justify(std::to_string(a), kColumn)
     << llvm::right_justify(std::to_string(b), kColumn)
     << llvm::right_justify(d > 0 ? "+" + std::to_string(d) : std::to_string(d), kColumn)
     << '\n';
}

std::string deviceWords(const Backend &backend) {
  return formatv("{0}: {1}",
                 backend.name() == llvm::StringRef("sim") ? "the device model" : "the GPU",
                 backend.device())
      .str();
}

} // namespace

void runtime::printComparison(llvm::ArrayRef<LoweringRun> a, llvm::ArrayRef<LoweringRun> b,
                              const Backend &backendA, const Backend &backendB,
                              llvm::StringRef nameA, llvm::StringRef nameB,
                              llvm::raw_ostream &os) {
  os << "A: " << nameA << ", on " << deviceWords(backendA) << '\n'
     << "B: " << nameB << ", on " << deviceWords(backendB) << '\n';
  const size_t pairs = std::min(a.size(), b.size());
  for (size_t i = 0; i < pairs; ++i) {
    const LoweringRun &ra = a[i], &rb = b[i];
    const Schedule &sa = *ra.schedule, &sb = *rb.schedule;
    os << '\n'
       << formatv("pipeline '{0}' against '{1}', lowered to {2}, {3} replay{4}\n",
                  sa.pipeline.name, sb.pipeline.name, spelling(ra.lowering), ra.replays,
                  ra.replays == 1 ? "" : "s")
       << "  " << llvm::left_justify("", kLabel) << llvm::right_justify("A", kColumn)
       << llvm::right_justify("B", kColumn) << llvm::right_justify("B - A", kColumn) << '\n';
    timeRow(os, "makespan", ra.makespanUs, rb.makespanUs);
    timeRow(os, "replay", ra.timings.replayMedian, rb.timings.replayMedian);
    timeRow(os, "host submit", ra.timings.submitMedian, rb.timings.submitMedian);
    if (ra.lowering == Lowering::Graph) {
      timeRow(os, "instantiate", ra.timings.instantiate, rb.timings.instantiate);
      timeRow(os, "first launch", ra.timings.firstLaunch, rb.timings.firstLaunch);
    }
    timeRow(os, "lower bound", sa.analysis.lowerBoundUs, sb.analysis.lowerBoundUs);
    timeRow(os, "critical path", sa.analysis.criticalPathUs, sb.analysis.criticalPathUs);
    if (!ra.objectiveWords.empty() && ra.objectiveWords == rb.objectiveWords)
      timeRow(os, "objective", ra.objectiveUs, rb.objectiveUs);
    // Several devices: the bubble (each device's idle share of the run) of
    // the device idle the longest, and on average.
    if (!ra.devices.empty() && !rb.devices.empty()) {
      auto worst = [](const LoweringRun &r) {
        double w = 0;
        for (const DeviceUse &d : r.devices)
          w = std::max(w, d.bubbleFraction);
        return w;
      };
      auto mean = [](const LoweringRun &r) {
        double sum = 0;
        for (const DeviceUse &d : r.devices)
          sum += d.bubbleFraction;
        return sum / double(r.devices.size());
      };
      shareRow(os, "bubble, most", worst(ra), worst(rb));
      shareRow(os, "bubble, mean", mean(ra), mean(rb));
    }
    countRow(os, "streams", sa.streamPlan.streams.size(), sb.streamPlan.streams.size());
    if (ra.lowering == Lowering::Streams) {
      countRow(os, "waits", sa.waits, sb.waits);
      countRow(os, "records", sa.records, sb.records);
      countRow(os, "host syncs", sa.syncs, sb.syncs);
    }
    countRow(os, "violations", ra.violations, rb.violations);
  }
  if (a.size() != b.size())
    os << '\n'
       << formatv("note: A has {0} run(s) and B {1}: only the first {2} are compared "
                  "(--pipeline=NAME picks one pipeline of each)\n",
                  a.size(), b.size(), pairs);
}
