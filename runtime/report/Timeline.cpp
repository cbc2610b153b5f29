//===- Timeline.cpp - A Gantt chart of the streams, in text ---------------===//

#include "runtime/report/Reports.h"

#include "compiler/program/TimeFormat.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace pipec;
using namespace pipec::runtime;

/// The letter that stands for stage `index` of the pipeline.
static char symbolFor(uint32_t index) {
  static const char symbols[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return index < sizeof(symbols) - 1 ? symbols[index] : '#';
}

void runtime::printTimeline(const LoweringRun &r, llvm::raw_ostream &os, unsigned width) {
  const Schedule &s = *r.schedule;
  const double span = std::max(r.makespanUs, 1e-9);
  const double origin = r.firstStartUs;
  // The streams, then each host thread that runs cpu stages on a lane of
  // its own: "host", or "DEVICE/host" with several devices.
  auto label = [&](uint32_t chain) {
    if (chain < s.hostChain())
      return s.streamLabel(chain);
    if (s.pipeline.devices.size() <= 1)
      return std::string("host");
    return s.pipeline.devices[s.threadOfChain(chain)].name + "/host";
  };
  std::vector<uint8_t> shownLane(s.chains(), 0);
  for (uint32_t st = 0; st < s.hostChain(); ++st)
    shownLane[st] = 1;
  for (uint32_t v = 0; v < r.start.size(); ++v)
    if (s.onHost(v))
      shownLane[s.streamOf(v)] = 1;
  size_t nameWidth = 0;
  for (uint32_t st = 0; st < s.chains(); ++st)
    if (shownLane[st])
      nameWidth = std::max(nameWidth, label(st).size());

  os << llvm::formatv("timeline of '{0}' ({1}), {2} across, one column "
                      "= {3}; a letter where a stage covers at least half a "
                      "column (a shorter stage keeps its best one):\n",
                      s.pipeline.name, spelling(r.lowering), formatTime(r.makespanUs),
                      formatTime(span / width));
  for (uint32_t st = 0; st < s.chains(); ++st) {
    if (!shownLane[st])
      continue;
    std::string cells(width, ' ');
    std::vector<double> covered(width, 0);
    double busy = 0;
    // Columns a stage covers at least half of; then short stages, each in
    // the column it covers most, where that column is still free.
    std::vector<std::pair<uint32_t, unsigned>> shortStages;
    for (uint32_t v = 0; v < r.start.size(); ++v) {
      if (s.streamOf(v) != st)
        continue;
      busy += std::max(0.0, r.end[v] - r.start[v]);
      double a = (r.start[v] - origin) / span * width;
      double b = (r.end[v] - origin) / span * width;
      unsigned first = static_cast<unsigned>(std::max(0.0, a));
      unsigned last = std::min<unsigned>(width - 1, static_cast<unsigned>(b));
      bool drawn = false;
      unsigned best = first;
      double bestOverlap = -1;
      for (unsigned c = first; c <= last && c < width; ++c) {
        double overlap = std::min<double>(b, c + 1) - std::max<double>(a, c);
        if (overlap > bestOverlap)
          bestOverlap = overlap, best = c;
        if (overlap >= 0.5 && overlap > covered[c]) {
          covered[c] = overlap;
          cells[c] = symbolFor(s.instances.stageOf(v));
          drawn = true;
        }
      }
      if (!drawn && best < width)
        shortStages.push_back({v, best});
    }
    for (auto [v, c] : shortStages)
      if (cells[c] == ' ')
        cells[c] = symbolFor(s.instances.stageOf(v));
    os << "  " << llvm::left_justify(label(st), nameWidth) << " |" << cells << "| "
       << formatPercent(std::min(1.0, busy / span)) << " busy\n";
  }
  os << "  " << std::string(nameWidth, ' ') << " 0"
     << llvm::right_justify(formatTime(r.makespanUs), width + 1) << '\n';
  os << "  ";
  for (uint32_t i = 0; i < s.pipeline.stages.size(); ++i)
    os << (i ? ", " : "") << symbolFor(i) << " = " << s.pipeline.stages[i].name;
  os << '\n';
}
