//===- Step.cpp - One profiler step of a trace, as a pipeline -------------===//
//
// The step's choice and the phases that make it (StepBuild.h lists them, a
// file each), the stages the phases add, and what the model and the report
// ask of an imported step.
//
//===----------------------------------------------------------------------===//

#include "runtime/import/Step.h"
#include "runtime/import/StepBuild.h"

#include "compiler/support/Fail.h"
#include "compiler/support/Printable.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cctype>

using namespace pipec;
using namespace pipec::importer;
using namespace pipec::importer::step;
using llvm::formatv;

std::string step::identifier(llvm::StringRef text, llvm::StringRef prefix,
                             llvm::StringRef suffix) {
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

namespace {

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

llvm::Expected<StepChoice> importer::parseStepChoice(llvm::StringRef text) {
  StepChoice c;
  int64_t n = 0;
  if (!text.getAsInteger(10, n)) {
    c.number = n;
    return c;
  }
  auto [name, k] = text.rsplit('#');
  uint64_t count = 0;
  if (!k.empty() && name != text && !k.getAsInteger(10, count)) {
    // '#3' alone names no range, and ranges count from 1: each would
    // otherwise import another step than the one asked for, unsaid.
    if (name.empty())
      return fail(formatv("--step={0}: a range's name goes before '#{1}' (ProfilerStep#{1} "
                          "for the profiler's step {1})",
                          text, k)
                      .str());
    if (name == "ProfilerStep") {
      c.number = int64_t(count);
      return c;
    }
    if (count == 0)
      return fail(formatv("--step={0}: the ranges of a name count from 1 ('{1}#1' is the "
                          "first; '{1}' alone the last)",
                          text, name)
                      .str());
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

llvm::Error importer::checkDevice(const DeviceInfo &d) {
  // What the model is built from: a value no GPU has would make its cost
  // unbounded (2^31 SMs), or write a profile pipec refuses.
  const std::pair<const char *, uint64_t> given[] = {
      {"sms", d.sms},
      {"max_threads_per_sm", d.maxThreadsPerSM},
      {"shared_memory_per_sm", d.sharedMemoryPerSM},
      {"shared_memory_per_block", d.sharedMemoryPerBlock},
      {"registers_per_sm", d.registersPerSM},
  };
  for (const auto &[key, value] : given) {
    if (!value)
      continue; // not said: the profile's default
    auto [least, most] = *DeviceProfile::countRange(key);
    if (double(value) < least || double(value) > most)
      return fail(llvm::formatv("the trace's device '{0}' has {1} = {2}; a GPU has {3} to {4} "
                                "(the recording is corrupted or was not made by a profiler)",
                                d.name, key, value, uint64_t(least), uint64_t(most))
                      .str());
  }
  return llvm::Error::success();
}

llvm::Expected<ImportedStep> importer::selectStep(Trace &&trace,
                                                  std::optional<int64_t> number) {
  ImportedStep out;
  out.syncEvents = !trace.syncs.empty();
  out.names = trace.names;
  out.callNames = trace.callNames;
  Builder b(trace, out);
  b.callOf = CorrelationIndex::sizedFor([&](auto visit) {
    for (const auto &entry : trace.callOf)
      visit(entry.first);
  });
  for (const auto &entry : trace.callOf)
    b.callOf.tryEmplace(entry.first, entry.second);
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
  if (llvm::Error e = checkDevice(out.device))
    return e;
  if (trace.otherDevices)
    out.notes.push_back(llvm::formatv(
        "the trace's ops ran on {0} GPUs: the busiest (device {1}) is imported, the {2} "
        "op(s) of the other {3} left out (one pipeline is one GPU's; a rank per GPU is "
        "imported with a trace each)",
        trace.otherDevices + 1, trace.device, trace.otherDeviceOps, trace.otherDevices));

  if (llvm::Error e = chooseSpan(b, number))
    return e;
  if (llvm::Error e = collectOps(b))
    return e;
  gatherHostCalls(b);
  walkHost(b);
  measureStreamGap(b);
  // What only the walk needed goes.
  std::vector<HostItem>().swap(b.items); // (assigning {} would keep its capacity)
  b.opsOfCorrelation = CorrelationIndex();
  if (llvm::Error e = orderStages(b))
    return e;
  inferWaits(b);
  finishStep(b);
  return out;
}

bool Builder::issueOrder(const GpuOp *a, const GpuOp *b) const {
  if (a->correlation >= 0 && b->correlation >= 0 && a->correlation != b->correlation)
    return a->correlation < b->correlation;
  // One call's ops (a graph launch's): in the order they ran.
  const double la = LaunchTimes::of(*a), lb = LaunchTimes::of(*b);
  return la != lb ? la < lb : a->ts < b->ts;
}

bool Builder::graphLaunched(const GpuOp &op) {
  const uint32_t *n = op.correlation >= 0 ? opsOfCorrelation.find(op.correlation) : nullptr;
  return n && *n > 1;
}

std::string Builder::uniqueName(const std::string &base) {
  std::string name = base;
  for (unsigned &n = used_[base]; !taken_.insert(name).second;)
    name = base + "_" + std::to_string(++n + 1);
  return name;
}

std::string Builder::shortNameOf(const GpuOp &op) {
  if (op.kind != OpKind::Kernel)
    return shortName(op, trace.names[op.name]);
  if (kernelNames_.empty())
    kernelNames_.resize(trace.names.size());
  std::string &known = kernelNames_[op.name];
  if (known.empty())
    known = shortName(op, trace.names[op.name]);
  return known;
}

uint32_t Builder::addOp(const GpuOp &op, bool isBacklog) {
  ImportedStage st;
  st.op = uint32_t(&op - trace.ops.data());
  st.backlog = isBacklog;
  st.name = uniqueName(isBacklog ? "backlog_" + shortNameOf(op) : shortNameOf(op));
  st.startUs = std::max(op.ts, origin) - origin;
  st.endUs = op.ts + op.dur - origin;
  st.hostUs = isBacklog ? 0 : LaunchTimes::of(op) + op.launchDur - origin;
  st.durUs = isBacklog ? st.endUs - st.startUs : op.dur;
  auto [stream, first] = onStream.try_emplace(op.stream);
  if (first)
    out.streams.push_back(op.stream);
  stream->second.push_back(uint32_t(out.stages.size()));
  latestEnd = std::max(latestEnd, st.endUs);
  out.stages.push_back(std::move(st));
  return uint32_t(out.stages.size() - 1);
}

namespace {
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
} // namespace

uint32_t Builder::addCpu(ImportedStage::Kind kind, HostCall::Kind call, double at, double us,
                         const std::string &base) {
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
}

uint32_t Builder::addHostWork(double at, double us, ImportedStage::HostWorkAt where) {
  if (!rangesSorted_) {
    rangesSorted_ = true;
    for (const Range &r : trace.ranges) {
      llvm::StringRef name = trace.rangeNames[r.name];
      // Not a step, nor the range taken as the step (--step=NAME).
      if (!name.startswith("ProfilerStep#") && !(r.ts == from && r.ts + r.dur == to))
        rangesByStart_.push_back(&r);
    }
    std::stable_sort(rangesByStart_.begin(), rangesByStart_.end(),
                     [](const Range *x, const Range *y) { return x->ts < y->ts; });
    hostRangeOf_.assign(trace.rangeNames.size(), UINT32_MAX);
  }
  // The shortest range holding at least half of it, among the last few to
  // begin before its end (ranges nest: the innermost began last; a bounded
  // look, whatever the input).
  const double end = at + us;
  auto it = std::upper_bound(rangesByStart_.begin(), rangesByStart_.end(), end,
                             [](double t, const Range *r) { return t < r->ts; });
  const Range *best = nullptr;
  for (int look = 0; look < 256 && it != rangesByStart_.begin(); ++look) {
    const Range *r = *--it;
    const double held = std::min(end, r->ts + r->dur) - std::max(at, r->ts);
    if (held >= 0.5 * us && (!best || r->dur < best->dur))
      best = r;
  }
  uint32_t within = UINT32_MAX;
  std::string base = "host_work";
  if (best) {
    uint32_t &index = hostRangeOf_[best->name];
    if (index == UINT32_MAX) {
      index = uint32_t(out.hostRanges.size());
      out.hostRanges.push_back(trace.rangeNames[best->name]);
    }
    within = index;
    // Named for it: host_data_load, host_Optimizer_step_SGD_step.
    std::string words = identifier(llvm::StringRef(out.hostRanges[index]).trim("# "), "", "");
    for (size_t at; (at = words.find("__")) != std::string::npos;)
      words.erase(at, 1);
    llvm::StringRef trimmed = llvm::StringRef(words).trim('_');
    if (!trimmed.empty())
      base = ("host_" + trimmed.take_front(35)).str();
  }
  const uint32_t v = addCpu(ImportedStage::Kind::HostWork, HostCall::Other, at, us, base);
  out.stages[v].within = within;
  out.stages[v].hostWorkAt = where;
  return v;
}

void Builder::forgetNames() {
  taken_ = {};
  used_ = {};
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

namespace {
/// A PCIe card by its name ("NVIDIA H100 PCIe"): no NVLink, and its own
/// memory and links.
bool pcieCardName(const DeviceInfo &d) {
  return llvm::StringRef(d.name).contains_insensitive("pcie");
}
} // namespace

/// A peer copy's link, per direction: NVLink on the SXM parts by
/// generation (NVIDIA's data sheets: 6 links of 25 GB/s a direction on a
/// V100, 12 on an A100, 18 on an H100/H200, NVLink 5's 900 GB/s on a
/// B200); PCIe on a PCIe card and on the consumer and workstation parts
/// (compute capability 7.5, 8.6, 8.9, 12.x), which have no NVLink switch.
double importer::peerGBps(const DeviceInfo &d, double pcieGBps) {
  const unsigned cc = d.major * 10 + d.minor;
  const bool pcieCard = pcieCardName(d) || cc == 75 || cc == 86 || cc == 89 || d.major == 12;
  const double nvlink = cc == 70        ? 150
                        : d.major == 8  ? 300
                        : d.major == 9  ? 450
                        : d.major == 10 ? 900
                                        : 0;
  return pcieCard || nvlink == 0 ? pcieGBps : nvlink;
}

/// The device memory's bandwidth of the data-centre parts (NVIDIA's data
/// sheets): V100 900 GB/s; A100 1555 (40 GB) or 2039 (80 GB SXM), 1935
/// (80 GB PCIe); H100 3350 (SXM), 2000 (PCIe), 3900 (NVL); H200 4800;
/// B200 8000. Others keep the profile's default (0 here).
double importer::memoryGBps(const DeviceInfo &d) {
  const llvm::StringRef name(d.name);
  const unsigned cc = d.major * 10 + d.minor;
  const bool pcie = pcieCardName(d);
  if (cc == 70)
    return 900;
  if (cc == 80)
    return name.contains("80GB") ? (pcie ? 1935 : 2039) : 1555;
  if (cc == 90) {
    if (name.contains("H200"))
      return 4800;
    if (name.contains("NVL"))
      return 3900;
    return pcie ? 2000 : 3350;
  }
  if (cc == 100)
    return 8000;
  return 0;
}

DeviceProfile importer::profileFor(const DeviceInfo &d) {
  DeviceProfile p;
  // The driver's launch queue as the recording filled it.
  if (d.launchQueueDepth) {
    p.launchQueueDepth = d.launchQueueDepth;
    p.markMeasured({"launch_queue_depth"});
  }
  // The device's back-to-back gap as the recording shows it.
  if (d.streamGapUs > 0) {
    p.streamGapUs = d.streamGapUs;
    p.markMeasured({"stream_gap_us"});
  }
  if (d.name.empty())
    return p;
  p.name = "model of " + d.name + " (from the trace's deviceProperties)";
  // The device's own figures (its limits are facts, not estimates).
  p.markMeasured({"sms", "max_threads_per_sm", "shared_memory_per_sm",
                  "shared_memory_per_block", "registers_per_sm", "max_blocks_per_sm"});
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
  p.p2pGBps = peerGBps(d, pcie);
  // NCCL's bus bandwidth, as the default's (360 of NVLink's 450 GB/s): 80%
  // of the peer link.
  p.ncclBusGBps = 0.8 * p.p2pGBps;
  if (double memory = memoryGBps(d))
    p.memoryGBps = memory;
  // NCCL's channels on 8 GPUs of an NVLink board (a block, an SM, each):
  // 24 on an HGX A100, 16 on an H100/H200 (the default).
  if (cc == 80 && !pcieCardName(d))
    p.ncclChannels = 24;
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
