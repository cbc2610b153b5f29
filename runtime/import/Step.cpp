//===- Step.cpp - One profiler step of a trace, as a pipeline -------------===//

#include "runtime/import/Step.h"
#include "runtime/import/CorrelationIndex.h"

#include "compiler/schedule/Redundancy.h"
#include "compiler/support/Fail.h"
#include "compiler/support/Printable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>

using namespace pipec;
using namespace pipec::importer;
using llvm::formatv;

namespace {

/// `text` as a stage name: letters, digits and '_', at most 40 of them,
/// `prefix` before it when it would not start with a letter, `suffix` after
/// it when it is a reserved word of the language.
std::string identifier(llvm::StringRef text, llvm::StringRef prefix, llvm::StringRef suffix) {
  std::string out;
  for (char c : text)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = (prefix + out).str();
  if (out.size() > 40)
    out.resize(40);
  for (const char *reserved : {"pipeline", "stream", "stage", "on", "depends_on", "priority",
                               "iterations", "buffer", "device"})
    if (out == reserved)
      out += suffix;
  return out;
}

/// "void at::native::(anonymous namespace)::vectorized_elementwise_kernel<4,
/// ...>(...)" -> "vectorized_elementwise_kernel".
std::string shortName(const GpuOp &op, llvm::StringRef name) {
  if (op.kind == OpKind::Memcpy)
    return std::string("memcpy_") + spelling(op.direction);
  if (op.kind == OpKind::Memset)
    return "memset";
  // "(anonymous namespace)::" is a scope, not the argument list.
  std::string unscoped = name.str();
  for (size_t at; (at = unscoped.find("(anonymous namespace)::")) != std::string::npos;)
    unscoped.erase(at, 23);
  llvm::StringRef n = unscoped;
  size_t cut = n.find_first_of("<(");
  llvm::StringRef head = n.substr(0, cut);
  size_t colon = head.rfind("::");
  if (colon != llvm::StringRef::npos)
    head = head.substr(colon + 2);
  size_t space = head.rfind(' ');
  if (space != llvm::StringRef::npos)
    head = head.substr(space + 1);
  return identifier(head, "k_", "_k");
}

} // namespace

namespace {

/// The last kept element of a stream's list (in issue order) whose key is
/// below `at`, or -1; the first whose key is above it, or -1.
template <typename Key>
int64_t lastBelow(const std::vector<uint32_t> &list, double at, Key key) {
  auto pos =
      std::partition_point(list.begin(), list.end(), [&](uint32_t i) { return key(i) < at; });
  return pos == list.begin() ? -1 : int64_t(*(pos - 1));
}
template <typename Key>
int64_t firstAbove(const std::vector<uint32_t> &list, double at, Key key) {
  auto pos =
      std::partition_point(list.begin(), list.end(), [&](uint32_t i) { return key(i) <= at; });
  return pos == list.end() ? -1 : int64_t(*pos);
}

/// How far apart two of the trace's times may be and still be one instant
/// (Kineto writes microseconds, some with a decimal or three).
constexpr double kClockSlackUs = 0.5;

/// The least host time before a sync written as a `cpu` stage of its own
/// (less is the sync stage's own time).
constexpr double kMinHostWorkUs = 10;

const char *syncName(HostCall::Kind kind) {
  switch (kind) {
  case HostCall::StreamSync:
    return "sync_stream";
  case HostCall::EventSync:
    return "sync_event";
  case HostCall::DeviceSync:
    return "sync_device";
  case HostCall::Free:
    return "sync_free";
  case HostCall::Poll:
    return "sync_poll";
  default:
    return "sync_copy";
  }
}

/// How long after a GPU op ended another may begin and still be taken to
/// have waited for it (the device's own start-up, not anything else).
constexpr double kGpuWaitSlackUs = 20;

/// The least back-to-back gaps between a stream's ops that measure the
/// device's own (fewer: the profile's default).
constexpr uint64_t kLeastGapSamples = 50;

/// The least wait of an op past everything it is known to follow that is
/// taken to be a wait for something else (a shorter one is the device's).
constexpr double kUnexplainedIdleUs = 100;

/// A copy that touches pageable host memory and whose call returned only
/// once it was done: the host waited for it (a pinned copy is asynchronous).
bool blockingCopy(const GpuOp &op, llvm::StringRef name) {
  if (op.kind != OpKind::Memcpy || op.launchTs < 0)
    return false;
  return name.contains("Pageable") && op.launchTs + op.launchDur >= op.ts + op.dur;
}

} // namespace

StepChoice importer::parseStepChoice(llvm::StringRef text) {
  StepChoice c;
  int64_t n = 0;
  if (!text.getAsInteger(10, n)) {
    c.number = n;
    return c;
  }
  auto [name, k] = text.rsplit('#');
  uint64_t count = 0;
  if (!k.empty() && name != text && !k.getAsInteger(10, count)) {
    if (name == "ProfilerStep") {
      c.number = int64_t(count);
      return c;
    }
    c.range = name.str();
    c.k = count;
    return c;
  }
  c.range = text.str();
  return c;
}

llvm::Expected<ImportedStep> importer::selectStep(Trace &&trace, const StepChoice &choice) {
  if (choice.range.empty())
    return selectStep(std::move(trace), choice.number);
  // The ranges of that name, in time order: the K-th is the step.
  std::vector<const Range *> named;
  for (const Range &r : trace.ranges)
    if (trace.rangeNames[r.name] == choice.range)
      named.push_back(&r);
  std::stable_sort(named.begin(), named.end(),
                   [](const Range *a, const Range *b) { return a->ts < b->ts; });
  const std::string shown = printable(choice.range);
  if (named.empty()) {
    std::vector<std::string> names(trace.rangeNames.begin(), trace.rangeNames.end());
    std::sort(names.begin(), names.end());
    std::string list;
    for (size_t i = 0; i < names.size() && i < 10; ++i)
      list += (i ? ", " : "") + ("'" + names[i] + "'");
    if (names.size() > 10)
      list += formatv(" and {0} more", names.size() - 10).str();
    return fail(formatv("the trace has no range named '{0}' (an NVTX range or "
                        "record_function); {1}",
                        shown,
                        names.empty() ? std::string("it has none but its ProfilerSteps")
                                      : "it has " + list)
                    .str() +
                (trace.ranges.size() >= kMaxRanges
                     ? formatv(" (the first {0} ranges were kept)", kMaxRanges).str()
                     : std::string()));
  }
  if (choice.k > named.size())
    return fail(formatv("the trace has {0} range(s) named '{1}': --step={1}#K takes K from 1 "
                        "to {0}",
                        named.size(), shown));
  const uint64_t k = choice.k ? choice.k : named.size();
  const Range &r = *named[k - 1];
  trace.steps = {Step{int64_t(k), r.ts, r.dur}};
  llvm::Expected<ImportedStep> step = selectStep(std::move(trace), int64_t(k));
  if (step)
    step->rangeName = shown;
  return step;
}

std::string importer::stepLabel(const ImportedStep &s) {
  if (!s.step)
    return "the whole trace";
  return (s.rangeName.empty() ? std::string("ProfilerStep") : s.rangeName) + "#" +
         std::to_string(*s.step);
}

llvm::Expected<ImportedStep> importer::selectStep(Trace &&trace,
                                                  std::optional<int64_t> number) {
  ImportedStep out;
  out.syncEvents = !trace.syncs.empty();
  out.names = trace.names;
  out.callNames = trace.callNames;
  // The reader's map from a call's correlation to the call, as an index
  // over the ids' range (a quarter of the hash map's bytes when CUPTI's
  // ids fill it): it is held through the step's whole walk.
  CorrelationIndex callOf = CorrelationIndex::sizedFor([&](auto visit) {
    for (const auto &entry : trace.callOf)
      visit(entry.first);
  });
  for (const auto &entry : trace.callOf)
    callOf.tryEmplace(entry.first, entry.second);
  llvm::DenseMap<int64_t, uint32_t>().swap(trace.callOf);
  // The GPU the kept ops ran on: the entry of its id (the first one when
  // none has it, or there is only one).
  for (const DeviceInfo &d : trace.devices)
    if (d.id == trace.device) {
      out.device = d;
      break;
    }
  if (out.device.name.empty() && !trace.devices.empty())
    out.device = trace.devices.front();
  out.foreignPlatform = trace.foreignPlatform;
  // When an op was launched: its call's start; without its call in the
  // trace, where it started (what the host did then is not known).
  auto launchOf = [](const GpuOp &op) { return op.launchTs >= 0 ? op.launchTs : op.ts; };
  // An op whose call is not in the trace was launched between the recorded
  // calls the runtime numbered just before and just after it (correlations
  // count calls in the order they were made). With none of the step's
  // calls numbered before it, and one numbered after it, it was launched
  // before the step's first recorded call: by the previous step, or before
  // the profiler began (the ops of a trace's first step that ran on from
  // the step before).
  struct Numbered {
    int64_t correlation;
    double ts, latest; ///< the latest ts up to it
    bool operator<(int64_t c) const { return correlation <= c; }
  };
  std::vector<Numbered> numbered;
  for (const HostCall &c : trace.calls)
    if (c.correlation >= 0)
      numbered.push_back({c.correlation, double(c.ts), 0});
  std::sort(numbered.begin(), numbered.end(), [](const Numbered &a, const Numbered &b) {
    return a.correlation < b.correlation;
  });
  for (size_t k = 0; k < numbered.size(); ++k)
    numbered[k].latest = std::max(numbered[k].ts, k ? numbered[k - 1].latest : -INFINITY);
  /// The first recorded call numbered after an op's correlation.
  auto nextCall = [&](const GpuOp &op) {
    return std::lower_bound(numbered.begin(), numbered.end(), op.correlation);
  };
  // The earliest an op was launched: its call's start; without its call,
  // the start of the recorded call numbered before it (or its own start).
  auto earliestLaunch = [&](const GpuOp &op) {
    if (op.launchTs >= 0 || op.correlation < 0)
      return launchOf(op);
    auto next = nextCall(op);
    if (next == numbered.end() || next == numbered.begin())
      return launchOf(op);
    return std::min(launchOf(op), (next - 1)->latest);
  };
  auto launchedBefore = [&](const GpuOp &op, double t) {
    if (earliestLaunch(op) < t)
      return true;
    if (op.launchTs >= 0 || op.correlation < 0 || !std::isfinite(t))
      return false; // (nothing comes before the whole trace)
    // Numbered before every recorded call, and one comes after it.
    auto next = nextCall(op);
    return next == numbered.begin() && next != numbered.end();
  };
  // Where the host's walk places the launch of an op whose call is not in
  // the trace: no later than it started, nor than anything numbered after
  // it was launched (a recorded call, or another such op's start), so that
  // the launches keep the order the runtime numbered them in.
  std::vector<std::pair<int64_t, double>> launchBound; ///< (correlation, earliest from it)
  for (const GpuOp &op : trace.ops)
    if (op.launchTs < 0 && op.correlation >= 0)
      launchBound.push_back({op.correlation, double(op.ts)});
  if (!launchBound.empty()) {
    for (const Numbered &n : numbered)
      launchBound.push_back({n.correlation, n.ts});
    std::sort(launchBound.begin(), launchBound.end());
    for (size_t k = launchBound.size(); k-- > 1;)
      launchBound[k - 1].second = std::min(launchBound[k - 1].second, launchBound[k].second);
  }
  auto slotOf = [&](const GpuOp &op) {
    if (op.launchTs >= 0 || op.correlation < 0)
      return launchOf(op);
    auto next = std::upper_bound(launchBound.begin(), launchBound.end(),
                                 std::make_pair(op.correlation, double(INFINITY)));
    return next == launchBound.end() ? double(op.ts) : std::min(double(op.ts), next->second);
  };

  // The step's host span; the whole trace when it has none.
  double from = -INFINITY, to = INFINITY;
  std::vector<Step> steps = trace.steps;
  std::sort(steps.begin(), steps.end(),
            [](const Step &a, const Step &b) { return a.number < b.number; });
  for (const Step &s : steps)
    out.availableSteps.push_back(s.number);
  if (!steps.empty()) {
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
    } else {
      // The last step that launched GPU work (of its own: not an op the
      // step before launched), each op looked up once among the steps.
      std::vector<uint32_t> byStart(steps.size());
      for (uint32_t k = 0; k < steps.size(); ++k)
        byStart[k] = k;
      std::stable_sort(byStart.begin(), byStart.end(),
                       [&](uint32_t a, uint32_t b) { return steps[a].ts < steps[b].ts; });
      std::vector<char> launched(steps.size(), 0);
      for (const GpuOp &op : trace.ops) {
        const double at = earliestLaunch(op);
        auto in = std::upper_bound(byStart.begin(), byStart.end(), at,
                                   [&](double t, uint32_t k) { return t < steps[k].ts; });
        if (in == byStart.begin())
          continue;
        const Step &st = steps[*(in - 1)];
        if (at < st.ts + st.dur && !launchedBefore(op, st.ts))
          launched[*(in - 1)] = 1;
      }
      for (size_t k = steps.size(); k-- > 0 && !chosen;)
        if (launched[k])
          chosen = &steps[k];
      if (!chosen)
        return fail("no ProfilerStep of the trace launched a GPU op");
    }
    out.step = chosen->number;
    from = chosen->ts;
    to = chosen->ts + chosen->dur;
  } else if (number) {
    return fail(formatv("the trace has no ProfilerStep annotations; leave out --step "
                        "to import the whole trace"));
  } else {
    // The whole trace: up to the host's first call to return once its last
    // GPU op had ended (the sync, copy or poll by which it learned so).
    // The host's calls after that (freeing, unregistering, tearing down)
    // are not the GPU's work the span measures, and a bound that counted
    // them would pass the span.
    double lastEnd = -INFINITY;
    for (const GpuOp &op : trace.ops)
      lastEnd = std::max(lastEnd, op.ts + op.dur);
    double learned = INFINITY;
    for (const HostCall &c : trace.calls)
      if (c.ts + c.dur >= lastEnd)
        learned = std::min(learned, c.ts + c.dur);
    to = std::isinf(learned) ? lastEnd : std::max(lastEnd, learned);
  }

  // The step's ops, in issue order (their calls' correlation ids).
  auto issueOrder = [&](const GpuOp *a, const GpuOp *b) {
    if (a->correlation >= 0 && b->correlation >= 0 && a->correlation != b->correlation)
      return a->correlation < b->correlation;
    // One call's ops (a graph launch's): in the order they ran.
    return launchOf(*a) != launchOf(*b) ? launchOf(*a) < launchOf(*b) : a->ts < b->ts;
  };
  std::vector<const GpuOp *> ops;
  for (const GpuOp &op : trace.ops)
    if (!launchedBefore(op, from) && launchedBefore(op, to))
      ops.push_back(&op);
  if (ops.empty())
    return fail(formatv("{0} launched no GPU op", stepLabel(out)));
  std::stable_sort(ops.begin(), ops.end(), issueOrder);
  out.originTs = INFINITY;
  for (const GpuOp *op : ops)
    out.originTs = std::min(out.originTs, op->ts);
  const double origin = out.originTs;

  // A step a .pipe file can hold: at most an hour, from its first op's
  // start to its last op's end (a `ts` of 1e300 is not a step).
  double last = -INFINITY;
  const GpuOp *first = nullptr, *latest = nullptr;
  for (const GpuOp *op : ops) {
    if (!first || op->ts < first->ts)
      first = op;
    if (op->ts + op->dur > last)
      last = op->ts + op->dur, latest = op;
  }
  if (last - origin > 3600e6)
    return fail(formatv("the step's GPU ops span {0} s (event {1} to event {2}); pipec "
                        "imports steps of at most 3600 s",
                        (last - origin) / 1e6, first->event, latest->event));

  // The previous step's backlog: ops issued before the step that still run
  // after its first op started keep their streams (and SMs) busy.
  std::vector<const GpuOp *> backlog;
  if (std::isfinite(from))
    for (const GpuOp &op : trace.ops)
      if (launchedBefore(op, from) && op.ts + op.dur > origin && op.ts < last)
        backlog.push_back(&op);
  std::stable_sort(backlog.begin(), backlog.end(), issueOrder);

  // Names: foo, foo_2, ... (the second foo is not foo_2 again).
  llvm::StringMap<unsigned> used; ///< per base name: the last suffix tried
  llvm::StringSet<> taken;        ///< every stage name given
  auto uniqueName = [&](const std::string &base) {
    std::string name = base;
    for (unsigned &n = used[base]; !taken.insert(name).second;)
      name = base + "_" + std::to_string(++n + 1);
    return name;
  };
  std::map<int64_t, std::vector<uint32_t>> onStream; ///< Op stages, in issue order
  // A kernel's short name, worked out once for all its launches.
  std::vector<std::string> kernelNames(trace.names.size());
  auto shortNameOf = [&](const GpuOp &op) {
    if (op.kind != OpKind::Kernel)
      return shortName(op, trace.names[op.name]);
    std::string &known = kernelNames[op.name];
    if (known.empty())
      known = shortName(op, trace.names[op.name]);
    return known;
  };
  auto addOp = [&](const GpuOp &op, bool isBacklog) {
    ImportedStage st;
    st.op = uint32_t(&op - trace.ops.data());
    st.backlog = isBacklog;
    st.name = uniqueName(isBacklog ? "backlog_" + shortNameOf(op) : shortNameOf(op));
    st.startUs = std::max(op.ts, origin) - origin;
    st.endUs = op.ts + op.dur - origin;
    st.hostUs = isBacklog ? 0 : launchOf(op) + op.launchDur - origin;
    st.durUs = isBacklog ? st.endUs - st.startUs : op.dur;
    auto [stream, first] = onStream.try_emplace(op.stream);
    if (first)
      out.streams.push_back(op.stream);
    stream->second.push_back(uint32_t(out.stages.size()));
    out.stages.push_back(std::move(st));
    return uint32_t(out.stages.size() - 1);
  };

  // The host's calls in the step, all threads together (the runtime takes
  // them one at a time), in time order. A step op whose call is not in the
  // trace is launched where it started.
  struct Item { // 40 bytes: a million calls
    double ts, dur;
    int64_t correlation;
    int64_t op; ///< index into ops, or -1
    uint32_t name;
    HostCall::Kind kind;
  };
  std::vector<Item> items;
  // Sized once, over the ids' range (an array when they fill it).
  CorrelationIndex opOfCorrelation = CorrelationIndex::sizedFor([&](auto visit) {
    for (const GpuOp *op : ops)
      visit(op->correlation);
  });
  CorrelationIndex opsOfCorrelation = CorrelationIndex::sizedFor([&](auto visit) {
    for (const GpuOp &op : trace.ops)
      visit(op.correlation);
  });
  for (uint32_t i = 0; i < ops.size(); ++i)
    if (ops[i]->correlation >= 0)
      opOfCorrelation.tryEmplace(ops[i]->correlation, i); // a graph's first
  // How many ops each call launched (a graph launch, several; all of them,
  // whether they ran in the step or before it, its call recorded or not).
  for (const GpuOp &op : trace.ops)
    if (op.correlation >= 0)
      ++*opsOfCorrelation.tryEmplace(op.correlation, 0).first;
  auto graphLaunched = [&](const GpuOp &op) {
    const uint32_t *n = op.correlation >= 0 ? opsOfCorrelation.find(op.correlation) : nullptr;
    return n && *n > 1;
  };
  for (const HostCall &c : trace.calls) {
    if (c.ts < from || c.ts >= to)
      continue;
    const uint32_t *found = c.correlation >= 0 ? opOfCorrelation.find(c.correlation) : nullptr;
    int64_t op = found ? int64_t(*found) : -1;
    if (op >= 0 && ops[op]->launchTs != c.ts)
      op = -1; // a duplicate correlation: the op's call is another
    items.push_back({c.ts, c.dur, c.correlation, op, c.name, c.kind});
  }
  // One launch slot per call: a graph's ops whose call is not recorded
  // share the first one's.
  for (uint32_t i = 0; i < ops.size(); ++i)
    if (ops[i]->launchTs < 0 &&
        (i == 0 || ops[i]->correlation < 0 || ops[i - 1]->correlation != ops[i]->correlation))
      items.push_back(
          {slotOf(*ops[i]), 0, ops[i]->correlation, int64_t(i), 0, HostCall::Other});
  std::stable_sort(items.begin(), items.end(), [](const Item &a, const Item &b) {
    return a.ts != b.ts ? a.ts < b.ts : a.correlation < b.correlation;
  });
  // Every op's end, on the trace's clock, in order.
  std::vector<double> ends;
  ends.reserve(trace.ops.size());
  for (const GpuOp &op : trace.ops)
    ends.push_back(op.ts + op.dur);
  std::sort(ends.begin(), ends.end());

  // A host that polls cudaEventQuery or cudaStreamQuery until the GPU is
  // done waits for it as a sync does: a run of at least three polls, no
  // other call among them, over kUnexplainedIdleUs or more, whose last
  // found an op ended since the one before it began, is one sync (what
  // it waited for: what had ended when the last poll returned).
  {
    auto polls = [&](const Item &item) {
      if (item.op >= 0 || item.kind != HostCall::Other)
        return false;
      llvm::StringRef name = trace.callNames[item.name];
      return name == "cudaEventQuery" || name == "cudaStreamQuery";
    };
    std::vector<Item> kept;
    kept.reserve(items.size());
    for (size_t k = 0; k < items.size();) {
      size_t e = k;
      while (e < items.size() && polls(items[e]))
        ++e;
      if (e == k) {
        kept.push_back(items[k++]);
        continue;
      }
      const double first = items[k].ts, last = items[e - 1].ts + items[e - 1].dur;
      bool spun = false;
      if (e - k >= 3 && last - first >= kUnexplainedIdleUs) {
        auto ended = std::lower_bound(ends.begin(), ends.end(), items[e - 2].ts);
        spun = ended != ends.end() && *ended <= last;
      }
      if (spun) {
        Item spin = items[e - 1];
        spin.ts = first;
        spin.dur = last - first;
        spin.kind = HostCall::Poll;
        kept.push_back(spin);
      } else {
        kept.insert(kept.end(), items.begin() + k, items.begin() + e);
      }
      k = e;
    }
    items = std::move(kept);
  }

  // Room for every stage the walk below can add, at most: each op, a sync
  // after a copy that may block, a sync and the host work before it per
  // sync call, and the stretches of host work (no more than fit in the
  // host's span). A million stages grown by doubling would hold both
  // copies at once: the import's peak.
  size_t most = backlog.size() + ops.size();
  for (const GpuOp *op : ops)
    most += op->kind != OpKind::Kernel;
  for (const Item &item : items)
    most += item.kind == HostCall::StreamSync || item.kind == HostCall::EventSync ||
                    item.kind == HostCall::DeviceSync || item.kind == HostCall::Free ||
                    item.kind == HostCall::Poll || (item.op < 0 && item.dur >= kMinHostWorkUs)
                ? 2
                : 0;
  if (!items.empty()) {
    const double span = items.back().ts + items.back().dur - items.front().ts;
    most += std::min<double>(double(items.size()), span / kHostWorkUs + 1);
  }
  out.stages.reserve(most);
  for (const GpuOp *op : backlog)
    out.stages[addOp(*op, true)].graphLaunched = graphLaunched(*op);
  out.backlogOps = backlog.size();

  // What the host waited for inside a launch call. The launches the driver
  // held not yet started, at any time: those whose call had returned less
  // those that had begun (every op of the device whose call is known).
  std::vector<double> returns, starts;
  for (const GpuOp &op : trace.ops) {
    if (op.launchTs >= 0) {
      returns.push_back(op.launchTs + op.launchDur);
      starts.push_back(op.ts);
    }
  }
  std::sort(returns.begin(), returns.end());
  std::sort(starts.begin(), starts.end());
  auto pendingAt = [&](double t) {
    auto returned = std::upper_bound(returns.begin(), returns.end(), t) - returns.begin();
    auto begun = std::upper_bound(starts.begin(), starts.end(), t) - starts.begin();
    return std::max<int64_t>(0, returned - begun);
  };
  // A launch call's own cost: the step's median of the calls that found the
  // queue short of full (a blocked call's is that, the rest waiting).
  double launchCallUs = 0;
  int64_t mostPending = 0;
  {
    std::vector<double> durations, unblocked;
    for (const Item &item : items)
      if (item.op >= 0)
        mostPending = std::max(mostPending, pendingAt(item.ts));
    for (const Item &item : items)
      if (item.op >= 0) {
        durations.push_back(item.dur);
        if (pendingAt(item.ts) + 8 < mostPending)
          unblocked.push_back(item.dur);
      }
    if (unblocked.size() >= 8)
      durations = std::move(unblocked);
    if (!durations.empty()) {
      auto mid = durations.begin() + durations.size() / 2;
      std::nth_element(durations.begin(), mid, durations.end());
      launchCallUs = *mid;
    }
  }
  // The queue filled when a launch found as many launches waiting as ever
  // (within a few: ops begin while the count is taken), hundreds of them,
  // and its call took longer than launches do.
  constexpr int64_t kLeastQueueDepth = 256;
  auto queueFull = [&](const Item &item) {
    return mostPending >= kLeastQueueDepth && item.dur > 2 * launchCallUs + 5 &&
           pendingAt(item.ts) + 8 >= mostPending;
  };
  // A blocking copy that began just as some op ended, after its call was
  // made, waited for the GPU; otherwise its call staged the data first.
  auto waitedForGpu = [&](const Item &item, const GpuOp &op) {
    auto it = std::upper_bound(ends.begin(), ends.end(), op.ts + kClockSlackUs);
    if (it == ends.begin())
      return false;
    const double ended = *(it - 1);
    return ended >= item.ts && op.ts - ended <= kGpuWaitSlackUs;
  };

  // Walk the host's timeline. The ops fill the launch slots in issue order
  // (the same order but where two threads' calls overlap).
  struct PendingSync {
    uint32_t stage;
    int64_t correlation;
    double callEnd;
  };
  std::vector<PendingSync> syncs;
  size_t nextOp = 0;
  bool launched = false; // host time before the step's first launch is not its
  double previousEnd = 0, lastCallEnd = 0;
  auto addCpu = [&](ImportedStage::Kind kind, HostCall::Kind call, double at, double us,
                    const std::string &base = std::string()) {
    ImportedStage st;
    st.kind = kind;
    st.call = call;
    st.name = uniqueName(!base.empty()                           ? base
                         : kind == ImportedStage::Kind::HostWork ? "host_work"
                                                                 : syncName(call));
    st.hostUs = at - origin;
    st.cpuUs = std::min(us, 3600e6); // a stage's longest time
    out.stages.push_back(std::move(st));
    return uint32_t(out.stages.size() - 1);
  };
  // The host's time since its previous call, before a call at `at`: host
  // work, a stage of its own when long enough (0 left); else what is left
  // for the call's own stage to hold.
  auto workBefore = [&](double at) {
    const double before = std::max(0.0, at - previousEnd);
    if (before < kMinHostWorkUs)
      return before;
    addCpu(ImportedStage::Kind::HostWork, HostCall::Other, previousEnd, before);
    return 0.0;
  };
  bool queueFilled = false;  // a launch blocked on the full queue
  int64_t graphLaunches = 0; // the step's graph launches so far
  // Whether every op issued so far had ended by `by` (from the origin).
  auto allEndedBy = [&](double by) {
    for (const auto &[stream, list] : onStream)
      if (!list.empty() && out.stages[list.back()].endUs > by + kClockSlackUs)
        return false;
    return true;
  };
  for (const Item &item : items) {
    const double end = item.ts + item.dur;
    if (launched && item.ts - lastCallEnd >= kHostWorkUs) {
      // The host's time since what was last accounted, short calls in it.
      addCpu(ImportedStage::Kind::HostWork, HostCall::Other, previousEnd,
             item.ts - previousEnd);
      previousEnd = item.ts;
    }
    const bool syncCall = item.kind == HostCall::StreamSync ||
                          item.kind == HostCall::EventSync ||
                          item.kind == HostCall::DeviceSync || item.kind == HostCall::Poll ||
                          (item.kind == HostCall::Free && allEndedBy(end - origin));
    if (item.op >= 0 && nextOp < ops.size()) {
      // A graph launch launches its ops at once: the call's op and those
      // after it in issue order with its correlation.
      const bool graph = graphLaunched(*ops[nextOp]) || item.kind == HostCall::GraphLaunch;
      double firstHostUs = 0;
      for (uint32_t k = 0;
           nextOp < ops.size() &&
           (k == 0 || (graph && ops[nextOp]->correlation >= 0 &&
                       ops[nextOp]->correlation == ops[nextOp - 1]->correlation));
           ++k) {
        const GpuOp &op = *ops[nextOp++];
        uint32_t v = addOp(op, false);
        ImportedStage &st = out.stages[v];
        st.graphLaunched = graph;
        if (graph)
          st.graphLaunch = graphLaunches;
        if (k > 0) { // the same call: no dispatch of its own
          st.hostUs = firstHostUs;
          continue;
        }
        // A synchronous copy call (cudaMemcpy, not Async) holds the host
        // until its copy is done, but for one from pageable memory it
        // returns once the last chunk is staged, a little before the DMA
        // ends: it blocked if it returned after its copy began (a copy
        // between device buffers does not hold the host).
        st.blocking =
            !graph && (blockingCopy(op, trace.names[op.name]) ||
                       (item.kind == HostCall::BlockingCopy && op.kind != OpKind::Kernel &&
                        !(op.kind == OpKind::Memcpy && op.direction == CopyDirection::D2D) &&
                        op.launchTs + op.launchDur >= op.ts));
        // A blocking copy's dispatch lasts until the copy began: the
        // call's time before it (staging pageable memory) is the host's;
        // unless the copy waited for the GPU, and so did the host (a sync).
        // A launch that waited for room in the driver's queue: its wait is
        // the model's launch_queue_depth at work, not the host's.
        double returned = end;
        if (st.blocking) {
          st.waitedForGpu = waitedForGpu(item, op);
          returned = st.waitedForGpu ? item.ts + std::min(item.dur, launchCallUs)
                                     : std::max(item.ts, op.ts);
        } else if (!graph && queueFull(item)) {
          st.queueFull = true;
          queueFilled = true;
          returned = item.ts + launchCallUs;
        }
        st.dispatchUs = launched ? std::max(0.0, returned - previousEnd) : 0;
        if (st.blocking)
          st.hostUs = item.ts - origin;
        firstHostUs = st.hostUs;
        if (st.blocking) { // (adding a stage may move `st`)
          uint32_t sync =
              addCpu(ImportedStage::Kind::Sync, HostCall::BlockingCopy, item.ts, 0);
          out.stages[sync].deps.push_back(v);
          out.stages[sync].returnUs = end - origin;
          ++out.hostSyncs;
        }
      }
      graphLaunches += graph;
      launched = true;
      previousEnd = std::max(previousEnd, end);
    } else if (launched && item.op < 0 && !syncCall && item.dur >= kMinHostWorkUs &&
               item.kind != HostCall::StreamWait) {
      // A call that took time of its own (allocation, stream creation, a
      // free that did not wait): the host's, where it happened.
      const double shortWork = workBefore(item.ts);
      uint32_t call =
          addCpu(ImportedStage::Kind::Call, item.kind, item.ts, item.dur + shortWork,
                 identifier(trace.callNames[item.name], "call_", "_call"));
      out.stages[call].callName = item.name;
      previousEnd = std::max(previousEnd, end);
    } else if (launched && syncCall) {
      // The host's time before the call since its previous one is host
      // work, not dispatch: it runs before the sync (a little of it is the
      // sync stage's own time, after it).
      const double shortWork = workBefore(item.ts);
      uint32_t sync = addCpu(ImportedStage::Kind::Sync, item.kind, item.ts, shortWork);
      out.stages[sync].returnUs = end - origin;
      syncs.push_back({sync, item.correlation, end});
      ++out.hostSyncs;
      previousEnd = std::max(previousEnd, end);
    }
    lastCallEnd = std::max(lastCallEnd, end);
  }
  if (queueFilled)
    out.device.launchQueueDepth = uint32_t(std::min<int64_t>(mostPending, UINT32_MAX));
  // Ops whose call is a duplicate, or missing from the walk: at the end.
  while (nextOp < ops.size())
    addOp(*ops[nextOp++], false);
  // The device's gap between back-to-back ops of a stream, as recorded:
  // an op whose launch had returned before the one ahead of it ended
  // began this long after it (waits for other streams left out: gaps of
  // kGpuWaitSlackUs and more).
  {
    double sum = 0;
    uint64_t gaps = 0;
    for (const auto &[stream, list] : onStream)
      for (size_t k = 1; k < list.size(); ++k) {
        const ImportedStage &a = out.stages[list[k - 1]], &b = out.stages[list[k]];
        const GpuOp &op = trace.ops[b.op];
        if (b.backlog || op.launchTs < 0 || op.launchTs + op.launchDur > a.endUs + origin)
          continue;
        const double gap = b.startUs - a.endUs;
        if (gap >= 0 && gap < kGpuWaitSlackUs)
          sum += gap, ++gaps;
      }
    if (gaps >= kLeastGapSamples)
      out.device.streamGapUs = sum / double(gaps);
  }

  // What only the walk needed goes.
  std::vector<Item>().swap(items); // (assigning {} would keep its capacity)
  opOfCorrelation = CorrelationIndex();
  opsOfCorrelation = CorrelationIndex();

  for (int64_t id : out.streams) {
    auto known = trace.streamPriority.find(id);
    if (known != trace.streamPriority.end() && known->second != 0)
      out.streamPriority[id] = known->second;
  }
  if (out.streams.size() > 256)
    return fail(formatv("the step's GPU ops run on {0} streams; a .pipe pipeline has at "
                        "most 256",
                        out.streams.size()));

  // Orderings. Keys: an op's correlation (its launch time when unknown).
  auto key = [&](uint32_t i, bool byCorrelation) {
    const GpuOp &op = trace.ops[out.stages[i].op];
    if (out.stages[i].backlog && (byCorrelation ? op.correlation < 0 : op.launchTs < 0))
      return -std::numeric_limits<double>::infinity(); // before all of the step
    return byCorrelation ? double(op.correlation) : launchOf(op);
  };
  auto lastBefore = [&](int64_t stream, double at, bool byCorr) -> int64_t {
    auto it = onStream.find(stream);
    if (it == onStream.end())
      return -1;
    return lastBelow(it->second, at, [&](uint32_t i) { return key(i, byCorr); });
  };
  // The same, among the ops that had ended by `by` (recorded, from the
  // origin): an ordering the recording would contradict is none. A stream's
  // ops end in issue order, so both conditions are prefixes of its list.
  auto lastEndedBefore = [&](int64_t stream, double at, bool byCorr, double by) -> int64_t {
    auto it = onStream.find(stream);
    if (it == onStream.end())
      return -1;
    const std::vector<uint32_t> &list = it->second;
    auto issued = std::partition_point(list.begin(), list.end(),
                                       [&](uint32_t i) { return key(i, byCorr) < at; });
    auto ended = std::partition_point(list.begin(), issued, [&](uint32_t i) {
      return out.stages[i].endUs <= by + kClockSlackUs;
    });
    return ended == list.begin() ? -1 : int64_t(*(ended - 1));
  };
  auto firstAfter = [&](int64_t stream, double at, bool byCorr) -> int64_t {
    auto it = onStream.find(stream);
    if (it == onStream.end())
      return -1;
    return firstAbove(it->second, at, [&](uint32_t i) { return key(i, byCorr); });
  };
  // Duplicates are taken out once, at the end (a find per call would be
  // quadratic in a stage's dependencies).
  auto depend = [&](int64_t consumer, int64_t producer) {
    if (consumer < 0 || producer < 0 || consumer <= producer)
      return;
    out.stages[consumer].deps.push_back(uint32_t(producer));
  };
  // Same-stream order: the recorded program relies on it, so it is written.
  for (const auto &[stream, list] : onStream)
    for (size_t k = 1; k < list.size(); ++k)
      depend(list[k], list[k - 1]);
  // A cut at each of `cuts` (keys in issue order): the first op after it
  // on every stream follows the last before it on every stream. Only the
  // latest cut before an op (and after the previous op of its stream)
  // matters: the last op before an earlier cut is, on each stream, at or
  // before the last op before a later one. So each op gets at most one
  // dependency per stream, however many cuts there were (12,000 over 256
  // streams made 786 million calls).
  auto cut = [&](std::vector<double> cuts, bool byCorrelation) {
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    if (cuts.empty())
      return;
    for (const auto &[stream, list] : onStream)
      for (size_t k = 0; k < list.size(); ++k) {
        const double at = key(list[k], byCorrelation);
        auto it = std::lower_bound(cuts.begin(), cuts.end(), at);
        if (it == cuts.begin())
          continue;
        const double c = *(it - 1);
        if (k > 0 && c < key(list[k - 1], byCorrelation))
          continue;
        for (int64_t b : out.streams)
          if (b != stream)
            depend(list[k], lastEndedBefore(b, c, byCorrelation, out.stages[list[k]].startUs));
      }
  };
  // The stream waits that order the backlog were issued before the step,
  // from its first op's launch on: they hold as the step's own do.
  double waitsFrom = from;
  for (const GpuOp *op : backlog)
    if (op->launchTs >= 0)
      waitsFrom = std::min(waitsFrom, op->launchTs);
  auto callIn = [&](int64_t corr, double begin) {
    const uint32_t *call = callOf.find(corr);
    return call && trace.calls[*call].ts >= begin && trace.calls[*call].ts < to;
  };
  auto inStep = [&](int64_t corr) { return callIn(corr, from); };
  // Sync events by the call they belong to.
  llvm::DenseMap<int64_t, const SyncEvent *> syncEventOf;
  for (const SyncEvent &s : trace.syncs) {
    const bool issued = inStep(s.correlation);
    if (s.kind == SyncEvent::StreamWait && (issued || callIn(s.correlation, waitsFrom))) {
      out.waitsIssued += issued;
      if (s.waitOnStream >= 0 && s.recordCorrelation >= 0)
        depend(firstAfter(s.stream, double(s.correlation), true),
               lastBefore(s.waitOnStream, double(s.recordCorrelation), true));
    } else if (issued && s.kind != SyncEvent::StreamWait) {
      syncEventOf[s.correlation] = &s;
    }
  }
  if (!out.syncEvents) {
    std::vector<double> waits;
    uint64_t backlogWaits = 0; ///< issued before the step, ordering its backlog
    bool byCorrelation = true;
    for (const HostCall &c : trace.calls)
      if (c.kind == HostCall::StreamWait && c.ts >= waitsFrom && c.ts < to) {
        out.waitsIssued += c.ts >= from;
        backlogWaits += c.ts < from;
        byCorrelation &= c.correlation >= 0;
        waits.push_back(c.correlation >= 0 ? double(c.correlation) : c.ts);
      }
    if (!byCorrelation) {
      waits.clear();
      for (const HostCall &c : trace.calls)
        if (c.kind == HostCall::StreamWait && c.ts >= waitsFrom && c.ts < to)
          waits.push_back(c.ts);
    }
    cut(std::move(waits), byCorrelation);
    if (out.waitsIssued || backlogWaits)
      out.notes.push_back(formatv(
          "the trace has no sync events: each of its {0} cudaStreamWaitEvent call(s){1} "
          "orders every stream's next op behind the last op issued before it on every "
          "other stream (a safe superset of the recorded orderings); {2}",
          out.waitsIssued,
          backlogWaits ? formatv(" (and {0} issued before the step, which order the "
                                 "previous step's ops still running in it)",
                                 backlogWaits)
                             .str()
                       : std::string(),
          trace.exactWaitsAdvice));
  }
  // What each host synchronisation waited for.
  for (const PendingSync &p : syncs) {
    ImportedStage &st = out.stages[p.stage];
    const double at = p.correlation >= 0 ? double(p.correlation) : INFINITY;
    auto found = syncEventOf.find(p.correlation);
    const SyncEvent *e = found == syncEventOf.end() ? nullptr : found->second;
    std::vector<int64_t> producers;
    if (st.call == HostCall::DeviceSync || st.call == HostCall::Free) {
      for (int64_t b : out.streams)
        producers.push_back(lastBefore(b, at, true));
    } else if (e && e->kind == SyncEvent::StreamSync && e->stream >= 0) {
      producers.push_back(lastBefore(e->stream, at, true));
    } else if (e && e->kind == SyncEvent::EventSync && e->waitOnStream >= 0 &&
               e->recordCorrelation >= 0) {
      producers.push_back(lastBefore(e->waitOnStream, double(e->recordCorrelation), true));
    } else {
      // Which stream or event is not in the trace: whatever had ended by
      // the time the call returned (the recording shows it was done).
      for (int64_t b : out.streams)
        producers.push_back(lastEndedBefore(b, at, true, p.callEnd - origin));
    }
    for (int64_t u : producers) {
      depend(p.stage, u);
      if (u >= 0)
        st.waitedEndUs = std::max(st.waitedEndUs, out.stages[u].endUs);
    }
  }
  for (ImportedStage &st : out.stages)
    if (st.kind == ImportedStage::Kind::Sync && st.call == HostCall::BlockingCopy)
      st.waitedEndUs = out.stages[st.deps.front()].endUs;
  // An op that began well after everything it is known to wait for (its
  // stream's previous op, the ops its recorded orderings name, its launch
  // call's return; a backlog op, the step's start) waited for something
  // else. Where another op ended just before it began, it waited for that
  // one (an ordering the trace does not record: a dependency); otherwise
  // for what the trace does not hold (a host node, an external event,
  // another process): the wait is kept, as a stage of its time between the
  // op and what it follows. Both are said: a run keeps the wait, a what-if
  // moves it with what it follows.
  uint64_t inferredWaits = 0;
  {
    struct Idle {
      uint32_t at;
      double us;
    };
    std::vector<Idle> idles;
    std::vector<std::pair<double, uint32_t>> byEnd; ///< (end, stage), device ops
    for (uint32_t i = 0; i < out.stages.size(); ++i)
      if (!out.stages[i].onHost())
        byEnd.push_back({out.stages[i].endUs, i});
    std::sort(byEnd.begin(), byEnd.end());
    // Until when the GPU ran something before `t` (from the origin): the
    // latest end among the ops that began before it.
    std::vector<std::pair<double, double>> byStart; ///< (start, latest end so far)
    for (const ImportedStage &st : out.stages)
      if (!st.onHost())
        byStart.push_back({double(st.startUs), double(st.endUs)});
    std::sort(byStart.begin(), byStart.end());
    for (size_t k = 1; k < byStart.size(); ++k)
      byStart[k].second = std::max(byStart[k].second, byStart[k - 1].second);
    auto busyUntil = [&](double t) {
      auto it = std::lower_bound(byStart.begin(), byStart.end(),
                                 std::make_pair(t - kClockSlackUs, -double(INFINITY)));
      return it == byStart.begin() ? 0.0 : std::min(t, (it - 1)->second);
    };
    // What share of the SMs the kernels running at `t` asked for (worked
    // out the first time it is asked: most steps never need it).
    const DeviceProfile profile = profileFor(out.device);
    std::optional<SmDemand> demand;
    auto askedAt = [&](double t) {
      if (!demand)
        demand.emplace(out.stages, trace.ops, profile);
      return demand->at(t);
    };
    for (uint32_t i = 0; i < out.stages.size(); ++i) {
      ImportedStage &st = out.stages[i];
      if (st.onHost())
        continue;
      const GpuOp &op = trace.ops[st.op];
      if (op.ts <= origin)
        continue;
      double explained = origin;
      if (!st.backlog && op.launchTs >= 0)
        explained = std::max(explained, op.launchTs + op.launchDur);
      for (uint32_t d : st.deps)
        if (!out.stages[d].onHost())
          explained = std::max(explained, out.stages[d].endUs + origin);
      // Waited at least a few microseconds past what it is known to follow
      // (less is the device's own start-up): for what?
      const double waited = op.ts - explained;
      if (waited < kGpuWaitSlackUs)
        continue;
      // The op issued before it that ended last before it began (among the
      // last few to end: a bounded look, whatever the input). The op began
      // as it ended, or a little after it with the GPU idle in between
      // (the wait's own latency).
      const double at = op.ts - origin;
      auto it = std::upper_bound(byEnd.begin(), byEnd.end(),
                                 std::make_pair(at + kClockSlackUs, UINT32_MAX));
      for (int look = 0; look < 64 && it != byEnd.begin() && (it - 1)->second >= i; ++look)
        --it;
      int64_t ended = -1;
      bool asEnded = false, idleBefore = false;
      if (it != byEnd.begin() && (it - 1)->second < i) {
        const double end = (it - 1)->first;
        asEnded = at - end <= kGpuWaitSlackUs;
        idleBefore =
            !asEnded && at - end < kUnexplainedIdleUs && busyUntil(at) <= end + kClockSlackUs;
        if (asEnded || idleBefore)
          ended = int64_t((it - 1)->second);
      }
      // It waited for one of the ops that ended just before it began: all
      // of them (a safe superset, each ended before it began), the latest
      // alone when it began a while after the GPU went idle.
      auto waitedForEnded = [&] {
        st.deps.push_back(uint32_t(ended));
        if (asEnded)
          for (auto c = it - 1; c != byEnd.begin() && it - c < 64;) {
            --c;
            if (c->first < at - kGpuWaitSlackUs)
              break;
            if (c->second < i)
              st.deps.push_back(c->second);
          }
        ++inferredWaits;
      };
      // Whether, at `t`, its blocks fit beside those of the kernels running
      // (an op that is not a kernel needs no room on the SMs).
      const auto roomAt = [&](double t) {
        return op.kind != OpKind::Kernel || askedAt(t) + smShare(op, profile) <= 1;
      };
      if (!st.graphLaunched && op.launchTs >= 0) {
        // A launched op that found the GPU running others may have waited
        // for room on the SMs (or a copy engine), which the model has. It
        // waited for the op ahead of it if it began a while after the GPU
        // went idle, or, a kernel, as that op ended while it had room
        // beside what was running.
        if (at - busyUntil(at) < kUnexplainedIdleUs) {
          if (ended >= 0 && (idleBefore || (op.kind == OpKind::Kernel &&
                                            roomAt(out.stages[ended].endUs - kClockSlackUs))))
            waitedForEnded();
          continue;
        }
      } else {
        // A graph's node, or an op whose launch the trace lacks: it waited
        // for the op that ended as it began, unless (a kernel) it had no
        // room beside what ran until then; or, on a GPU full of others'
        // blocks, for room, which the model has.
        if (ended >= 0 && (idleBefore || roomAt(out.stages[ended].endUs - kClockSlackUs))) {
          waitedForEnded();
          continue;
        }
        if (at - busyUntil(at) < kClockSlackUs && !roomAt(at - kClockSlackUs))
          continue;
      }
      if (waited >= kUnexplainedIdleUs)
        idles.push_back({i, waited});
    }
    if (!idles.empty()) {
      std::vector<ImportedStage> old = std::move(out.stages);
      out.stages.clear();
      out.stages.reserve(old.size() + idles.size());
      std::vector<uint32_t> newIndex(old.size());
      std::string longestName;
      double idleUs = 0, longestUs = 0, longestAt = 0;
      size_t k = 0;
      for (uint32_t i = 0; i < old.size(); ++i) {
        if (k < idles.size() && idles[k].at == i) {
          const ImportedStage &before = old[i];
          ImportedStage idle;
          idle.idle = true;
          idle.op = before.op;
          idle.backlog = before.backlog;
          idle.graphLaunched = before.graphLaunched;
          // Between two nodes of one graph launch: a node of it too.
          if (i > 0 && old[i - 1].graphLaunch >= 0 &&
              old[i - 1].graphLaunch == before.graphLaunch)
            idle.graphLaunch = before.graphLaunch;
          idle.hostUs = before.hostUs;
          idle.durUs = idles[k].us;
          idle.endUs = trace.ops[before.op].ts - origin;
          idle.startUs = idle.endUs - idle.durUs;
          idle.name = uniqueName("gpu_idle");
          idleUs += idle.durUs;
          if (idle.durUs > longestUs)
            longestUs = idle.durUs, longestName = before.name, longestAt = idle.endUs;
          out.stages.push_back(std::move(idle));
          ++k;
        }
        newIndex[i] = uint32_t(out.stages.size());
        out.stages.push_back(std::move(old[i]));
      }
      for (ImportedStage &st : out.stages)
        for (uint32_t &d : st.deps)
          d = newIndex[d];
      // The wait follows what the op followed; the op follows the wait.
      for (uint32_t j = 0; j + 1 < out.stages.size(); ++j)
        if (out.stages[j].idle) {
          out.stages[j].deps = std::move(out.stages[j + 1].deps);
          out.stages[j + 1].deps = {j};
        }
      out.notes.push_back(formatv(
          "ops waited {0} ms in {1} gap(s) for what the trace does not show (the longest "
          "{2} ms, before '{3}', {4} ms into the step): each wait is kept as a gpu_idle "
          "stage of its time after what the op follows, so that a run keeps it",
          formatv("{0:f2}", idleUs / 1000), idles.size(), formatv("{0:f2}", longestUs / 1000),
          longestName, formatv("{0:f2}", longestAt / 1000)));
    }
  }
  taken = {};
  used = {};
  if (inferredWaits)
    out.notes.push_back(formatv(
        "{0} op(s) began, {1} us or more after everything the trace says they follow, as an "
        "op of another stream ended (or soon after, with the GPU idle in between) and not "
        "for want of room on the SMs: each is taken to have waited for that op (an ordering "
        "the trace does not record)",
        inferredWaits, unsigned(kGpuWaitSlackUs)));
  // Only the dependencies the others do not imply: the file states each
  // ordering once (and `pipec check` has no redundant one to warn about).
  CSR graph;
  for (ImportedStage &st : out.stages) {
    std::sort(st.deps.begin(), st.deps.end());
    st.deps.erase(std::unique(st.deps.begin(), st.deps.end()), st.deps.end());
    graph.targets.insert(graph.targets.end(), st.deps.begin(), st.deps.end());
    graph.begin.push_back(graph.targets.size());
  }
  DeclaredRedundancy redundant = findRedundantDependencies(graph);
  if (redundant.complete) {
    size_t edge = 0;
    for (ImportedStage &st : out.stages) {
      std::vector<uint32_t> kept;
      for (uint32_t u : st.deps)
        if (redundant.kept[edge++])
          kept.push_back(u);
      st.deps = std::move(kept);
    }
  }
  // The step's ops, taken from the trace in its order (the others left).
  std::vector<uint32_t> kept(trace.ops.size(), UINT32_MAX);
  for (const ImportedStage &st : out.stages)
    if (!st.onHost())
      kept[st.op] = 0;
  uint32_t next = 0;
  for (uint32_t i = 0; i < trace.ops.size(); ++i)
    if (kept[i] == 0) {
      kept[i] = next;
      trace.ops[next++] = trace.ops[i];
    }
  for (ImportedStage &st : out.stages)
    if (!st.onHost())
      st.op = kept[st.op];
  trace.ops.resize(next);
  out.ops = std::move(trace.ops);
  return out;
}

double importer::smShare(const GpuOp &op, const DeviceProfile &profile) {
  const uint32_t threads = uint32_t(std::clamp<uint64_t>(op.threads, 1, 1024));
  const uint64_t smem = op.smem <= profile.sharedMemoryPerBlock ? op.smem : 0;
  const uint32_t regs = op.regs <= 255 ? op.regs : 0;
  unsigned perSM = profile.blocksPerSM(threads, smem, regs);
  if (perSM == 0)
    perSM = std::max(1u, profile.blocksPerSM(threads));
  return double(std::max<uint64_t>(op.blocks, 1)) /
         (double(perSM) * double(std::max(1u, profile.sms)));
}

SmDemand::SmDemand(const std::vector<ImportedStage> &stages, const std::vector<GpuOp> &ops,
                   const DeviceProfile &profile) {
  for (const ImportedStage &st : stages)
    if (!st.onHost() && !st.idle && ops[st.op].kind == OpKind::Kernel) {
      const double share = smShare(ops[st.op], profile);
      asked_.push_back({double(st.startUs), share});
      asked_.push_back({double(st.endUs), -share});
    }
  // Ends before starts at one instant: back to back is not at once.
  std::sort(asked_.begin(), asked_.end());
  for (size_t k = 1; k < asked_.size(); ++k)
    asked_[k].second += asked_[k - 1].second;
}

double SmDemand::at(double t) const {
  auto after =
      std::upper_bound(asked_.begin(), asked_.end(), std::make_pair(t, double(INFINITY)));
  return after == asked_.begin() ? 0.0 : (after - 1)->second;
}

double SmDemand::most() const {
  double most = 0;
  for (const auto &[t, share] : asked_)
    most = std::max(most, share);
  return most;
}

DeviceProfile importer::profileFor(const DeviceInfo &d) {
  DeviceProfile p;
  // The driver's launch queue as the recording filled it.
  if (d.launchQueueDepth)
    p.launchQueueDepth = d.launchQueueDepth;
  // The device's back-to-back gap as the recording shows it.
  if (d.streamGapUs > 0)
    p.streamGapUs = d.streamGapUs;
  if (d.name.empty())
    return p;
  p.name = "model of " + d.name + " (from the trace's deviceProperties)";
  if (d.sms)
    p.sms = d.sms;
  if (d.maxThreadsPerSM)
    p.maxThreadsPerSM = d.maxThreadsPerSM;
  if (d.sharedMemoryPerSM)
    p.sharedMemoryPerSM = d.sharedMemoryPerSM;
  if (d.sharedMemoryPerBlock)
    p.sharedMemoryPerBlock = d.sharedMemoryPerBlock;
  if (d.registersPerSM)
    p.registersPerSM = d.registersPerSM;
  // Resident blocks per SM by compute capability (CUDA C++ Programming
  // Guide): 32 on 7.0, 8.0 and 9.0; 16 on 7.5 and 8.6/8.9; 24 on 8.9.
  unsigned cc = d.major * 10 + d.minor;
  p.maxBlocksPerSM = cc == 75 || cc == 86 ? 16 : cc == 89 ? 24 : 32;
  // Pinned copies over PCIe, per direction (estimates from the generation
  // of the link; docs/import.md): Gen3 x16 ~12 GB/s (V100), Gen4 x16 ~25
  // GB/s (A100), Gen5 x16 ~52 GB/s (H100/H200).
  double pcie = d.major >= 9 ? 52 : d.major == 8 ? 25 : 12;
  p.h2dGBps = p.d2hGBps = pcie;
  return p;
}

double importer::cpuTimeUs(const ImportedStage &st, const DeviceProfile &profile) {
  if (st.kind != ImportedStage::Kind::Sync)
    return st.cpuUs;
  // The model wakes the host syncLatencyUs after the last op ends (at once
  // when it had ended before the call); a sync's cpuUs is the host's time
  // just before the call.
  double woken = st.waitedEndUs + profile.syncLatencyUs;
  if (st.deps.empty() || woken < st.hostUs)
    woken = st.hostUs;
  return st.cpuUs + std::max(0.0, st.returnUs - woken);
}
