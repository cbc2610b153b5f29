//===- Step.cpp - One profiler step of a trace, as a pipeline -------------===//

#include "runtime/import/Step.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <map>

using namespace pipec;
using namespace pipec::importer;
using llvm::formatv;

namespace {

llvm::Error fail(const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), why.str());
}

/// "void at::native::(anonymous namespace)::vectorized_elementwise_kernel<4,
/// ...>(...)" -> "vectorized_elementwise_kernel".
std::string shortName(const GpuOp &op) {
  if (op.kind == OpKind::Memcpy)
    return std::string("memcpy_") + spelling(op.direction);
  if (op.kind == OpKind::Memset)
    return "memset";
  llvm::StringRef n = op.name;
  size_t cut = n.find_first_of("<(");
  llvm::StringRef head = n.substr(0, cut);
  size_t colon = head.rfind("::");
  if (colon != llvm::StringRef::npos)
    head = head.substr(colon + 2);
  size_t space = head.rfind(' ');
  if (space != llvm::StringRef::npos)
    head = head.substr(space + 1);
  std::string out;
  for (char c : head)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "k_" + out;
  if (out.size() > 40)
    out.resize(40);
  for (const char *reserved : {"pipeline", "stream", "stage", "on", "depends_on",
                               "priority", "iterations", "buffer"})
    if (out == reserved)
      out += "_k";
  return out;
}

} // namespace

llvm::Expected<ImportedStep> importer::selectStep(const Trace &trace,
                                                  std::optional<int64_t> number) {
  ImportedStep out;
  // The GPU the kept ops ran on: the entry of its id (the first one when
  // none has it, or there is only one).
  for (const DeviceInfo &d : trace.devices)
    if (d.id == trace.device) {
      out.device = d;
      break;
    }
  if (out.device.name.empty() && !trace.devices.empty())
    out.device = trace.devices.front();
  auto launchOf = [](const GpuOp &op) { return op.launchTs >= 0 ? op.launchTs : op.ts; };

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
      // The last step that launched GPU work.
      for (auto it = steps.rbegin(); it != steps.rend() && !chosen; ++it)
        for (const GpuOp &op : trace.ops)
          if (launchOf(op) >= it->ts && launchOf(op) < it->ts + it->dur) {
            chosen = &*it;
            break;
          }
      if (!chosen)
        return fail("no ProfilerStep of the trace launched a GPU op");
    }
    out.step = chosen->number;
    from = chosen->ts;
    to = chosen->ts + chosen->dur;
  } else if (number) {
    return fail(formatv("the trace has no ProfilerStep annotations; leave out --step "
                        "to import the whole trace"));
  }

  // The step's ops, in issue order.
  std::vector<const GpuOp *> ops;
  for (const GpuOp &op : trace.ops)
    if (launchOf(op) >= from && launchOf(op) < to)
      ops.push_back(&op);
  if (ops.empty())
    return fail(formatv("ProfilerStep#{0} launched no GPU op", *out.step));
  std::stable_sort(ops.begin(), ops.end(), [&](const GpuOp *a, const GpuOp *b) {
    if (a->correlation >= 0 && b->correlation >= 0 && a->correlation != b->correlation)
      return a->correlation < b->correlation;
    return launchOf(*a) < launchOf(*b);
  });
  out.originTs = INFINITY;
  for (const GpuOp *op : ops)
    out.originTs = std::min(out.originTs, op->ts);

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
  if (last - out.originTs > 3600e6)
    return fail(formatv("the step's GPU ops span {0} s (event {1} to event {2}); pipec "
                        "imports steps of at most 3600 s",
                        (last - out.originTs) / 1e6, first->event, latest->event));

  // Per stream: its stages' correlations (and launch times), in issue order.
  std::map<int64_t, std::vector<uint32_t>> onStream;
  llvm::StringMap<unsigned> used; ///< per base name: the last suffix tried
  llvm::StringSet<> taken;        ///< every stage name given
  for (uint32_t i = 0; i < ops.size(); ++i) {
    const GpuOp &op = *ops[i];
    ImportedStage st;
    st.op = op;
    std::string base = shortName(op);
    // foo, foo, foo_2: the second foo is not foo_2 again.
    st.name = base;
    for (unsigned &n = used[base]; !taken.insert(st.name).second;)
      st.name = base + "_" + std::to_string(++n + 1);
    st.issueUs = launchOf(op) - out.originTs;
    st.startUs = op.ts - out.originTs;
    st.endUs = op.ts + op.dur - out.originTs;
    if (!onStream.count(op.stream))
      out.streams.push_back(op.stream);
    onStream[op.stream].push_back(i);
    out.stages.push_back(std::move(st));
  }
  if (out.streams.size() > 256)
    return fail(formatv("the step's GPU ops run on {0} streams; a .pipe pipeline has at "
                        "most 256",
                        out.streams.size()));
  // The last stage on `stream` issued before correlation `corr` (or launch
  // time `ts` when correlations are unknown), and the first after.
  auto key = [&](uint32_t i, bool byCorrelation) {
    return byCorrelation ? double(ops[i]->correlation) : launchOf(*ops[i]);
  };
  // A stream's stages are in issue order, so both are binary searches.
  auto lastBefore = [&](int64_t stream, double at, bool byCorr) -> int64_t {
    auto it = onStream.find(stream);
    if (it == onStream.end())
      return -1;
    const std::vector<uint32_t> &list = it->second;
    auto pos = std::partition_point(list.begin(), list.end(),
                                    [&](uint32_t i) { return key(i, byCorr) < at; });
    return pos == list.begin() ? -1 : int64_t(*(pos - 1));
  };
  auto firstAfter = [&](int64_t stream, double at, bool byCorr) -> int64_t {
    auto it = onStream.find(stream);
    if (it == onStream.end())
      return -1;
    const std::vector<uint32_t> &list = it->second;
    auto pos = std::partition_point(list.begin(), list.end(),
                                    [&](uint32_t i) { return key(i, byCorr) <= at; });
    return pos == list.end() ? -1 : int64_t(*pos);
  };
  // Duplicates are taken out once, at the end (a find per call would be
  // quadratic in a stage's dependencies).
  auto depend = [&](int64_t consumer, int64_t producer) {
    if (consumer < 0 || producer < 0 || consumer <= producer)
      return;
    if (ops[consumer]->stream == ops[producer]->stream)
      return;
    out.stages[consumer].deps.push_back(uint32_t(producer));
  };
  // A device synchronisation at each of `cuts` (keys in issue order): the
  // first op after it on every stream follows the last before it on every
  // stream. Only the latest cut before an op (and after the previous op of
  // its stream) matters: the last op before an earlier cut is, on each
  // stream, at or before the last op before a later one. So each op gets at
  // most one dependency per stream, however many syncs there were (12,000
  // syncs over 256 streams made 786 million calls).
  auto synchronise = [&](std::vector<double> cuts, bool byCorrelation) {
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    if (cuts.empty())
      return;
    for (const auto &[stream, list] : onStream)
      for (size_t k = 0; k < list.size(); ++k) {
        const double at = key(list[k], byCorrelation);
        // The latest cut below this op, at or after the previous op.
        auto it = std::lower_bound(cuts.begin(), cuts.end(), at);
        if (it == cuts.begin())
          continue;
        const double cut = *(it - 1);
        if (k > 0 && cut < key(list[k - 1], byCorrelation))
          continue;
        for (int64_t b : out.streams)
          depend(list[k], lastBefore(b, cut, byCorrelation));
      }
  };
  auto inStep = [&](int64_t corr) {
    auto it = trace.runtimeCalls.find(corr);
    return it != trace.runtimeCalls.end() && it->second.first >= from &&
           it->second.first < to;
  };
  std::vector<double> contextCuts;
  for (const SyncEvent &s : trace.syncs) {
    if (!inStep(s.correlation))
      continue;
    double at = double(s.correlation);
    switch (s.kind) {
    case SyncEvent::StreamWait:
      ++out.waitsIssued;
      if (s.waitOnStream >= 0 && s.recordCorrelation >= 0)
        depend(firstAfter(s.stream, at, true),
               lastBefore(s.waitOnStream, double(s.recordCorrelation), true));
      break;
    case SyncEvent::EventSync:
    case SyncEvent::StreamSync: {
      ++out.hostSyncs;
      int64_t producer =
          s.kind == SyncEvent::EventSync
              ? (s.waitOnStream >= 0 && s.recordCorrelation >= 0
                     ? lastBefore(s.waitOnStream, double(s.recordCorrelation), true)
                     : -1)
              : lastBefore(s.stream, at, true);
      for (int64_t stream : out.streams)
        depend(firstAfter(stream, at, true), producer);
      break;
    }
    case SyncEvent::ContextSync:
      ++out.hostSyncs;
      contextCuts.push_back(at);
      break;
    }
  }
  if (!contextCuts.empty()) {
    synchronise(std::move(contextCuts), true);
  } else {
    // Traces without cuda_sync events: device synchronisations by time.
    std::vector<double> byTime;
    for (double at : trace.contextSyncCalls)
      if (at >= from && at < to) {
        ++out.hostSyncs;
        byTime.push_back(at);
      }
    synchronise(std::move(byTime), false);
  }
  if (out.waitsIssued == 0)
    for (double at : trace.streamWaitCalls)
      out.waitsIssued += at >= from && at < to;
  for (ImportedStage &st : out.stages) {
    std::sort(st.deps.begin(), st.deps.end());
    st.deps.erase(std::unique(st.deps.begin(), st.deps.end()), st.deps.end());
  }
  return out;
}

DeviceProfile importer::profileFor(const DeviceInfo &d) {
  DeviceProfile p;
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

namespace {

/// A stream's name: s7 for id 7; a negative id (s-1 is no name) s_neg1.
std::string streamName(int64_t id) {
  return id >= 0 ? "s" + std::to_string(id) : "s_neg" + std::to_string(uint64_t(0) - uint64_t(id));
}

} // namespace

llvm::Expected<std::string> importer::writePipe(const ImportedStep &s,
                                                llvm::StringRef source,
                                                const DeviceProfile &profile) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto comment = [](llvm::StringRef t) {
    std::string out;
    for (char c : t)
      out += (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) ? ' ' : c;
    return out;
  };
  os << "// Imported by pipec from " << comment(source);
  if (s.step)
    os << ", ProfilerStep#" << *s.step;
  os << ": " << s.stages.size() << " GPU ops on " << s.streams.size()
     << " stream(s)";
  if (!s.device.name.empty())
    os << ", recorded on " << comment(s.device.name);
  os << ".\n// Each stage's time is the measured duration; its dependencies are the\n"
        "// cross-stream orderings the program had (stream waits, host syncs).\n";
  std::string name = !s.step       ? "trace"
                     : *s.step >= 0 ? "step_" + std::to_string(*s.step)
                                    : "step_neg" + std::to_string(uint64_t(0) - uint64_t(*s.step));
  os << "pipeline " << name << " {\n";
  for (int64_t st : s.streams)
    os << "  stream " << streamName(st) << ";\n";
  // Microseconds to the nanosecond, without trailing zeros: "40us", "2.5us".
  auto time = [](double us) {
    std::string t = formatv("{0:f3}", std::max(0.0, us)).str();
    while (t.back() == '0')
      t.pop_back();
    if (t.back() == '.')
      t.pop_back();
    return t + "us";
  };
  for (const ImportedStage &st : s.stages) {
    const GpuOp &op = st.op;
    os << "  stage " << st.name << " on " << streamName(op.stream) << ' ';
    switch (op.kind) {
    case OpKind::Kernel: {
      uint64_t threads = std::clamp<uint64_t>(op.threads, 1, 1024);
      // The block must fit the recorded GPU's SM, as it did when it ran.
      if (profile.blocksPerSM(uint32_t(threads)) == 0)
        return fail(formatv("event {0} (kernel '{1}'): a block of {2} threads does not "
                            "fit on one SM of the recorded GPU ({3} threads per SM)",
                            op.event, st.name, threads, profile.maxThreadsPerSM));
      os << "kernel " << time(op.dur) << " [blocks="
         << std::clamp<uint64_t>(op.blocks, 1, 2147483647) << ", threads=" << threads;
      bool smemFits = op.smem && op.smem <= profile.sharedMemoryPerBlock;
      bool regsFit = op.regs >= 1 && op.regs <= 255;
      if (smemFits || regsFit) {
        // Only what keeps one block on one SM, as the device allowed it.
        uint64_t smem = smemFits ? op.smem : 0;
        uint32_t regs = regsFit ? op.regs : 0;
        if (profile.blocksPerSM(uint32_t(threads), smem, regs) == 0)
          smem = 0, regs = 0;
        if (smem)
          os << ", smem=" << smem;
        if (regs)
          os << ", regs=" << regs;
      }
      os << "]";
      break;
    }
    case OpKind::Memcpy:
      os << "copy " << spelling(op.direction) << ' ' << time(op.dur);
      break;
    case OpKind::Memset:
      os << "memset " << time(op.dur);
      break;
    }
    if (!st.deps.empty()) {
      os << " depends_on(";
      for (size_t i = 0; i < st.deps.size(); ++i)
        os << (i ? ", " : "") << s.stages[st.deps[i]].name;
      os << ")";
    }
    os << "; // " << comment(op.name);
    if (op.bytes)
      os << ", " << op.bytes << " B";
    os << "\n";
  }
  os << "}\n";
  os.flush();
  return text;
}
