//===- StepSpan.cpp - Which step, and which of the recording's ops are its ===//

#include "runtime/import/StepBuild.h"

#include "compiler/support/Fail.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace pipec;
using namespace pipec::importer;
using namespace pipec::importer::step;
using llvm::formatv;

LaunchTimes::LaunchTimes(const Trace &trace) {
  for (const HostCall &c : trace.calls)
    if (c.correlation >= 0)
      numbered_.push_back({c.correlation, double(c.ts), 0});
  std::sort(numbered_.begin(), numbered_.end(), [](const Numbered &a, const Numbered &b) {
    return a.correlation < b.correlation;
  });
  for (size_t k = 0; k < numbered_.size(); ++k)
    numbered_[k].latest = std::max(numbered_[k].ts, k ? numbered_[k - 1].latest : -INFINITY);
  for (const GpuOp &op : trace.ops)
    if (op.launchTs < 0 && op.correlation >= 0)
      bound_.push_back({op.correlation, double(op.ts)});
  if (!bound_.empty()) {
    for (const Numbered &n : numbered_)
      bound_.push_back({n.correlation, n.ts});
    std::sort(bound_.begin(), bound_.end());
    for (size_t k = bound_.size(); k-- > 1;)
      bound_[k - 1].second = std::min(bound_[k - 1].second, bound_[k].second);
  }
}

std::vector<LaunchTimes::Numbered>::const_iterator
LaunchTimes::nextCall(const GpuOp &op) const {
  return std::lower_bound(numbered_.begin(), numbered_.end(), op.correlation);
}

double LaunchTimes::earliest(const GpuOp &op) const {
  if (op.launchTs >= 0 || op.correlation < 0)
    return of(op);
  auto next = nextCall(op);
  if (next == numbered_.end() || next == numbered_.begin())
    return of(op);
  return std::min(of(op), (next - 1)->latest);
}

bool LaunchTimes::before(const GpuOp &op, double t) const {
  if (earliest(op) < t)
    return true;
  if (op.launchTs >= 0 || op.correlation < 0 || !std::isfinite(t))
    return false; // (nothing comes before the whole trace)
  // Numbered before every recorded call, and one comes after it.
  auto next = nextCall(op);
  return next == numbered_.begin() && next != numbered_.end();
}

double LaunchTimes::slot(const GpuOp &op) const {
  if (op.launchTs >= 0 || op.correlation < 0)
    return of(op);
  auto next = std::upper_bound(bound_.begin(), bound_.end(),
                               std::make_pair(op.correlation, double(INFINITY)));
  return next == bound_.end() ? double(op.ts) : std::min(double(op.ts), next->second);
}

namespace {

/// The last step that launched GPU work (of its own: not an op the step
/// before launched), each op looked up once among the steps; null if none.
const Step *lastLaunching(const Builder &b, const std::vector<Step> &steps) {
  std::vector<uint32_t> byStart(steps.size());
  for (uint32_t k = 0; k < steps.size(); ++k)
    byStart[k] = k;
  std::stable_sort(byStart.begin(), byStart.end(),
                   [&](uint32_t x, uint32_t y) { return steps[x].ts < steps[y].ts; });
  std::vector<char> launched(steps.size(), 0);
  for (const GpuOp &op : b.trace.ops) {
    const double at = b.launches.earliest(op);
    auto in = std::upper_bound(byStart.begin(), byStart.end(), at,
                               [&](double t, uint32_t k) { return t < steps[k].ts; });
    if (in == byStart.begin())
      continue;
    const Step &st = steps[*(in - 1)];
    if (at < st.ts + st.dur && !b.launches.before(op, st.ts))
      launched[*(in - 1)] = 1;
  }
  for (size_t k = steps.size(); k-- > 0;)
    if (launched[k])
      return &steps[k];
  return nullptr;
}

/// The whole trace's end: the host's first call to return once its last
/// GPU op had ended (the sync, copy or poll by which it learned so). The
/// host's calls after that (freeing, unregistering, tearing down) are not
/// the GPU's work the span measures, and a bound that counted them would
/// pass the span.
double wholeTraceEnd(const Trace &trace) {
  double lastEnd = -INFINITY;
  for (const GpuOp &op : trace.ops)
    lastEnd = std::max(lastEnd, op.ts + op.dur);
  double learned = INFINITY;
  for (const HostCall &c : trace.calls)
    if (c.ts + c.dur >= lastEnd)
      learned = std::min(learned, c.ts + c.dur);
  return std::isinf(learned) ? lastEnd : std::max(lastEnd, learned);
}

/// Ops that ran inside the step's GPU span but are not its: without their
/// launch call in the trace (nor a numbered call near theirs), they were
/// placed where they started, past the step's host span. Not lost in
/// silence: counted, with their GPU time.
void noteUnplaced(Builder &b) {
  if (!std::isfinite(b.to))
    return;
  uint64_t count = 0;
  double us = 0;
  for (const GpuOp &op : b.trace.ops)
    if (op.launchTs < 0 && !b.launches.before(op, b.to) && op.ts < b.last &&
        op.ts + op.dur > b.origin) {
      ++count;
      us += std::min(op.ts + op.dur, b.last) - std::max(op.ts, b.origin);
    }
  if (count)
    b.out.notes.push_back(formatv(
        "{0} GPU op(s) ran inside the step's GPU span ({1} ms of GPU time) without their "
        "launch call in the trace, starting after {2}'s host range ended: where they were "
        "launched is not known, so they are not imported (the next step's work, or calls "
        "the profiler did not record)",
        count, formatv("{0:f2}", us / 1000), stepLabel(b.out)));
}

} // namespace

llvm::Error step::chooseSpan(Builder &b, std::optional<int64_t> number) {
  ImportedStep &out = b.out;
  std::vector<Step> steps = b.trace.steps;
  std::sort(steps.begin(), steps.end(),
            [](const Step &x, const Step &y) { return x.number < y.number; });
  for (const Step &s : steps)
    out.availableSteps.push_back(s.number);
  if (steps.empty()) {
    if (number)
      return fail(formatv("the trace has no ProfilerStep annotations; leave out --step "
                          "to import the whole trace"));
    b.to = wholeTraceEnd(b.trace);
    return llvm::Error::success();
  }
  const Step *chosen = nullptr;
  if (number) {
    for (const Step &s : steps)
      if (s.number == *number)
        chosen = &s;
    if (!chosen) {
      std::string list;
      for (const Step &s : steps)
        list += (list.empty() ? "" : ", ") + std::to_string(s.number);
      return fail(formatv("the trace has no ProfilerStep#{0}; it has {1}", *number, list));
    }
  } else if (!(chosen = lastLaunching(b, steps))) {
    return fail("no ProfilerStep of the trace launched a GPU op");
  }
  // A step a .pipe file can hold: its host range at most an hour, as its
  // GPU ops' span is.
  if (!(chosen->dur >= 0 && chosen->dur <= kMaxStageUs && std::isfinite(chosen->ts)))
    return fail(formatv("the step's host range (#{0}) lasts {1} s; pipec imports steps of "
                        "at most 3600 s",
                        chosen->number,
                        chosen->dur < 1e15 ? formatv("{0:f1}", chosen->dur / 1e6).str()
                                           : formatv("{0:e}", chosen->dur / 1e6).str()));
  out.step = chosen->number;
  out.periodUs = chosen->dur;
  b.from = chosen->ts;
  b.to = chosen->ts + chosen->dur;
  return llvm::Error::success();
}

llvm::Error step::collectOps(Builder &b) {
  ImportedStep &out = b.out;
  auto order = [&](const GpuOp *x, const GpuOp *y) { return b.issueOrder(x, y); };
  for (const GpuOp &op : b.trace.ops)
    if (!b.launches.before(op, b.from) && b.launches.before(op, b.to))
      b.ops.push_back(&op);
  if (b.ops.empty())
    return fail(formatv("{0} launched no GPU op", stepLabel(out)));
  std::stable_sort(b.ops.begin(), b.ops.end(), order);
  out.originTs = INFINITY;
  for (const GpuOp *op : b.ops)
    out.originTs = std::min(out.originTs, op->ts);
  b.origin = out.originTs;

  // A step a .pipe file can hold: at most an hour, from its first op's
  // start to its last op's end (a `ts` of 1e300 is not a step).
  const GpuOp *first = nullptr, *latest = nullptr;
  for (const GpuOp *op : b.ops) {
    if (!first || op->ts < first->ts)
      first = op;
    if (op->ts + op->dur > b.last)
      b.last = op->ts + op->dur, latest = op;
  }
  out.windowUs = std::isfinite(b.from) ? std::max(b.to, b.last) - std::min(b.from, b.origin)
                                       : b.last - b.origin;
  if (b.last - b.origin > 3600e6)
    return fail(formatv("the step's GPU ops span {0} s (event {1} to event {2}); pipec "
                        "imports steps of at most 3600 s",
                        (b.last - b.origin) / 1e6, first->event, latest->event));

  // The previous step's backlog: ops issued before the step that still run
  // after its first op started keep their streams (and SMs) busy.
  if (std::isfinite(b.from))
    for (const GpuOp &op : b.trace.ops)
      if (b.launches.before(op, b.from) && op.ts + op.dur > b.origin && op.ts < b.last)
        b.backlog.push_back(&op);
  std::stable_sort(b.backlog.begin(), b.backlog.end(), order);
  noteUnplaced(b);
  return llvm::Error::success();
}
