//===- Timeline.cpp - A Gantt chart of the streams, in text ---------------===//

#include "runtime/report/Reports.h"

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

void runtime::printTimeline(const LoweringRun &r, llvm::raw_ostream &os,
                            unsigned width) {
  const Schedule &s = *r.schedule;
  const double span = std::max(r.makespanUs, 1e-9);
  const double origin = r.firstStartUs;
  size_t nameWidth = 0;
  for (const program::Stream &st : s.streamPlan.streams)
    nameWidth = std::max(nameWidth, st.name.size());

  os << llvm::formatv("timeline of '{0}' ({1}), {2:f1} us across, one column "
                      "= {3:f2} us:\n",
                      s.pipeline.name, spelling(r.lowering), r.makespanUs,
                      span / width);
  for (uint32_t st = 0; st < s.streamPlan.streams.size(); ++st) {
    // Each column shows the stage that covers most of it.
    std::string cells(width, ' ');
    std::vector<double> covered(width, 0);
    for (uint32_t v = 0; v < r.start.size(); ++v) {
      if (s.streamOf(v) != st)
        continue;
      double a = (r.start[v] - origin) / span * width;
      double b = (r.end[v] - origin) / span * width;
      unsigned first = static_cast<unsigned>(std::max(0.0, a));
      unsigned last = std::min<unsigned>(width - 1, static_cast<unsigned>(b));
      for (unsigned c = first; c <= last && c < width; ++c) {
        double overlap = std::min<double>(b, c + 1) - std::max<double>(a, c);
        if (overlap > covered[c] || (b == a && cells[c] == ' ')) {
          covered[c] = overlap;
          cells[c] = symbolFor(s.instances.stageOf(v));
        }
      }
    }
    os << "  " << llvm::left_justify(s.stream(st).name, nameWidth) << " |"
       << cells << "|\n";
  }
  os << "  " << std::string(nameWidth, ' ') << " 0"
     << llvm::right_justify(llvm::formatv("{0:f1} us", r.makespanUs).str(),
                            width + 1)
     << '\n';
  os << "  ";
  for (uint32_t i = 0; i < s.pipeline.stages.size(); ++i)
    os << (i ? ", " : "") << symbolFor(i) << " = " << s.pipeline.stages[i].name;
  os << '\n';
}
