//===- Html.cpp - One self-contained HTML report of a run -----------------===//
//
// No network: the DAG, a timeline per lowering (streams as lanes, the host
// thread's calls as a row, event waits as arrows) and the timing table are
// SVG and HTML written here, with a legend; a few lines of script zoom the
// timelines (they scroll to pan).
//
//===----------------------------------------------------------------------===//

#include "runtime/report/Reports.h"

#include "model/Gap.h"
#include "model/GraphCost.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace pipec;
using namespace pipec::runtime;
using llvm::formatv;

namespace {

/// The source as the page names it: its file name, never the directories
/// above it (a report is shared; an absolute path says where it was made).
std::string shownName(llvm::StringRef source) {
  return source == "-" ? std::string("<stdin>") : llvm::sys::path::filename(source).str();
}

std::string escape(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    switch (c) {
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '&':
      out += "&amp;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

const char *kColors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759",
                         "#76b7b2", "#edc948", "#b07aa1", "#ff9da7"};

const char *colorOf(StageKind kind) {
  return kind == StageKind::Kernel   ? kColors[0]
         : kind == StageKind::Copy   ? kColors[1]
         : kind == StageKind::Memset ? kColors[6]
                                     : kColors[2];
}

/// The most nodes the DAG draws: past it, one iteration (every iteration
/// has the same graph), or a note.
constexpr size_t kMaxDagNodes = 400;

/// The DAG: instances in columns by depth, edges of the reduction; of a
/// pipeline of many iterations, its first iteration only.
void dag(const Schedule &s, llvm::raw_ostream &os) {
  size_t n = s.instances.size();
  const size_t perIteration = s.instances.stagesPerIteration();
  if (n > kMaxDagNodes && perIteration <= kMaxDagNodes &&
      !s.instances.hasConditionalStages()) {
    os << formatv("<p class=\"note\">One iteration of {0} is drawn ({1} of {2} "
                  "nodes): every iteration has the same graph; the edges from the "
                  "iteration before are left out.</p>\n",
                  s.instances.iterations(), perIteration, n);
    n = perIteration;
  } else if (n > kMaxDagNodes) {
    os << formatv("<p class=\"note\">The graph has {0} nodes: too many to "
                  "draw.</p>\n",
                  n);
    return;
  }
  std::vector<uint32_t> depth(n, 0), row(n, 0);
  std::map<uint32_t, uint32_t> perDepth;
  for (uint32_t v = 0; v < n; ++v) {
    for (uint32_t u : s.reduction.kept.row(v))
      if (u < n)
        depth[v] = std::max(depth[v], depth[u] + 1);
    row[v] = perDepth[depth[v]]++;
  }
  uint32_t columns = 0, rows = 0;
  for (auto [d, count] : perDepth) {
    columns = std::max(columns, d + 1);
    rows = std::max(rows, count);
  }
  const int w = 130, h = 44;
  auto x = [&](uint32_t v) { return 10 + int(depth[v]) * w; };
  auto y = [&](uint32_t v) { return 10 + int(row[v]) * h; };
  os << "<div class=\"scroll\">\n"
     << formatv("<svg class=\"dag\" width=\"{0}\" height=\"{1}\" "
                "xmlns=\"http://www.w3.org/2000/svg\">\n",
                20 + columns * w, 20 + rows * h);
  for (uint32_t v = 0; v < n; ++v)
    for (uint32_t u : s.reduction.kept.row(v)) {
      if (u >= n)
        continue;
      bool cross = s.streamOf(u) != s.streamOf(v);
      // An edge the data needs (sync inferred): dashed, titled with its buffer.
      llvm::ArrayRef<uint32_t> deps = s.instances.deps().row(v);
      int32_t buffer = -1;
      for (size_t e = 0; e < deps.size(); ++e)
        if (deps[e] == u)
          buffer = s.instances.inferredFrom(s.instances.deps().begin[v] + e);
      os << formatv("<line class=\"edge{0}{1}\" x1=\"{2}\" y1=\"{3}\" x2=\"{4}\" "
                    "y2=\"{5}\">{6}</line>\n",
                    cross ? " cross" : "", buffer >= 0 ? " inferred" : "", x(u) + 100,
                    y(u) + 15, x(v), y(v) + 15,
                    buffer >= 0 ? "<title>buffer '" + escape(s.pipeline.buffers[buffer].name) +
                                      "'</title>"
                                : std::string());
      // The buffer's name where the edge is, not only in its tooltip.
      if (buffer >= 0)
        os << formatv("<text class=\"edge-label\" x=\"{0}\" y=\"{1}\">{2}</text>\n",
                      (x(u) + 100 + x(v)) / 2, (y(u) + y(v)) / 2 + 12,
                      escape(s.pipeline.buffers[buffer].name));
    }
  for (uint32_t v = 0; v < n; ++v)
    os << formatv("<g class=\"node\"><rect x=\"{0}\" y=\"{1}\" width=\"100\" "
                  "height=\"30\" rx=\"5\" fill=\"{2}\"/><text x=\"{3}\" "
                  "y=\"{4}\">{5}</text><title>{5} on {6}</title></g>\n",
                  x(v), y(v), colorOf(s.instances.stage(v).kind()), x(v) + 6, y(v) + 19,
                  escape(s.instances.name(v)),
                  escape(!s.onHost(v) ? s.streamLabel(s.streamOf(v))
                         : s.pipeline.devices.size() > 1
                             ? s.pipeline.devices[s.threadOf(v)].name + "'s host thread"
                             : std::string("the host thread")));
  os << "</svg>\n</div>\n";
}

/// The most wait arrows a timeline draws: past it they would hide the
/// boxes (zoomed in, the boxes' titles still say what waited).
constexpr size_t kMaxArrows = 300;

/// A timeline: one lane per stream (and each host thread's cpu stages),
/// then a row of each host thread's calls when they were kept; one labelled box
/// per stage; in the stream lowering, event waits as arrows. It scales to
/// the page's width (a viewBox), and the page's zoom widens it.
void timeline(const LoweringRun &r, llvm::raw_ostream &os) {
  const Schedule &s = *r.schedule;
  // The rows: the streams, then each host thread that runs cpu stages.
  std::vector<uint32_t> rowOf(s.chains(), 0);
  size_t streams = 0;
  for (uint32_t c = 0; c < s.chains(); ++c)
    if (c < s.hostChain() || s.hasHostStages(s.threadOfChain(c)))
      rowOf[c] = static_cast<uint32_t>(streams++);
  auto row = [&](uint32_t v) { return rowOf[s.streamOf(v)]; };
  const bool calls = !r.host.empty();
  // The host's calls: a row per host thread (each device's).
  const size_t threads = std::max<size_t>(1, s.pipeline.devices.size());
  const size_t lanes = streams + (calls ? threads : 0);
  const int lane = 30, left = 110, width = 1200;
  // At most kMaxPageInstances boxes: the first ones, on their own span.
  const uint32_t shown =
      static_cast<uint32_t>(std::min<size_t>(r.start.size(), kMaxPageInstances));
  double last = r.firstStartUs;
  for (uint32_t v = 0; v < shown; ++v)
    last = std::max(last, r.end[v]);
  const double span = std::max(last - r.firstStartUs, 1e-9);
  if (shown < r.start.size())
    os << formatv("<p class=\"note\">The timeline shows the first {0} of {1} stage "
                  "instances ({2:f1} of {3:f1} us).</p>\n",
                  shown, r.start.size(), span, r.makespanUs);
  auto px = [&](double us) { return left + (us - r.firstStartUs) / span * width; };
  const int height = int(lanes) * lane + 40, total = left + width + 20;
  os << "<div class=\"scroll\">\n"
     << formatv("<svg class=\"timeline\" data-lowering=\"{0}\" viewBox=\"0 0 {1} {2}\" "
                "preserveAspectRatio=\"xMinYMin meet\" "
                "xmlns=\"http://www.w3.org/2000/svg\">\n",
                spelling(r.lowering), total, height);
  os << "<defs><marker id=\"arrow\" markerWidth=\"8\" markerHeight=\"8\" "
        "refX=\"7\" refY=\"4\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" "
        "fill=\"#c00\"/></marker></defs>\n";
  auto lanePrint = [&](size_t at, const std::string &label) {
    os << formatv("<text class=\"lane\" x=\"4\" y=\"{0}\">{1}</text>"
                  "<line class=\"lane\" x1=\"{2}\" y1=\"{3}\" x2=\"{4}\" "
                  "y2=\"{3}\"/>\n",
                  at * lane + 20, escape(label), left, at * lane + 28, left + width);
  };
  for (uint32_t c = 0; c < s.chains(); ++c)
    if (c < s.hostChain())
      lanePrint(rowOf[c], s.streamLabel(c));
    else if (s.hasHostStages(s.threadOfChain(c)))
      lanePrint(rowOf[c], s.pipeline.devices.size() > 1
                              ? s.pipeline.devices[s.threadOfChain(c)].name + "/host (cpu)"
                              : std::string("host (cpu)"));
  if (calls)
    for (size_t t = 0; t < threads; ++t)
      lanePrint(streams + t, threads > 1 ? s.pipeline.devices[t].name + "/host calls"
                                         : std::string("host calls"));
  for (uint32_t v = 0; v < shown; ++v) {
    const uint32_t st = row(v);
    double x0 = px(r.start[v]), x1 = std::max(px(r.end[v]), x0 + 1);
    const std::string name = s.instances.name(v);
    // A white edge sets adjacent boxes apart; a name where it fits.
    // (Not on a box thinner than the edge: it would hide it.)
    os << formatv("<rect class=\"stage\" x=\"{0:f1}\" y=\"{1}\" width=\"{2:f1}\" "
                  "height=\"20\" fill=\"{3}\"{7}><title>{4}: {5:f1} to {6:f1} "
                  "us</title></rect>\n",
                  x0, st * lane + 6, x1 - x0, colorOf(s.instances.stage(v).kind()),
                  escape(name), r.start[v] - r.firstStartUs, r.end[v] - r.firstStartUs,
                  x1 - x0 < 3 ? " style=\"stroke:none\"" : "");
    if (x1 - x0 >= 7.0 * double(name.size()) + 6)
      os << formatv("<text class=\"label\" x=\"{0:f1}\" y=\"{1}\">{2}</text>\n", x0 + 3,
                    st * lane + 20, escape(name));
  }
  // The host threads' calls, within the span shown (threads interleave:
  // the list is not in time order).
  if (calls)
    for (const HostCall &c : r.host) {
      if (c.start - r.firstStartUs > span)
        continue;
      double x0 = px(c.start), x1 = std::max(px(c.end), x0 + 0.5);
      os << formatv("<rect class=\"call\" x=\"{0:f1}\" y=\"{1}\" width=\"{2:f1}\" "
                    "height=\"20\"><title>{3}: {4:f1} to {5:f1} us</title></rect>\n",
                    x0, (streams + c.thread) * lane + 6, x1 - x0, c.what,
                    c.start - r.firstStartUs, c.end - r.firstStartUs);
    }
  // Event waits: cross-stream edges of the stream lowering (a graph has
  // no waits: its edges are the DAG's).
  if (r.lowering == Lowering::Streams) {
    size_t arrows = 0;
    for (uint32_t v = 0; v < shown; ++v)
      for (uint32_t u : s.reduction.kept.row(v))
        arrows += s.streamOf(u) != s.streamOf(v) && !s.onHost(u) && !s.onHost(v);
    if (arrows > kMaxArrows)
      os << formatv("<text x=\"{0}\" y=\"{1}\">{2} waits: too many arrows to draw; "
                    "each box's title says when it ran</text>\n",
                    left + width / 2, int(lanes) * lane + 30, arrows);
    else
      for (uint32_t v = 0; v < shown; ++v)
        for (uint32_t u : s.reduction.kept.row(v))
          if (s.streamOf(u) != s.streamOf(v) && !s.onHost(u) && !s.onHost(v))
            os << formatv("<line class=\"wait\" x1=\"{0:f1}\" y1=\"{1}\" "
                          "x2=\"{2:f1}\" y2=\"{3}\" marker-end=\"url(#arrow)\"/>\n",
                          px(r.end[u]), row(u) * lane + 16, px(r.start[v]),
                          row(v) * lane + 16);
  }
  os << formatv("<text x=\"{0}\" y=\"{1}\">0</text><text x=\"{2}\" y=\"{1}\" "
                "text-anchor=\"end\">{3:f1} us</text>\n",
                left, int(lanes) * lane + 30, left + width, span);
  os << "</svg>\n</div>\n";
}

/// What the colours and marks mean.
void legend(llvm::raw_ostream &os) {
  os << "<div class=\"legend\">";
  for (auto [kind, words] :
       {std::pair{StageKind::Kernel, "kernel"}, std::pair{StageKind::Copy, "copy"},
        std::pair{StageKind::Memset, "memset"},
        std::pair{StageKind::Host, "host function or cpu stage"}})
    os << "<span class=\"key\"><span class=\"swatch\" style=\"background:" << colorOf(kind)
       << "\"></span>" << words << "</span>";
  os << "<span class=\"key\"><span class=\"swatch call\"></span>a host call (launch, "
        "record, wait, sync)</span>"
        "<span class=\"key\"><span class=\"mark wait\"></span>an event wait "
        "(streams) / a cross-stream edge (graph)</span>"
        "<span class=\"key\"><span class=\"mark inferred\"></span>an edge the data "
        "needs, named by its buffer</span>"
        "<label class=\"key\">zoom <input id=\"zoom\" type=\"range\" min=\"1\" "
        "max=\"64\" value=\"1\"></label>"
        "<label class=\"key\"><input id=\"arrows\" type=\"checkbox\" checked> wait "
        "arrows</label></div>\n";
}

/// The figures decisions are made on, for one run: where the host's time
/// went, the gap cause by cause, each device's share.
void figures(const LoweringRun &r, llvm::raw_ostream &os) {
  os << "<div class=\"figures\" data-lowering=\"" << spelling(r.lowering) << "\">\n";
  os << formatv("<table class=\"host\"><tr><th>host thread, per replay ({0})</th>"
                "<th>µs</th></tr>\n",
                spelling(r.lowering));
  for (auto [what, us] :
       {std::pair{"cpu stages", r.hostUs.cpu}, std::pair{"dispatch (issue=)", r.hostUs.issue},
        std::pair{"API calls", r.hostUs.api},
        std::pair{"blocked (syncs, a full launch queue)", r.hostUs.blocked}})
    os << formatv("<tr><td>{0}</td><td>{1:f1}</td></tr>\n", what, us);
  os << "</table>\n";
  if (!r.gap.empty()) {
    os << formatv("<table class=\"gap\"><tr><th>makespan − lower bound: {0:f1} µs; what "
                  "taking each cost away alone saves, and its fair share of taking them all "
                  "away (Shapley: the shares add up to all of them at once)</th><th>alone "
                  "µs</th><th>share µs</th></tr>\n",
                  r.makespanUs - r.schedule->analysis.lowerBoundUs);
    for (const GapPart &part : r.gap)
      os << formatv("<tr><td>{0}</td><td>{1:f1}</td><td>{2:f1}</td></tr>\n",
                    escape(part.cause + gapPartNotes(part)), part.us, part.shareUs);
    os << "</table>\n";
  }
  if (!r.devices.empty()) {
    os << "<table class=\"devices\"><tr><th>device</th><th>busy µs</th><th>bubble</th>"
          "<th>communication µs</th><th>hidden</th></tr>\n";
    for (const DeviceUse &d : r.devices)
      os << formatv("<tr><td>{0}</td><td>{1:f1}</td><td>{2:f1}%</td><td>{3:f1}</td>"
                    "<td>{4}</td></tr>\n",
                    escape(d.name), d.busyUs, 100 * d.bubbleFraction, d.commUs,
                    d.commUs > 0 ? formatv("{0:f1}%", 100 * d.hiddenCommUs / d.commUs).str()
                                 : std::string("-"));
    os << "</table>\n";
  }
  os << "</div>\n";
}

/// The graph verdict for a pipeline: from its two runs when both lowerings
/// ran (the same arithmetic as the table's), else the schedule's own.
void verdict(llvm::ArrayRef<LoweringRun> runs, const Schedule *s, llvm::raw_ostream &os) {
  GraphAdvice g = s->analysis.graphAdvice;
  for (const LoweringRun &a : runs)
    for (const LoweringRun &b : runs)
      if (a.schedule == s && b.schedule == s && a.lowering == Lowering::Streams &&
          b.lowering == Lowering::Graph)
        g = compareRuns(a, b, a.replays);
  os << "<div class=\"verdict\"><h3>CUDA graph: "
     << (!g.evaluated ? "not evaluated"
         : g.suitable ? "worth it"
                      : "not worth it")
     << "</h3>\n<ul>\n";
  for (const std::string &reason : g.reasons)
    os << "<li>" << escape(reason) << "</li>\n";
  os << "</ul></div>\n";
}

} // namespace

void runtime::writeHtml(llvm::ArrayRef<LoweringRun> runs, const Backend &backend,
                        llvm::StringRef source, llvm::raw_ostream &os) {
  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
     << "<title>pipec run: " << escape(shownName(source)) << "</title>\n"
     << "<style>\n"
        "body { font-family: sans-serif; margin: 2em; color: #222; }\n"
        "table { border-collapse: collapse; margin: 1em 0; }\n"
        "th, td { border: 1px solid #ccc; padding: 4px 10px; text-align: right; }\n"
        "th:first-child, td:first-child { text-align: left; }\n"
        "svg text { font-size: 12px; fill: #fff; }\n"
        "svg text.lane, svg.timeline text { fill: #222; }\n"
        "line.edge { stroke: #999; stroke-width: 1.5; }\n"
        "line.edge.cross, line.wait { stroke: #c00; stroke-width: 1.5; }\n"
        "line.edge.inferred { stroke-dasharray: 5 3; }\n"
        "line.lane { stroke: #ddd; }\n"
        "rect.stage { stroke: #fff; stroke-width: 1; }\n"
        "rect.call { fill: #999; }\n"
        "svg text.label { fill: #fff; font-size: 11px; pointer-events: none; }\n"
        "svg text.edge-label { fill: #c00; font-size: 11px; }\n"
        ".scroll { overflow-x: auto; width: 100%; }\n"
        "svg.timeline { width: 100%; height: auto; display: block; }\n"
        ".legend { position: sticky; top: 0; background: #fff; padding: 6px 0; "
        "border-bottom: 1px solid #eee; }\n"
        ".legend .key { margin-right: 1.2em; white-space: nowrap; }\n"
        ".swatch { display: inline-block; width: 14px; height: 14px; margin-right: 4px; "
        "vertical-align: middle; }\n"
        ".swatch.call { background: #999; }\n"
        ".mark { display: inline-block; width: 24px; margin-right: 4px; vertical-align: "
        "middle; border-top: 2px solid #c00; }\n"
        ".mark.inferred { border-top-style: dashed; }\n"
        ".violations { color: #c00; font-weight: bold; }\n"
        ".note { color: #666; }\n"
        ".no-waits line.wait { display: none; }\n"
        ".figures { display: flex; flex-wrap: wrap; gap: 2em; }\n"
        "</style>\n"
        // A script error anywhere on the page is kept on the page (a test
        // reads it from the rendered DOM).
        "<script>\n"
        "addEventListener('error', (e) => {\n"
        "  document.documentElement.dataset.scriptError = String(e.message);\n"
        "});\n"
        "</script>\n"
        "<script>\n"
        "// Zoom: the timelines widen (their boxes scroll to pan).\n"
        "addEventListener('DOMContentLoaded', () => {\n"
        "  const zoom = document.getElementById('zoom');\n"
        "  zoom.addEventListener('input', () => {\n"
        "    for (const svg of document.querySelectorAll('svg.timeline'))\n"
        "      svg.style.width = (100 * zoom.value) + '%';\n"
        "  });\n"
        "  // Wait arrows can be hidden (they cover dense charts).\n"
        "  const arrows = document.getElementById('arrows');\n"
        "  arrows.addEventListener('change', () => {\n"
        "    document.body.classList.toggle('no-waits', !arrows.checked);\n"
        "  });\n"
        "});\n"
        "</script>\n</head>\n<body>\n";
  os << "<h1>pipec run: " << escape(shownName(source)) << "</h1>\n";
  os << "<p>Backend <b>" << backend.name() << "</b>, on " << escape(backend.device())
     << ".</p>\n";
  legend(os);
  os << "<table id=\"timings\">\n<tr><th>pipeline</th><th>lowering</th>"
        "<th>makespan µs</th><th>replay median µs</th><th>p95 µs</th>"
        "<th>host submit µs</th><th>capture µs</th><th>instantiate µs</th>"
        "<th>lower bound µs</th><th>violations</th></tr>\n";
  for (const LoweringRun &r : runs)
    os << formatv("<tr><td>{0}</td><td>{1}</td><td>{2:f1}</td><td>{3:f1}</td>"
                  "<td>{4:f1}</td><td>{5:f1}</td><td>{6:f1}</td><td>{7:f1}</td>"
                  "<td>{8:f1}</td><td{9}>{10}</td></tr>\n",
                  escape(r.schedule->pipeline.name), spelling(r.lowering), r.makespanUs,
                  r.timings.replayMedian, r.timings.replayP95, r.timings.submitMedian,
                  r.timings.capture, r.timings.instantiate, r.schedule->analysis.lowerBoundUs,
                  r.violations ? " class=\"violations\"" : "", r.violations);
  os << "</table>\n";
  const Schedule *shown = nullptr;
  for (const LoweringRun &r : runs) {
    if (r.schedule != shown) {
      shown = r.schedule;
      os << "<section class=\"pipeline\">\n<h2>pipeline '" << escape(shown->pipeline.name)
         << "'</h2>\n"
         << "<h3>Dependency graph (transitive reduction; cross-stream edges "
            "in red)</h3>\n";
      verdict(runs, shown, os);
      dag(*shown, os);
    }
    os << "<h3>Timeline, lowered to " << spelling(r.lowering)
       << (r.lowering == Lowering::Streams ? " (red arrows: waits)" : "") << "</h3>\n";
    figures(r, os);
    timeline(r, os);
    if (&r == &runs.back() || runs[&r - runs.data() + 1].schedule != shown)
      os << "</section>\n";
  }
  os << "</body>\n</html>\n";
}
