//===- Timeline.cpp - A Gantt chart of the streams, in text ---------------===//

#include "runtime/report/Reports.h"

#include "compiler/program/TimeFormat.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace pipec;
using namespace pipec::runtime;

/// The letters stages are drawn with.
static const char kSymbols[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
constexpr size_t kLetters = sizeof(kSymbols) - 1;

/// The letter of each stage of the pipeline: by declaration order while
/// there are letters enough; past that, the stages that take the most time
/// in the run get the letters but one, and the others share '#'.
static std::vector<char> symbolsFor(const LoweringRun &r) {
  const Schedule &s = *r.schedule;
  const size_t stages = s.pipeline.stages.size();
  std::vector<char> symbols(stages, '#');
  if (stages <= kLetters) {
    for (size_t i = 0; i < stages; ++i)
      symbols[i] = kSymbols[i];
    return symbols;
  }
  std::vector<double> time(stages, 0);
  for (uint32_t v = 0; v < r.start.size(); ++v)
    time[s.instances.stageOf(v)] += std::max(0.0, r.end[v] - r.start[v]);
  std::vector<uint32_t> order(stages);
  for (uint32_t i = 0; i < stages; ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return time[a] > time[b]; });
  // Lettered in declaration order among the busiest.
  std::vector<uint32_t> lettered(order.begin(), order.begin() + (kLetters - 1));
  std::sort(lettered.begin(), lettered.end());
  for (size_t i = 0; i < lettered.size(); ++i)
    symbols[lettered[i]] = kSymbols[i];
  return symbols;
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
  const std::vector<char> symbols = symbolsFor(r);
  std::vector<uint8_t> drawnStage(s.pipeline.stages.size(), 0);
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
          cells[c] = symbols[s.instances.stageOf(v)];
          drawnStage[s.instances.stageOf(v)] = 1;
          drawn = true;
        }
      }
      if (!drawn && best < width)
        shortStages.push_back({v, best});
    }
    for (auto [v, c] : shortStages)
      if (cells[c] == ' ') {
        cells[c] = symbols[s.instances.stageOf(v)];
        drawnStage[s.instances.stageOf(v)] = 1;
      }
    os << "  " << llvm::left_justify(label(st), nameWidth) << " |" << cells << "| "
       << formatPercent(std::min(1.0, busy / span)) << " busy\n";
  }
  os << "  " << std::string(nameWidth, ' ') << " 0"
     << llvm::right_justify(formatTime(r.makespanUs), width + 1) << '\n';
  // The legend names the stages drawn; those a column never shows (too
  // short at this width, behind longer ones) are named apart.
  os << "  ";
  bool first = true;
  size_t shared = 0, hidden = 0;
  std::string hiddenNames;
  for (uint32_t i = 0; i < s.pipeline.stages.size(); ++i) {
    if (!drawnStage[i]) {
      if (++hidden <= 8)
        hiddenNames += (hidden > 1 ? ", " : "") + s.pipeline.stages[i].name;
      continue;
    }
    if (symbols[i] == '#') {
      ++shared;
      continue;
    }
    os << (first ? "" : ", ") << symbols[i] << " = " << s.pipeline.stages[i].name;
    first = false;
  }
  if (shared)
    os << (first ? "" : ", ") << "# = " << shared << " other stage(s)";
  os << '\n';
  if (hidden)
    os << "  not drawn at this width (too short, or behind longer stages): " << hiddenNames
       << (hidden > 8 ? llvm::formatv(" and {0} more", hidden - 8).str() : std::string())
       << '\n';
}
