//===- Advisor.cpp --------------------------------------------------------===//

#include "runtime/advise/Advisor.h"

#include "compiler/driver/Compilation.h"
#include "compiler/emit/Emitters.h"
#include "compiler/format/Edit.h"
#include "compiler/program/TimeFormat.h"
#include "compiler/schedule/Lints.h"
#include "compiler/schedule/Meaning.h"
#include "model/Model.h"
#include "runtime/report/Reports.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>

using namespace pipec;
using namespace pipec::runtime;
using llvm::formatv;

namespace {

constexpr uint32_t kNone = UINT32_MAX;

/// One run of `schedule` for its timings only (no host spans kept).
llvm::Expected<LoweringRun> runQuietly(const Schedule &schedule, Backend &backend,
                                       unsigned replays, Lowering lowering) {
  RunOptions options;
  options.replays = replays;
  options.recordHost = false;
  options.extrapolate = schedule.instances.size() >= RunOptions::kSkipAheadFrom;
  return backend.run(schedule, lowering, options);
}

/// A stream name not declared in `p` nor taken, from `base`.
std::string freshStream(const program::Pipeline &p, const std::string &base,
                        llvm::StringSet<> &taken) {
  llvm::StringSet<> used = taken;
  for (const program::Stream &s : p.streams)
    used.insert(s.name);
  std::string name = base;
  for (unsigned i = 2; used.count(name); ++i)
    name = base + std::to_string(i);
  taken.insert(name);
  return name;
}

/// A declared stream's priority as written ("" for none).
std::string priorityText(const program::Stream &s) {
  switch (s.priorityClass) {
  case program::PriorityClass::High:
    return "high";
  case program::PriorityClass::Low:
    return "low";
  case program::PriorityClass::Raw:
    return std::to_string(s.rawPriority);
  case program::PriorityClass::Normal:
    break;
  }
  return "";
}

/// The file with some edits applied, checked and compiled as compile does.
struct Variant {
  std::string text;
  driver::Compiled compiled; ///< the changed file, compiled as compile would
  const Schedule *schedule = nullptr;
};

class Advisor {
public:
  Advisor(const AdviseSource &source, const Schedule &compiled, const model::Model &model,
          Backend &backend, const AdviseOptions &options)
      : source(source), compiled(compiled), p(compiled.pipeline), model(model),
        profile(model.profile()), backend(backend), cost(model.graphCost()), options(options) {
  }

  llvm::Expected<PipelineAdvice> run();
  llvm::Error connections();
  /// A note naming the device work that starts latest later with `other`
  /// hardware queues than the profile's, and what overtook it.
  llvm::Error connectionTrade(unsigned other);
  llvm::Error waveCliffs();

private:
  /// A candidate: what it changes, in words and as edits.
  struct Candidate {
    std::string change;
    std::vector<Edit> edits;
    std::string key; ///< suggestions with one key change one thing: the best is kept
  };

  bool worth(double before, double after) const {
    return worthIt(before, after, options.minGainFraction, options.minGainUs);
  }
  double threshold(double of) const {
    return std::max(options.minGainUs, options.minGainFraction * of);
  }

  llvm::Expected<std::unique_ptr<Variant>> build(const std::vector<Edit> &edits) const;
  /// The edits that keep, as dependencies, the stream orders `variant`
  /// drops (of stages whose data is not declared); none when it drops a
  /// dependency (a bug: no edit removes one).
  std::optional<std::vector<Edit>> keepOrders(const Variant &variant) const;
  /// Per stream, its device instances in issue order.
  using OnStreams = std::vector<std::vector<uint32_t>>;
  OnStreams instancesOnStreams() const;
  /// `base`: the baseline run, which picks the streams a stage is moved to.
  std::vector<Candidate> restreamCandidates(const LoweringRun &base,
                                            const OnStreams &onStream);
  /// The streams to raise to priority high: those whose work waited
  /// longest for the device itself in `base` (kMaxPriorities at most).
  std::vector<uint32_t> priorityCandidates(const LoweringRun &base, const OnStreams &onStream);
  /// What the budgets left out (notes): moves to streams not tried, and
  /// streams whose priority was not tried.
  size_t movesLeftOut = 0, prioritiesLeftOut = 0;
  /// `edits`, and the removal of each declared stream they leave with no
  /// stage (it would be an `unused stream` warning).
  std::vector<Edit> withoutEmptyStreams(std::vector<Edit> edits) const;
  /// Tries one candidate: a suggestion when it keeps the meaning and gains
  /// enough; a note when only a version that drops undeclared stream
  /// orders would.
  llvm::Error tryCandidate(const Candidate &c);

  const AdviseSource &source;
  const Schedule &compiled;
  const program::Pipeline &p;
  const model::Model &model;
  const DeviceProfile &profile;
  Backend &backend;
  const GraphCostModel &cost;
  const AdviseOptions &options;
  /// Where the objective is the model's and some kernel does not say what
  /// bounds it: the model with such kernels contending for the whole
  /// device (Suggestion::contendedBeforeUs), and the baseline on it.
  std::unique_ptr<Backend> contended;
  double contendedBefore = -1;
  /// Measures a suggestion's schedule on the contended model too, and keeps
  /// the range where it says something else.
  llvm::Error range(Suggestion &s, const Schedule &schedule);

  PipelineAdvice out;
  std::map<std::string, size_t> slot; ///< key -> index in out.suggestions
  std::vector<std::string> stateNotes;
  /// key -> what a change could gain were the data declared, in words
  std::map<std::string, std::pair<double, std::string>> hypothetical;
};

llvm::Expected<std::unique_ptr<Variant>> Advisor::build(const std::vector<Edit> &edits) const {
  auto v = std::make_unique<Variant>();
  llvm::Expected<std::string> text = applyEdits(*source.file, source.text, p.name, edits);
  if (!text)
    return text.takeError();
  v->text = std::move(*text);
  // Compiled as `pipec compile` would (the same phases, lints and races),
  // its diagnostics kept, not printed; the graph question is asked of the
  // baseline only.
  driver::loadText("suggestion.pipe", v->text, v->compiled.src);
  driver::CompileRequest request;
  request.pipeline = p.name;
  request.schedule = options.schedule;
  request.schedule.graphCost = nullptr;
  std::string errors;
  driver::DiagnosticOptions quiet;
  quiet.errorLimit = 0;
  quiet.handler = [&](const Diagnostic &d) {
    if (d.severity == Severity::Error && errors.empty())
      errors = d.message;
  };
  std::string usage;
  switch (driver::compileSource(profile, request, quiet, v->compiled, usage)) {
  case driver::Outcome::Success:
    break;
  case driver::Outcome::InputErrors:
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the changed file does not check: " + errors);
  case driver::Outcome::UsageError:
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "the pipeline is gone");
  }
  v->schedule = v->compiled.views.front();
  return v;
}

std::optional<std::vector<Edit>> Advisor::keepOrders(const Variant &variant) const {
  std::vector<Edit> edits;
  std::set<std::pair<std::string, std::string>> added;
  const Instances &bi = compiled.instances;
  for (const DroppedOrdering &d : droppedOrderings(compiled, *variant.schedule)) {
    if (d.declared)
      return std::nullopt;
    const std::string &to = bi.stage(d.to).name, &from = bi.stage(d.from).name;
    uint32_t distance = bi.iterationOf(d.to) - bi.iterationOf(d.from);
    std::string dep = from + (distance == 0   ? ""
                              : distance == 1 ? "@prev"
                                              : "@prev(" + std::to_string(distance) + ")");
    if (added.insert({to, dep}).second)
      edits.push_back(Edit::addDependency(to, dep));
  }
  return edits;
}

/// At most this many declared streams a stage held back by stream order is
/// tried on (and a new stream of its own): those least busy while it waits.
/// Every stream of a device would be a compile and a run each, hundreds for
/// an imported step.
constexpr size_t kMoveTargets = 4;
/// At most this many streams' priority raised, one candidate each.
constexpr size_t kMaxPriorities = 8;

Advisor::OnStreams Advisor::instancesOnStreams() const {
  OnStreams on(compiled.streamPlan.streams.size());
  for (uint32_t v = 0; v < compiled.instances.size(); ++v)
    if (!compiled.onHost(v))
      on[compiled.streamOf(v)].push_back(v);
  return on;
}

std::vector<uint32_t> Advisor::priorityCandidates(const LoweringRun &base,
                                                  const OnStreams &onStream) {
  // Per stream: how long its work waited once its dependencies and the
  // work before it on its stream had ended (for SMs, engines, a queue:
  // what a higher priority can shorten).
  const size_t streams = p.streams.size();
  std::vector<double> waited(streams, 0);
  const Instances &inst = compiled.instances;
  for (const std::vector<uint32_t> &list : onStream) {
    double previous = -INFINITY;
    for (uint32_t v : list) {
      double ready = previous;
      for (uint32_t u : inst.deps().row(v))
        ready = std::max(ready, base.end[u]);
      const uint32_t s = compiled.streamOf(v);
      if (s < streams && std::isfinite(ready))
        waited[s] += std::max(0.0, base.start[v] - ready);
      previous = base.end[v];
    }
  }
  std::vector<uint32_t> raise;
  for (uint32_t i = 0; i < streams; ++i)
    if (compiled.stream(i).cudaPriority != profile.priorityGreatest)
      raise.push_back(i);
  if (raise.size() <= kMaxPriorities)
    return raise;
  std::stable_sort(raise.begin(), raise.end(),
                   [&](uint32_t x, uint32_t y) { return waited[x] > waited[y]; });
  prioritiesLeftOut = raise.size() - kMaxPriorities;
  raise.resize(kMaxPriorities);
  std::sort(raise.begin(), raise.end());
  return raise;
}

std::vector<Advisor::Candidate> Advisor::restreamCandidates(const LoweringRun &base,
                                                            const OnStreams &onStream) {
  std::vector<Candidate> out;
  const Analysis &a = compiled.analysis;
  // How long each stream is busy over [from, to) in the baseline run.
  auto busy = [&](uint32_t stream, double from, double to) {
    const std::vector<uint32_t> &list = onStream[stream];
    // Work on a stream runs in issue order: the first that ends after `from`.
    auto it = std::partition_point(list.begin(), list.end(),
                                   [&](uint32_t v) { return base.end[v] <= from; });
    double sum = 0;
    for (; it != list.end() && base.start[*it] < to; ++it)
      sum += std::max(0.0, std::min(to, base.end[*it]) - std::max(from, base.start[*it]));
    return sum;
  };
  auto streamName = [&](const program::Stage &st) {
    return st.stream < 0 ? std::string() : p.streams[st.stream].name;
  };
  // Stages that stream order holds back on the critical path (by more than
  // the threshold): to each other declared stream, and to one of their own
  // with their stream's priority.
  llvm::StringSet<> tried;
  for (const StreamOrderDelay &d : a.streamOrderOnCriticalPath) {
    if (d.delayUs < threshold(a.criticalPathUs))
      continue;
    const uint32_t k = compiled.instances.stageOf(d.to);
    const program::Stage &stage = p.stages[k];
    // A stage without `on` is pipec's to place: the assignment's own search
    // already moved the stages stream order held back (and each such move
    // here would pay that search again).
    if (onHostThread(stage.kind()) || program::unpinned(stage) ||
        !tried.insert(stage.name).second || tried.size() > 8)
      continue;
    // (Within its device: another device's stream would move the work
    // there. A collective's part is its device's.)
    if (program::isCollective(stage))
      continue;
    const uint32_t device = stage.stream < 0 ? 0 : p.streams[stage.stream].device;
    // The streams of its device least busy from when its dependencies allow
    // it to start for as long as it runs, in the baseline run.
    const double ready = base.start[d.to] - d.delayUs;
    const double until = ready + (base.end[d.to] - base.start[d.to]);
    std::vector<std::pair<double, uint32_t>> targets;
    for (uint32_t i = 0; i < p.streams.size(); ++i)
      if (int32_t(i) != stage.stream && p.streams[i].device == device)
        targets.push_back({busy(i, ready, until), i});
    std::stable_sort(targets.begin(), targets.end(),
                     [](const auto &x, const auto &y) { return x.first < y.first; });
    if (targets.size() > kMoveTargets) {
      movesLeftOut += targets.size() - kMoveTargets;
      targets.resize(kMoveTargets);
    }
    std::sort(targets.begin(), targets.end(),
              [](const auto &x, const auto &y) { return x.second < y.second; });
    for (auto [load, i] : targets)
      out.push_back(
          {formatv("move stage '{0}' to stream '{1}'", stage.name, p.streams[i].name),
           {Edit::setStream(stage.name, p.streams[i].name)},
           "move " + stage.name});
    llvm::StringSet<> taken;
    std::string fresh = freshStream(p, stage.name + "_stream", taken);
    std::string priority = stage.stream < 0 ? "" : priorityText(p.streams[stage.stream]);
    const std::string on = p.devices.size() > 1 ? p.devices[device].name : std::string();
    out.push_back({formatv("move stage '{0}' to a new stream '{1}'{2}{3}", stage.name, fresh,
                           on.empty() ? "" : " on " + on,
                           priority.empty() ? "" : " of priority " + priority),
                   {Edit::addStream(fresh, priority, on), Edit::setStream(stage.name, fresh)},
                   "move " + stage.name});
  }
  // A stream per kind of work (copies per direction), each keeping the
  // priority its stages had: 'compute', 'compute_high', 'h2d', ...
  {
    Candidate c{"give copies a stream per direction ('h2d', 'd2h', 'd2d'), kernels and "
                "memsets 'compute' and host stages 'host', each with the priority its "
                "stages had",
                {},
                "per kind"};
    std::map<std::string, std::string> made; // name -> priority
    llvm::StringSet<> taken;
    std::map<std::string, std::string> nameOf; // kind + priority -> stream
    // Several devices: a set per device ('compute_gpu1', ...). A
    // collective keeps its streams.
    const bool several = p.devices.size() > 1;
    for (const program::Stage &st : p.stages) {
      if (onHostThread(st.kind()) || program::isCollective(st))
        continue;
      std::string kind = st.kind() == StageKind::Copy   ? spelling(st.copy().direction)
                         : st.kind() == StageKind::Host ? "host"
                                                        : "compute";
      std::string priority = st.stream < 0 ? "" : priorityText(p.streams[st.stream]);
      const std::string device =
          several && st.stream >= 0 ? p.devices[p.streams[st.stream].device].name : "";
      std::string key = kind + "/" + priority + "/" + device;
      auto it = nameOf.find(key);
      if (it == nameOf.end()) {
        std::string base = kind;
        if (!priority.empty() && priority != "normal")
          base += "_" + (priority[0] == '-' ? "p" + priority.substr(1) : priority);
        if (!device.empty())
          base += "_" + device;
        it = nameOf.emplace(key, freshStream(p, base, taken)).first;
        c.edits.push_back(Edit::addStream(it->second, priority, device));
      }
      c.edits.push_back(Edit::setStream(st.name, it->second));
    }
    out.push_back(std::move(c));
  }
  // Every stream pipec's to choose (on one device: with several, a stage
  // without `on` would go to the first).
  if (p.devices.size() <= 1) {
    Candidate c{"let pipec assign every stage's stream (drop the 'on' clauses)", {}, "assign"};
    for (const program::Stage &st : p.stages)
      if (!onHostThread(st.kind()) && !streamName(st).empty())
        c.edits.push_back(Edit::setStream(st.name, ""));
    if (!c.edits.empty())
      out.push_back(std::move(c));
  }
  return out;
}

std::vector<Edit> Advisor::withoutEmptyStreams(std::vector<Edit> edits) const {
  std::map<std::string, std::string> streamOf; // stage -> stream, after the edits
  for (const program::Stage &st : p.stages)
    streamOf[st.name] = st.stream < 0 ? "" : p.streams[st.stream].name;
  for (const Edit &e : edits)
    if (e.kind == Edit::SetStream)
      streamOf[e.stage] = e.stream;
  std::set<std::string> used;
  for (const auto &[stage, stream] : streamOf)
    used.insert(stream);
  std::set<std::string> usedBefore;
  for (const program::Stage &st : p.stages)
    if (st.stream >= 0)
      usedBefore.insert(p.streams[st.stream].name);
  for (const program::Stream &s : p.streams)
    if (usedBefore.count(s.name) && !used.count(s.name))
      edits.push_back(Edit::removeStream(s.name));
  return edits;
}

llvm::Error Advisor::range(Suggestion &s, const Schedule &schedule) {
  if (!contended)
    return llvm::Error::success();
  if (contendedBefore < 0) {
    llvm::Expected<double> before =
        measure(compiled, *contended, options.replays, Lowering::Streams, options.objective);
    if (!before)
      return before.takeError();
    contendedBefore = *before;
  }
  llvm::Expected<double> after =
      measure(schedule, *contended, options.replays, Lowering::Streams, options.objective);
  if (!after)
    return after.takeError();
  const double gain = s.beforeUs - s.afterUs, other = contendedBefore - *after;
  if (std::abs(gain - other) >= threshold(s.beforeUs)) {
    s.contendedBeforeUs = contendedBefore;
    s.contendedAfterUs = *after;
  }
  return llvm::Error::success();
}

llvm::Error Advisor::tryCandidate(const Candidate &given) {
  Candidate c = given;
  c.edits = withoutEmptyStreams(std::move(c.edits));
  llvm::Expected<std::unique_ptr<Variant>> free = build(c.edits);
  if (!free) {
    // A candidate the file cannot take (a name clash, a stream cap): none.
    llvm::consumeError(free.takeError());
    return llvm::Error::success();
  }
  std::optional<std::vector<Edit>> keep = keepOrders(**free);
  if (!keep)
    return llvm::Error::success();
  std::unique_ptr<Variant> variant = std::move(*free), dropped;
  std::string change = c.change;
  if (!keep->empty()) {
    // The stream orders of stages that do not declare their data are kept
    // as dependencies; the move without them is only what it could gain.
    std::vector<Edit> edits = c.edits;
    edits.insert(edits.end(), keep->begin(), keep->end());
    llvm::Expected<std::unique_ptr<Variant>> kept = build(edits);
    if (!kept) {
      llvm::consumeError(kept.takeError());
      return llvm::Error::success();
    }
    dropped = std::move(variant);
    variant = std::move(*kept);
    change += formatv(", keeping as dependencies the {0} stream order(s) its stages' "
                      "undeclared data may rely on",
                      keep->size());
  }
  if (changedMeaning(compiled, *variant->schedule))
    return llvm::Error::success(); // never offered (the test suite holds it to that)
  llvm::Expected<double> after = measure(*variant->schedule, backend, options.replays,
                                         Lowering::Streams, options.objective);
  if (!after)
    return after.takeError();
  const double before = out.objectiveUs;
  if (worth(before, *after)) {
    Suggestion s;
    s.change = change;
    s.measure = options.objective.spelling();
    s.beforeUs = before;
    s.afterUs = *after;
    s.text = variant->text;
    if (llvm::Error e = range(s, *variant->schedule))
      return e;
    auto [it, inserted] = slot.try_emplace(c.key, out.suggestions.size());
    if (inserted)
      out.suggestions.push_back(std::move(s));
    else if (s.afterUs < out.suggestions[it->second].afterUs)
      out.suggestions[it->second] = std::move(s);
  }
  if (dropped) {
    llvm::Expected<double> could = measure(*dropped->schedule, backend, options.replays,
                                           Lowering::Streams, options.objective);
    if (!could)
      return could.takeError();
    if (worth(before, *could) && worth(std::min(before, *after), *could)) {
      // The best such gain per thing changed, as for suggestions.
      auto [it, inserted] = hypothetical.try_emplace(c.key, *could, std::string());
      if (inserted || *could < it->second.first)
        it->second = {*could,
                      formatv("if the stages it separates declared their data (reads() and "
                              "writes()), '{0}' would take {1} from {2} to {3}; as written, "
                              "only stream order orders them, and with it kept the change "
                              "gives {4}",
                              c.change, options.objective.words(), formatTime(before),
                              formatTime(*could), formatTime(*after))};
    }
  }
  return llvm::Error::success();
}

/// CUDA_DEVICE_MAX_CONNECTIONS: when the device's streams outnumber its
/// hardware queues, streams share them and an item waits behind another
/// stream's in the same queue. The objective at 1, 8 and 32 connections
/// (and the profile's count), each on the device model; the best suggested
/// when it gains what a change must (an environment setting: --apply says
/// how).
llvm::Error Advisor::connections() {
  std::vector<unsigned> perDevice(std::max<size_t>(1, p.devices.size()), 0);
  for (const program::Stream &st : compiled.streamPlan.streams)
    ++perDevice[st.device];
  out.streams = *std::max_element(perDevice.begin(), perDevice.end());
  out.profileQueues = profile.hardwareQueues;
  if (out.streams <= profile.hardwareQueues)
    return llvm::Error::success();
  std::set<unsigned> counts = {1, 8, 32, profile.hardwareQueues};
  for (unsigned n : counts) {
    std::unique_ptr<Backend> queues = model.backendWithQueues(n);
    llvm::Expected<double> at =
        measure(compiled, *queues, options.replays, Lowering::Streams, options.objective);
    if (!at)
      return at.takeError();
    out.connections.push_back({n, *at});
  }
  double now = 0;
  for (auto [n, us] : out.connections)
    if (n == profile.hardwareQueues)
      now = us;
  auto best = std::min_element(out.connections.begin(), out.connections.end(),
                               [](auto &x, auto &y) { return x.second < y.second; });
  if (best->first != profile.hardwareQueues && worth(now, best->second)) {
    Suggestion s;
    s.change = formatv("set CUDA_DEVICE_MAX_CONNECTIONS={0} (the profile's hardware_queues is "
                       "{1}; {2} streams share them); an environment setting, on the device "
                       "model",
                       best->first, profile.hardwareQueues, out.streams);
    s.measure = options.objective.spelling();
    s.beforeUs = now;
    s.afterUs = best->second;
    s.environment = formatv("CUDA_DEVICE_MAX_CONNECTIONS={0}", best->first);
    out.suggestions.push_back(std::move(s));
  }
  // The trade either way: what the other count delays.
  const unsigned other = best->first != profile.hardwareQueues ? best->first
                         : profile.hardwareQueues == 1         ? 8
                                                               : 1;
  return connectionTrade(other);
}

llvm::Error Advisor::connectionTrade(unsigned other) {
  std::unique_ptr<Backend> here = model.backendWithQueues(profile.hardwareQueues);
  std::unique_ptr<Backend> there = model.backendWithQueues(other);
  llvm::Expected<LoweringRun> a =
      runQuietly(compiled, *here, options.replays, Lowering::Streams);
  if (!a)
    return a.takeError();
  llvm::Expected<LoweringRun> b =
      runQuietly(compiled, *there, options.replays, Lowering::Streams);
  if (!b)
    return b.takeError();
  // The device instance whose start moves latest, and one issued after it
  // that now starts before it where it started after.
  uint32_t worst = kNone;
  double most = 0;
  for (uint32_t v = 0; v < compiled.instances.size(); ++v)
    if (!compiled.onHost(v) && b->start[v] - a->start[v] > most)
      most = b->start[v] - a->start[v], worst = v;
  if (worst == kNone || most < threshold(a->makespanUs))
    return llvm::Error::success();
  uint32_t ahead = kNone;
  for (uint32_t u = worst + 1; u < compiled.instances.size() && ahead == kNone; ++u)
    if (!compiled.onHost(u) && compiled.streamOf(u) != compiled.streamOf(worst) &&
        a->start[u] >= a->start[worst] && b->start[u] < b->start[worst])
      ahead = u;
  const std::string name = compiled.instances.name(worst);
  std::string why =
      ahead == kNone ? std::string()
      : other > profile.hardwareQueues
          ? formatv(": it reaches the SMs after '{0}', issued after it, which takes them "
                    "first; through {1} connection(s) the device takes work in issue order "
                    "(the overlap Megatron-LM sets CUDA_DEVICE_MAX_CONNECTIONS=1 for)",
                    compiled.instances.name(ahead), profile.hardwareQueues)
                .str()
          : formatv(": it waits in a shared queue behind '{0}'s stream's work",
                    compiled.instances.name(ahead))
                .str();
  out.notes.push_back(formatv("connections trade: with CUDA_DEVICE_MAX_CONNECTIONS={0} "
                              "'{1}' starts {2} later than with {3}{4}",
                              other, name, formatTime(most), profile.hardwareQueues, why));
  return llvm::Error::success();
}

/// The wave cliff: a kernel whose grid is a few blocks past a whole number
/// of waves runs a wave nearly empty; one whose grid is exactly whole waves
/// runs one more as soon as other work holds a block slot (a collective's,
/// another stream's kernel). Each such kernel stage, with the largest grid
/// that fits a wave fewer (the same work spread over fewer blocks), run on
/// the model: a note names it with the block count and its gain.
llvm::Error Advisor::waveCliffs() {
  std::unique_ptr<Backend> onModel = model.backend();
  // Kernel stages of one grid shape are one candidate (the same kernel,
  // launched again): its stages changed together.
  struct Candidate {
    std::vector<uint32_t> stages;
    double weight = 0; ///< their declared time
    uint64_t wave = 0; ///< blocks in one wave
  };
  std::map<std::tuple<uint32_t, uint32_t, uint64_t, uint32_t>, Candidate> shapes;
  for (uint32_t k = 0; k < p.stages.size(); ++k) {
    const program::Stage &st = p.stages[k];
    if (st.kind() != StageKind::Kernel)
      continue;
    const uint64_t wave =
        uint64_t(profile.sms) *
        profile.blocksPerSM(st.kernel().threads, st.kernel().smemBytes, st.kernel().regs);
    if (!wave || st.kernel().blocks < wave)
      continue;
    const uint64_t past = st.kernel().blocks % wave;
    if (past != 0 && past * 10 > wave)
      continue;
    Candidate &c = shapes[{st.kernel().blocks, st.kernel().threads, st.kernel().smemBytes,
                           st.kernel().regs}];
    c.stages.push_back(k);
    c.weight += st.durationUs;
    c.wave = wave;
  }
  std::vector<Candidate> candidates;
  for (auto &[shape, c] : shapes)
    candidates.push_back(std::move(c));
  bool collectives = false;
  for (const program::Stage &st : p.stages)
    collectives |= program::collectiveParts(st) > 1;
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate &a, const Candidate &b) { return a.weight > b.weight; });
  candidates.resize(std::min<size_t>(candidates.size(), 4));
  if (candidates.empty())
    return llvm::Error::success();
  llvm::Expected<double> measured =
      measure(compiled, *onModel, options.replays, Lowering::Streams, options.objective);
  if (!measured)
    return measured.takeError();
  const double before = *measured;
  for (const Candidate &c : candidates) {
    const program::Stage &st = p.stages[c.stages.front()];
    const uint64_t wave = c.wave, past = st.kernel().blocks % wave;
    // Past a whole wave: the whole waves alone. Exactly whole waves: a few
    // block slots fewer, as many as other work may hold.
    std::vector<uint64_t> tries;
    if (past)
      tries.push_back(st.kernel().blocks - past);
    else {
      // A collective over several devices holds an SM per NCCL channel:
      // the blocks the rest of the device holds in a wave.
      const uint64_t perSM = wave / profile.sms;
      std::vector<uint64_t> fewer = {1, 8, profile.sms};
      if (collectives)
        fewer.push_back(uint64_t(profile.ncclChannels) * perSM);
      std::sort(fewer.begin(), fewer.end());
      fewer.erase(std::unique(fewer.begin(), fewer.end()), fewer.end());
      for (uint64_t f : fewer)
        if (f < st.kernel().blocks)
          tries.push_back(st.kernel().blocks - f);
    }
    std::vector<double> results;
    for (uint64_t blocks : tries) {
      program::Pipeline changed = p;
      for (uint32_t k : c.stages) {
        program::Stage &s = changed.stages[k];
        s.durationUs = model::Model::timeWithBlocks(p.stages[k], blocks, wave);
        s.kernel().blocks = static_cast<uint32_t>(blocks);
      }
      Schedule schedule(changed, profile, options.schedule);
      llvm::Expected<double> after =
          measure(schedule, *onModel, options.replays, Lowering::Streams, options.objective);
      if (!after)
        return after.takeError();
      results.push_back(*after);
    }
    // The smallest change that gains nearly (95%) all the best one gains.
    const double least = *std::min_element(results.begin(), results.end());
    double best = before;
    uint64_t bestBlocks = 0;
    for (size_t i = 0; i < tries.size() && !bestBlocks; ++i)
      if (results[i] < before && before - results[i] >= 0.95 * (before - least))
        best = results[i], bestBlocks = tries[i];
    if (!bestBlocks || !worth(before, best))
      continue;
    std::string which = "kernel '" + st.name + "'";
    if (c.stages.size() > 1)
      which = formatv("kernels '{0}' and {1} more of its grid", st.name, c.stages.size() - 1);
    out.notes.push_back(formatv(
        "wave cliff: {0} run{1} {2} blocks, {3} whole wave(s) of {4} ({5} a SM){6}; with {7} "
        "blocks doing the same work, {8} goes from {9} to {10} on the device model",
        which, c.stages.size() > 1 ? "" : "s", st.kernel().blocks, st.kernel().blocks / wave,
        wave, wave / profile.sms,
        past ? formatv(" and {0} block(s) past them, a wave nearly empty", past).str()
             : std::string(", so SMs or block slots held by other work (a collective's "
                           "channels, another stream's kernel) make it run one more"),
        bestBlocks, options.objective.words(), formatTime(before), formatTime(best)));
  }
  return llvm::Error::success();
}

llvm::Expected<PipelineAdvice> Advisor::run() {
  out.name = p.name;
  out.objective = options.objective;
  const Analysis &a = compiled.analysis;
  out.instances = compiled.instances.size();
  out.lowerBoundUs = a.lowerBoundUs;
  out.binding = a.bounds[a.binding].key;
  out.bindingWords = a.bounds[a.binding].words;
  // (Several devices: no graph verdict is simulated, as compile says.)
  out.graph = a.graphAdvice.evaluated || p.devices.size() > 1
                  ? a.graphAdvice
                  : cost.verdict(compiled, options.replays);

  // The baseline: compile's schedule, run (its replay is the graph's
  // "before" too).
  llvm::Expected<LoweringRun> base =
      runQuietly(compiled, backend, options.replays, Lowering::Streams);
  if (!base)
    return base.takeError();
  out.makespanUs = base->makespanUs;
  out.objectiveUs =
      objectiveValue(options.objective, compiled, base->start, base->end, base->makespanUs);

  // Suggestions whose gain may rest on kernels overlapping are measured
  // too where each needs the whole device, when some kernel does not say
  // what bounds it and the numbers are the model's.
  if (llvm::StringRef(backend.name()) == "sim" &&
      std::any_of(p.stages.begin(), p.stages.end(), program::boundUnsaid))
    contended = model.contendedBackend();

  const OnStreams onStream = instancesOnStreams();
  std::vector<Candidate> candidates = restreamCandidates(*base, onStream);
  // A raised priority for each declared stream that can go higher (those
  // that waited longest, past kMaxPriorities).
  for (uint32_t i : priorityCandidates(*base, onStream))
    candidates.push_back({formatv("raise stream '{0}' to priority high", p.streams[i].name),
                          {Edit::setPriority(p.streams[i].name, "high")},
                          "priority"});
  // Pinned host memory for each pageable copy (at most kMaxPinned, the
  // longest first): the copy at the pinned bandwidth when sized (its time
  // as written otherwise: the gain is then the host's wait alone), and the
  // host no longer held in its call.
  constexpr size_t kMaxPinned = 8;
  {
    std::vector<uint32_t> pageable;
    for (uint32_t k = 0; k < p.stages.size(); ++k)
      if (program::isPageableCopy(p.stages[k]))
        pageable.push_back(k);
    std::stable_sort(pageable.begin(), pageable.end(), [&](uint32_t x, uint32_t y) {
      return p.stages[x].durationUs > p.stages[y].durationUs;
    });
    if (pageable.size() > kMaxPinned)
      pageable.resize(kMaxPinned);
    for (uint32_t k : pageable) {
      const program::Stage &copy = p.stages[k];
      candidates.push_back(
          {formatv(
               "pin copy '{0}''s host memory (drop [pageable]: cudaHostAlloc, or "
               "pin_memory=True in PyTorch): {1}, and the host no longer waits in its call",
               copy.name,
               copy.bytes ? formatv("{0} at the pinned {1:f0} GB/s", formatBytes(*copy.bytes),
                                    profile.copyGBps(copy.copy().direction))
                                .str()
                          : std::string("its time as written (sized, it would also move "
                                        "at the pinned bandwidth)")),
           {Edit::removeAttribute(copy.name, "pageable")},
           "pin " + copy.name});
    }
  }
  // Rings whose slots the critical path waits on (an inferred edge of the
  // path comes from them): one more slot each, the kMaxRings waited on most
  // often. Never state: each iteration reads what the one before left.
  constexpr size_t kMaxRings = 8;
  size_t ringsLeftOut = 0;
  if (!p.syncDeclared) {
    const Instances &inst = compiled.instances;
    std::vector<uint64_t> onPath(p.buffers.size(), 0);
    for (size_t i = 1; i < a.criticalPath.size(); ++i) {
      uint32_t u = a.criticalPath[i - 1], v = a.criticalPath[i];
      llvm::ArrayRef<uint32_t> row = inst.deps().row(v);
      for (size_t e = 0; e < row.size(); ++e)
        if (row[e] == u)
          if (int32_t b = inst.inferredFrom(inst.deps().begin[v] + e); b >= 0)
            ++onPath[b];
    }
    std::vector<uint32_t> waited;
    for (uint32_t b = 0; b < p.buffers.size(); ++b) {
      if (onPath[b] && p.buffers[b].state)
        stateNotes.push_back(formatv(
            "buffer '{0}' orders the critical path but is loop-carried state (each "
            "iteration reads what an earlier one wrote{1}): another slot would change what "
            "it reads, so no ring is tried",
            p.buffers[b].name, p.buffers[b].stateDeclared ? ", declared 'state'" : ""));
      else if (onPath[b])
        waited.push_back(b);
    }
    std::stable_sort(waited.begin(), waited.end(),
                     [&](uint32_t x, uint32_t y) { return onPath[x] > onPath[y]; });
    if (waited.size() > kMaxRings) {
      ringsLeftOut = waited.size() - kMaxRings;
      waited.resize(kMaxRings);
    }
    std::sort(waited.begin(), waited.end());
    for (uint32_t b : waited) {
      const program::Buffer &buffer = p.buffers[b];
      candidates.push_back({formatv("deepen ring '{0}' to {1} slots (+{2} of {3} memory)",
                                    buffer.name, buffer.slots + 1, formatBytes(buffer.bytes),
                                    buffer.host ? "pinned host" : "device"),
                            {Edit::setSlots(buffer.name, buffer.slots + 1)},
                            "ring " + buffer.name});
    }
  }
  for (const Candidate &c : candidates)
    if (llvm::Error e = tryCandidate(c))
      return e;

  // The graph: per replay, host's first call to last end (the makespan
  // objective only: a graph replay is the whole pipeline's).
  const GraphAdvice &g = out.graph;
  if (options.objective.kind == Objective::Makespan && g.evaluated && g.suitable &&
      worth(g.streamsReplayUs, g.graphReplayUs)) {
    llvm::Expected<LoweringRun> graphRun =
        runQuietly(compiled, backend, options.replays, Lowering::Graph);
    if (!graphRun)
      return graphRun.takeError();
    const double streams = base->timings.replayMedian;
    const double graph = graphRun->timings.replayMedian;
    if (worth(streams, graph)) {
      Suggestion s;
      s.change =
          g.breakEvenIterations
              ? formatv("lower to a CUDA graph (--lower=graph), one graph replayed each "
                        "iteration; it pays back its one-time cost after {0} iteration(s)",
                        g.breakEvenIterations)
                    .str()
              : formatv("lower to a CUDA graph (--lower=graph); it pays back its one-time "
                        "cost after {0} replay(s)",
                        g.breakEvenReplays)
                    .str();
      s.measure = "replay";
      s.beforeUs = streams;
      s.afterUs = graph;
      s.graph = true;
      out.suggestions.push_back(std::move(s));
    }
  }
  if (llvm::Error e = connections())
    return e;
  if (llvm::Error e = waveCliffs())
    return e;
  std::stable_sort(out.suggestions.begin(), out.suggestions.end(),
                   [](const Suggestion &x, const Suggestion &y) {
                     return x.beforeUs - x.afterUs > y.beforeUs - y.afterUs;
                   });

  // What holds it back: the notes compile gives.
  for (std::string &note : describeStreamOrderDelays(compiled))
    out.notes.push_back(std::move(note));
  for (const auto &[key, h] : hypothetical)
    out.notes.push_back(h.second);
  for (const std::string &n : stateNotes)
    out.notes.push_back(n);
  if (ringsLeftOut)
    out.notes.push_back(formatv("{0} more ring(s) lie on the critical path, waited on "
                                "less often; not measured",
                                ringsLeftOut));
  if (movesLeftOut)
    out.notes.push_back(formatv("{0} more move(s) of a held-back stage to a declared stream "
                                "not measured: each stage was tried on the {1} streams of its "
                                "device least busy while it waited, and on a new one",
                                movesLeftOut, kMoveTargets));
  if (prioritiesLeftOut)
    out.notes.push_back(formatv("{0} more stream(s) could be raised to priority high; not "
                                "measured: the {1} whose work waited longest for the device "
                                "were",
                                prioritiesLeftOut, kMaxPriorities));
  // A recorded step that already launches work as CUDA graphs (graph=N):
  // how much, and what is left launched one by one.
  {
    size_t device = 0, inGraphs = 0;
    std::set<int64_t> graphs;
    for (const program::Stage &st : p.stages) {
      if (onHostThread(st.kind()))
        continue;
      ++device;
      if (st.graph >= 0) {
        ++inGraphs;
        graphs.insert(st.graph);
      }
    }
    if (inGraphs == device && device)
      out.notes.push_back(formatv("the step already launches all {0} of its GPU ops through "
                                  "{1} recorded CUDA graph launch(es) (graph=)",
                                  device, graphs.size()));
    else if (inGraphs)
      out.notes.push_back(formatv(
          "the step already launches {0} of its {1} GPU ops through {2} recorded CUDA graph "
          "launch(es) (graph=); the {3} launched one by one are what a graph could still take",
          inGraphs, device, graphs.size(), device - inGraphs));
  }
  // Declared dependencies the stage's others imply (compile warns of
  // each: the same count); else those stream order implies as the streams
  // are now, which compile leaves alone (they hold only while the stages
  // keep their streams).
  const size_t implied =
      compiled.stageGraph ? countRedundantDependencies(p, *compiled.stageGraph) : 0;
  if (implied)
    out.notes.push_back(formatv("{0} declared dependenc{1} implied by the stages' other "
                                "dependencies: dropping {2} changes no time (compile warns "
                                "of each)",
                                implied, implied == 1 ? "y is" : "ies are",
                                implied == 1 ? "it" : "them"));
  else if (a.redundantDependencies)
    out.notes.push_back(formatv("{0} declared dependency instance(s) are implied by stream "
                                "order as the streams are now: dropping them changes no time "
                                "while the stages keep their streams (compile does not warn "
                                "of these)",
                                a.redundantDependencies));
  out.gap = model.explainGap(compiled);
  return out;
}

} // namespace

llvm::Expected<double> runtime::measure(const Schedule &s, Backend &backend, unsigned replays,
                                        Lowering lowering, const Objective &objective) {
  llvm::Expected<LoweringRun> r = runQuietly(s, backend, replays, lowering);
  if (!r)
    return r.takeError();
  if (lowering == Lowering::Graph && objective.kind == Objective::Makespan)
    return r->timings.replayMedian;
  return objectiveValue(objective, s, r->start, r->end, r->makespanUs);
}

llvm::Expected<PipelineAdvice> runtime::advise(const AdviseSource &source,
                                               const Schedule &compiled,
                                               const model::Model &model, Backend &backend,
                                               const AdviseOptions &options) {
  return Advisor(source, compiled, model, backend, options).run();
}

void runtime::printAdvice(const PipelineAdvice &adv, const std::string &device,
                          const AdviseOptions &options, size_t first, llvm::raw_ostream &os) {
  os << formatv("pipeline '{0}' ({1} stage instances; measured on {2})\n", adv.name,
                adv.instances, device);
  os << formatv("  makespan {0}; lower bound {1}, set by {2} ({3} of the makespan)\n",
                formatTime(adv.makespanUs), formatTime(adv.lowerBoundUs), adv.bindingWords,
                formatPercent(adv.makespanUs > 0 ? adv.lowerBoundUs / adv.makespanUs : 1));
  if (adv.objective.kind != Objective::Makespan)
    os << formatv("  objective: {0}: {1}\n", adv.objective.words(),
                  formatTime(adv.objectiveUs));
  if (!adv.gap.empty() && adv.makespanUs - adv.lowerBoundUs >= options.minGainUs) {
    os << formatv("  the {0} between them, cost by cost on the device model: what taking it "
                  "away alone saves, and its fair share of taking them all away (Shapley: "
                  "the shares add up to all of them at once, which with what remains is "
                  "the gap):\n",
                  formatTime(adv.makespanUs - adv.lowerBoundUs));
    os << "    alone      share\n";
    for (const GapPart &part : adv.gap) {
      const bool last = &part >= &adv.gap.back() - 1;
      if (std::abs(part.us) >= options.minGainUs ||
          std::abs(part.shareUs) >= options.minGainUs || last)
        os << formatv("    {0,-10} {1,-10} {2}{3}\n", formatTime(part.us),
                      last ? std::string() : formatTime(part.shareUs), part.cause,
                      gapPartNotes(part));
    }
  }
  // No verdict where none was simulated (several devices), as compile says.
  os << "  CUDA graph: "
     << (!adv.graph.evaluated ? "not evaluated"
         : adv.graph.suitable ? "worth it"
                              : "not worth it")
     << '\n';
  for (const std::string &r : adv.graph.reasons)
    os << "    " << r << '\n';
  if (!adv.connections.empty()) {
    os << formatv(
        "  connections (CUDA_DEVICE_MAX_CONNECTIONS; {0} streams share the profile's "
        "{1} hardware queues), {2} on the device model:",
        adv.streams, adv.profileQueues, adv.objective.words());
    for (size_t i = 0; i < adv.connections.size(); ++i)
      os << (i ? ", " : " ") << adv.connections[i].first << " -> "
         << formatTime(adv.connections[i].second);
    os << '\n';
  }
  if (adv.suggestions.empty()) {
    os << formatv("  suggestions: none; no change tried gains {0} of {1} (and {2})\n",
                  formatPercent(options.minGainFraction), adv.objective.words(),
                  formatTime(options.minGainUs));
  } else {
    os << "  suggestions, each applied alone to the program and measured (--apply=N "
          "writes a change to the file, or says how to use a lowering or a setting):\n";
    for (size_t i = 0; i < adv.suggestions.size(); ++i) {
      const Suggestion &s = adv.suggestions[i];
      os << formatv("    {0}. {1}: {2} {3} -> {4} ({5})", first + i, s.change, s.measure,
                    formatTime(s.beforeUs), formatTime(s.afterUs),
                    formatPercent(s.afterUs / s.beforeUs - 1));
      if (s.ranged())
        os << formatv("; {0} -> {1} ({2}) if kernels that do not say what bounds them "
                      "(bytes=, bound=) each need the whole device: the headline assumes "
                      "they share only SM slots",
                      formatTime(s.contendedBeforeUs), formatTime(s.contendedAfterUs),
                      formatPercent(s.contendedAfterUs / s.contendedBeforeUs - 1));
      os << '\n';
    }
  }
  for (const std::string &n : adv.notes)
    os << "  note: " << n << '\n';
}

void runtime::writeAdviceJSON(llvm::ArrayRef<PipelineAdvice> advice, llvm::raw_ostream &os) {
  llvm::json::OStream j(os, 0);
  auto number = [&](llvm::StringRef key, double value) {
    writeNumberAttribute(j, key, value);
  };
  j.object([&] {
    j.attribute("format", "pipec-advice");
    j.attribute("version", 3);
    size_t numbered = 1;
    j.attributeArray("pipelines", [&] {
      for (const PipelineAdvice &a : advice)
        j.object([&] {
          j.attribute("name", a.name);
          j.attribute("objective", a.objective.spelling());
          number("objective_us", a.objectiveUs);
          number("makespan_us", a.makespanUs);
          number("lower_bound_us", a.lowerBoundUs);
          j.attribute("binding", a.binding);
          j.attributeArray("gap", [&] {
            for (const GapPart &part : a.gap)
              j.object([&] {
                j.attribute("cause", part.cause);
                number("us", part.us);
                number("share_us", part.shareUs);
                if (!part.with.empty())
                  j.attribute("with", part.with);
                if (!part.assumed.empty())
                  j.attribute("assumed", part.assumed);
              });
          });
          j.attributeObject("graph", [&] {
            if (a.graph.breakEvenReplays)
              j.attribute("break_even_replays", int64_t(a.graph.breakEvenReplays));
            else
              j.attribute("break_even_replays", nullptr);
            j.attribute("suitable", a.graph.suitable);
            j.attribute("evaluated", a.graph.evaluated);
          });
          j.attributeArray("suggestions", [&] {
            for (size_t i = 0; i < a.suggestions.size(); ++i) {
              const Suggestion &s = a.suggestions[i];
              j.object([&] {
                j.attribute("number", int64_t(numbered++));
                j.attribute("change", s.change);
                j.attribute("measure", s.measure);
                number("before_us", s.beforeUs);
                number("after_us", s.afterUs);
                // The range's far end: kernels that say nothing of what
                // bounds them each need the whole device (null: the same).
                if (s.ranged())
                  j.attributeObject("contended", [&] {
                    number("before_us", s.contendedBeforeUs);
                    number("after_us", s.contendedAfterUs);
                  });
                else
                  j.attribute("contended", nullptr);
                j.attribute("lowering", s.graph ? "graph" : "streams");
                if (!s.environment.empty())
                  j.attribute("environment", s.environment);
              });
            }
          });
          // The connection-count what-if: null where the streams do not
          // share hardware queues.
          if (a.connections.empty()) {
            j.attribute("connections", nullptr);
          } else {
            j.attributeArray("connections", [&] {
              for (const std::pair<unsigned, double> &c : a.connections)
                j.object([&] {
                  j.attribute("count", int64_t(c.first));
                  number("us", c.second);
                });
            });
          }
          j.attributeArray("notes", [&] {
            for (const std::string &n : a.notes)
              j.value(n);
          });
        });
    });
  });
  os << '\n';
}
