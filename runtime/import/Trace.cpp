//===- Trace.cpp - Reading a Kineto trace ---------------------------------===//

#include "runtime/import/Trace.h"

#include "compiler/support/Fail.h"
#include "compiler/support/Printable.h"
#include "runtime/import/FlatJson.h"
#include "runtime/import/JsonStream.h"
#include "runtime/import/Nsys.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unistd.h>

using namespace pipec;
using namespace pipec::importer;

namespace {

/// Names are kept to this many bytes (a kernel's demangled name can be long,
/// but not a megabyte).
constexpr size_t kMaxNameBytes = 1024;

/// One object's fields, read through llvm::json's DOM (every entry of
/// deviceProperties, and events the fast reader does not take) or through
/// a FlatObject (the rest): readEvent reads both the same way.
struct DomView {
  const llvm::json::Object *o = nullptr;
  std::optional<llvm::StringRef> getString(llvm::StringRef key) const {
    if (auto s = o ? o->getString(key) : llvm::None)
      return *s;
    return std::nullopt;
  }
  std::optional<double> getNumber(llvm::StringRef key) const {
    if (auto d = o ? o->getNumber(key) : llvm::None)
      return *d;
    return std::nullopt;
  }
  std::optional<int64_t> getInteger(llvm::StringRef key) const {
    if (auto i = o ? o->getInteger(key) : llvm::None)
      return *i;
    return std::nullopt;
  }
  bool has(llvm::StringRef key) const { return o && o->get(key); }
  /// An array's elements as integers (none for one that is not); none when
  /// there is no such array.
  std::optional<llvm::SmallVector<std::optional<int64_t>, 4>>
  integers(llvm::StringRef key) const {
    const llvm::json::Array *a = o ? o->getArray(key) : nullptr;
    if (!a)
      return std::nullopt;
    llvm::SmallVector<std::optional<int64_t>, 4> out;
    for (const llvm::json::Value &v : *a) {
      if (auto i = v.getAsInteger())
        out.push_back(*i);
      else
        out.push_back(std::nullopt);
    }
    return out;
  }
};

struct FlatView {
  const FlatObject *o = nullptr;
  std::optional<llvm::StringRef> getString(llvm::StringRef key) const {
    return o ? o->getString(key) : std::nullopt;
  }
  std::optional<double> getNumber(llvm::StringRef key) const {
    return o ? o->getNumber(key) : std::nullopt;
  }
  std::optional<int64_t> getInteger(llvm::StringRef key) const {
    return o ? o->getInteger(key) : std::nullopt;
  }
  bool has(llvm::StringRef key) const { return o && o->get(key); }
  std::optional<llvm::SmallVector<std::optional<int64_t>, 4>>
  integers(llvm::StringRef key) const {
    const FlatValue *v = o ? o->get(key) : nullptr;
    if (!v || v->kind != FlatValue::Array)
      return std::nullopt;
    llvm::SmallVector<std::optional<int64_t>, 4> out;
    for (const FlatValue &e : flatElements(v->text))
      out.push_back(flatInteger(e));
    return out;
  }
};

template <typename View> int64_t intOr(const View &o, llvm::StringRef key, int64_t fallback) {
  if (auto v = o.getInteger(key))
    return *v;
  // A number no integer can hold (1e400 reads as infinity) is not one.
  if (auto d = o.getNumber(key); d && *d >= -9.2e18 && *d <= 9.2e18)
    return static_cast<int64_t>(*d);
  return fallback;
}

/// A correlation id, or -1 for none: the two largest int64 values are no
/// real call's, and are the reserved keys of the maps that look calls up.
int64_t correlation(int64_t id) {
  return id < std::numeric_limits<int64_t>::max() - 1 ? id : -1;
}

/// A device property: a count that fits 32 bits, else 0 (not known).
uint32_t propertyOr0(const DomView &o, llvm::StringRef key) {
  int64_t v = intOr(o, key, 0);
  return v >= 0 && v <= int64_t(UINT32_MAX) ? static_cast<uint32_t>(v) : 0;
}

template <typename View> double numberOr(const View &o, llvm::StringRef key, double fallback) {
  if (auto d = o.getNumber(key))
    return *d;
  return fallback;
}

/// x * y * z of a `[x, y, z]` array (1 when absent); none when an entry is
/// not a positive whole number or the product passes `limit`.
template <typename View>
std::optional<uint64_t> product(const View &args, llvm::StringRef key, uint64_t limit) {
  auto a = args.integers(key);
  if (!a)
    return 1;
  uint64_t p = 1;
  for (std::optional<int64_t> n : *a) {
    if (!n || *n < 1 || uint64_t(*n) > limit || p > limit / uint64_t(*n))
      return std::nullopt;
    p *= uint64_t(*n);
  }
  return p;
}

CopyDirection directionOf(llvm::StringRef name) {
  if (name.contains("HtoD"))
    return CopyDirection::H2D;
  if (name.contains("DtoH"))
    return CopyDirection::D2H;
  return CopyDirection::D2D;
}

} // namespace

namespace {

/// One deviceProperties entry.
llvm::Error readDevice(llvm::StringRef entry, uint64_t index, Trace &trace) {
  if (trace.devices.size() >= kMaxTraceDevices)
    return fail("'deviceProperties' lists more than " + llvm::Twine(kMaxTraceDevices) +
                " devices");
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(entry);
  if (!v)
    return fail("entry " + llvm::Twine(index) +
                " of 'deviceProperties' is not valid JSON: " + llvm::toString(v.takeError()));
  const DomView o{v->getAsObject()};
  if (!o.o)
    return llvm::Error::success();
  DeviceInfo info;
  if (auto n = o.getString("name"))
    info.name = keptName(*n);
  if ((o.has("gcnArchName") || llvm::StringRef(info.name).contains("AMD")) &&
      trace.foreignPlatform.empty())
    trace.foreignPlatform = "ROCm (device '" + info.name + "')";
  info.id = intOr(o, "id", int64_t(trace.devices.size()));
  info.sms = propertyOr0(o, "numSms");
  info.maxThreadsPerSM = propertyOr0(o, "maxThreadsPerMultiprocessor");
  info.maxThreadsPerBlock = propertyOr0(o, "maxThreadsPerBlock");
  info.sharedMemoryPerSM = propertyOr0(o, "sharedMemPerMultiprocessor");
  info.sharedMemoryPerBlock = o.has("sharedMemPerBlockOptin")
                                  ? propertyOr0(o, "sharedMemPerBlockOptin")
                                  : propertyOr0(o, "sharedMemPerBlock");
  info.registersPerSM = propertyOr0(o, "regsPerMultiprocessor");
  info.major = propertyOr0(o, "computeMajor");
  info.minor = propertyOr0(o, "computeMinor");
  trace.devices.push_back(std::move(info));
  return llvm::Error::success();
}

/// One traceEvents entry's fields (`e`, and `args` its args object):
/// kept when it is a GPU op, a runtime call, a sync or a step; a GPU op
/// whose numbers pipec cannot represent is an error that names the event.
template <typename View>
llvm::Error readEventFields(const View &e, const View &args, uint64_t index, Trace &trace,
                            bool &hip) {
  // Categories as PyTorch 1.x ("Kernel", "Memcpy", "Runtime") and 2.x
  // ("kernel", "gpu_memcpy", "cuda_runtime") write them.
  std::string catText = e.getString("cat").value_or("").lower();
  if (catText == "memcpy")
    catText = "gpu_memcpy";
  else if (catText == "memset")
    catText = "gpu_memset";
  else if (catText == "runtime")
    catText = "cuda_runtime";
  // Meta's MTIA accelerators: their device's ops and their runtime's calls
  // (a platform pipec does not model: the recorded half is reported).
  if (catText == "mtia_ccp_events" || catText == "mtia_runtime") {
    trace.mtia = true;
    catText = catText == "mtia_runtime" ? "cuda_runtime" : "kernel";
  }
  llvm::StringRef cat = catText;
  llvm::StringRef name = e.getString("name").value_or("");
  double ts = numberOr(e, "ts", 0), dur = numberOr(e, "dur", 0);
  if (trace.keepCpuOps && (cat == "cpu_op" || cat == "user_annotation") &&
      !name.startswith("ProfilerStep#") && std::isfinite(ts) && std::isfinite(dur) &&
      dur >= 0) {
    CpuOps &c = trace.cpuOps;
    if (c.ops.size() >= kMaxCpuOps)
      return fail("the trace holds more than " + llvm::Twine(kMaxCpuOps) +
                  " framework ops (cpu_op events): more than pipec links to an execution "
                  "trace");
    CpuOp op;
    auto [known, added] = c.nameIndex.try_emplace(name, uint32_t(c.names.size()));
    if (added)
      c.names.push_back(keptName(name));
    op.name = known->second;
    op.ts = ts;
    op.dur = dur;
    op.thread = intOr(e, "tid", 0);
    op.externalId = intOr(args, "External id", -1);
    op.recordFunctionId = intOr(args, "Record function id", -1);
    c.ops.push_back(op);
    if (cat == "cpu_op")
      return llvm::Error::success();
  }
  if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
    GpuOp op;
    op.kind = cat == "kernel"       ? OpKind::Kernel
              : cat == "gpu_memcpy" ? OpKind::Memcpy
                                    : OpKind::Memset;
    auto [known, added] = trace.nameIndex.try_emplace(name, uint32_t(trace.names.size()));
    if (added)
      trace.names.push_back(keptName(name));
    op.name = known->second;
    auto bad = [&](const llvm::Twine &why) {
      llvm::StringRef kept = trace.names[op.name];
      return fail("event " + llvm::Twine(index) + " (" + cat + " '" + kept.take_front(80) +
                  (kept.size() > 80 ? "..." : "") + "') " + why);
    };
    std::optional<double> tsValue = e.getNumber("ts"), durValue = e.getNumber("dur");
    if (!tsValue || !std::isfinite(*tsValue))
      return bad("has no finite 'ts'");
    if (!durValue || !std::isfinite(*durValue))
      return bad("has no finite 'dur'");
    if (*durValue < 0)
      return bad("has a negative 'dur'");
    // Microseconds, as Kineto writes them: past 2^52 (the year 2112 since
    // the epoch) a double holds a time to a microsecond or worse, and such
    // a time is nanoseconds written where microseconds belong.
    if (std::abs(*tsValue) > 0x1p52)
      return bad(llvm::formatv("has a 'ts' of {0:e} us: past any date a profiler records "
                               "in microseconds (nanoseconds?), and where a time holds no "
                               "nanosecond; export the trace in microseconds",
                               *tsValue)
                     .str());
    if (*durValue > kMaxStageUs)
      return bad("lasts " +
                 (*durValue < 1e15 ? llvm::formatv("{0:f1}", *durValue / 1e6).str()
                                   : llvm::formatv("{0:e}", *durValue / 1e6).str()) +
                 " s: more than the 3600 s a .pipe stage may take");
    // A stream id is an integer of 64 bits. A number that is not whole, or
    // past 2^53 as a double, would alias another stream, and is no id; so
    // is an integer literal at or past int64's ends, which both readers
    // (llvm::json's, and the fast one, which leaves such literals to it)
    // read as INT64_MAX or INT64_MIN: two of them would share a stream.
    {
      const bool inArgs = args.getNumber("stream").has_value();
      const View &holder = inArgs ? args : e;
      const llvm::StringRef key = inArgs ? "stream" : "tid";
      std::optional<double> value = holder.getNumber(key);
      std::optional<int64_t> exact = holder.getInteger(key);
      const bool atEnds = exact && (*exact == std::numeric_limits<int64_t>::max() ||
                                    *exact == std::numeric_limits<int64_t>::min());
      if (value && (atEnds || (!exact && !(std::fabs(*value) <= 9007199254740992.0 &&
                                           *value == std::floor(*value))))) {
        char shown[32];
        std::snprintf(shown, sizeof shown, "%.17g", *value);
        return bad("runs on stream " + llvm::Twine(shown) +
                   ": not a stream id (an integer of 64 bits, short of int64's ends)");
      }
    }
    op.stream = intOr(args, "stream", intOr(e, "tid", 0));
    op.ts = *tsValue;
    op.dur = *durValue;
    op.correlation =
        correlation(intOr(args, "correlation", intOr(args, "correlation_id", -1)));
    op.device = intOr(args, "device", intOr(e, "pid", 0));
    std::optional<uint64_t> blocks = product(args, "grid", 2147483647);
    if (!blocks)
      return bad("has a 'grid' that is not 1 to 2147483647 blocks");
    std::optional<uint64_t> threads = product(args, "block", 1024);
    if (!threads)
      return bad("has a 'block' that is not 1 to 1024 threads");
    op.blocks = *blocks;
    op.threads = *threads;
    op.regs =
        uint32_t(std::clamp<int64_t>(intOr(args, "registers per thread", 0), 0, 1 << 20));
    op.smem =
        uint64_t(std::clamp<int64_t>(intOr(args, "shared memory", 0), 0, int64_t(1) << 40)) +
        uint64_t(
            std::clamp<int64_t>(intOr(args, "dynamic shared memory", 0), 0, int64_t(1) << 40));
    op.bytes = uint64_t(std::max<int64_t>(0, intOr(args, "bytes", 0)));
    op.direction = directionOf(name);
    op.event = index;
    if (!std::isfinite(op.ts + op.dur))
      return bad("ends past the largest time a trace can hold");
    trace.ops.push_back(std::move(op));
  } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
    if (!std::isfinite(ts) || !std::isfinite(dur) || dur < 0)
      return llvm::Error::success(); // not a call pipec can place
    HostCall call;
    call.ts = ts;
    call.dur = dur;
    call.correlation =
        correlation(intOr(args, "correlation", intOr(args, "correlation_id", -1)));
    call.thread = intOr(e, "tid", 0);
    call.kind = callKindOf(name);
    if (const int64_t pid = intOr(e, "pid", 0);
        trace.hostProcesses.size() < 9 &&
        std::find(trace.hostProcesses.begin(), trace.hostProcesses.end(), pid) ==
            trace.hostProcesses.end())
      trace.hostProcesses.push_back(pid);
    auto [known, added] =
        trace.callNameIndex.try_emplace(name, uint32_t(trace.callNames.size()));
    if (added)
      trace.callNames.push_back(keptName(name));
    call.name = known->second;
    if (call.correlation >= 0)
      trace.callOf[call.correlation] = static_cast<uint32_t>(trace.calls.size());
    trace.calls.push_back(call);
    if (name.startswith("hip"))
      hip = true;
  } else if (cat == "cuda_sync") {
    llvm::StringRef kind = args.getString("cuda_sync_kind").value_or(name);
    SyncEvent s;
    if (kind == "Stream Wait Event")
      s.kind = SyncEvent::StreamWait;
    else if (kind == "Event Sync")
      s.kind = SyncEvent::EventSync;
    else if (kind == "Stream Sync")
      s.kind = SyncEvent::StreamSync;
    else if (kind == "Context Sync")
      s.kind = SyncEvent::ContextSync;
    else
      return llvm::Error::success();
    s.stream = intOr(args, "stream", -1);
    s.waitOnStream = intOr(args, "wait_on_stream", -1);
    s.recordCorrelation = correlation(intOr(args, "wait_on_cuda_event_record_corr_id", -1));
    s.correlation = correlation(intOr(args, "correlation", -1));
    s.ts = ts;
    trace.syncs.push_back(s);
  } else if (name.startswith("ProfilerStep#") && cat != "gpu_user_annotation") {
    int64_t number = 0;
    if (!name.drop_front(13).getAsInteger(10, number) && std::isfinite(ts) &&
        std::isfinite(dur))
      trace.steps.push_back({number, ts, dur});
  } else if (cat == "user_annotation" && std::isfinite(ts) && std::isfinite(dur) && dur >= 0) {
    addRange(trace, name, ts, dur);
  }
  return llvm::Error::success();
}

/// One traceEvents entry: read flat where it is plain JSON (nearly every
/// event), through llvm::json otherwise (escapes, non-ASCII names, JSON's
/// errors) or always when `slowly` (the cross-check's reader).
llvm::Error readEvent(llvm::StringRef entry, uint64_t index, Trace &trace, bool &hip,
                      bool slowly) {
  if (!slowly) {
    FlatObject e, args;
    if (e.parse(entry)) {
      const FlatValue *a = e.get("args");
      const bool hasArgs = a && a->kind == FlatValue::Object;
      if (!hasArgs || args.parse(a->text))
        return readEventFields(FlatView{&e}, FlatView{hasArgs ? &args : nullptr}, index, trace,
                               hip);
    }
  }
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(entry);
  if (!v)
    return fail("event " + llvm::Twine(index) +
                " is not valid JSON: " + llvm::toString(v.takeError()));
  const llvm::json::Object *e = v->getAsObject();
  if (!e)
    return llvm::Error::success();
  return readEventFields(DomView{e}, DomView{e->getObject("args")}, index, trace, hip);
}

/// traceEvents entries parsed on a second thread while this one scans the
/// input for the next: the two halves of reading cost about the same (at
/// 800,000 ops, 1.3 and 1.9 s). The entries are copied into batches of
/// about a megabyte, handed over and parsed in order, so the trace, and the
/// first error, are what parsing them one by one gives.
class EventWorker {
public:
  EventWorker(Trace &trace, bool slowly) : trace(trace), slowly(slowly) {
    thread = std::thread([this] { run(); });
  }
  ~EventWorker() { llvm::consumeError(finish()); }

  /// Hands over one entry; false once an entry failed (read no further).
  bool add(llvm::StringRef entry, uint64_t index) {
    if (filling.ends.empty())
      filling.first = index;
    filling.text.append(entry.data(), entry.size());
    filling.ends.push_back(filling.text.size());
    if (filling.text.size() >= kBatchBytes)
      handOver();
    return !failed.load(std::memory_order_relaxed);
  }
  /// Waits until every entry handed over is parsed; the first error, and
  /// whether HIP runtime calls were seen.
  llvm::Error finish() {
    if (!thread.joinable())
      return llvm::Error::success();
    if (!filling.ends.empty())
      handOver();
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
    }
    changed.notify_all();
    thread.join();
    return std::move(error);
  }
  bool sawHip() const { return hip; }

private:
  static constexpr size_t kBatchBytes = size_t(1) << 20, kQueued = 4;
  struct Batch {
    std::string text;
    std::vector<size_t> ends; ///< each entry's end in text
    uint64_t first = 0;       ///< the first entry's index
  };

  void handOver() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return queue.size() < kQueued || failed; });
    queue.push_back(std::move(filling));
    Batch next;
    if (!spare.empty()) {
      next = std::move(spare.back());
      spare.pop_back();
    }
    lock.unlock();
    changed.notify_all();
    filling = std::move(next);
    filling.text.clear();
    filling.ends.clear();
  }

  void run() {
    for (;;) {
      Batch batch;
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return !queue.empty() || done; });
        if (queue.empty())
          return;
        batch = std::move(queue.front());
        queue.pop_front();
      }
      changed.notify_all();
      size_t start = 0;
      for (size_t k = 0; k < batch.ends.size() && !failed; ++k) {
        llvm::StringRef entry(batch.text.data() + start, batch.ends[k] - start);
        start = batch.ends[k];
        if (llvm::Error e = readEvent(entry, batch.first + k, trace, hip, slowly)) {
          error = std::move(e);
          failed = true;
        }
      }
      std::lock_guard<std::mutex> lock(mutex);
      spare.push_back(std::move(batch));
    }
  }

  Trace &trace; ///< only the worker touches it until finish()
  const bool slowly;
  Batch filling;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Batch> queue;
  std::vector<Batch> spare;
  bool done = false;
  std::atomic<bool> failed{false};
  llvm::Error error = llvm::Error::success();
  bool hip = false;
  std::thread thread;
};

} // namespace

/// The trace from `r`: the top-level object's keys, one by one, each entry
/// of `deviceProperties` and `traceEvents` parsed on its own; a
/// "traceEvents" or "deviceProperties" nested deeper (in distributedInfo,
/// in an event's args) is not the trace's.
std::string importer::keptName(llvm::StringRef name) {
  if (name.size() > kMaxNameBytes)
    return printable(name.take_front(kMaxNameBytes)) + "...";
  return printable(name);
}

HostCall::Kind importer::callKindOf(llvm::StringRef name) {
  if (name == "cudaStreamSynchronize" || name == "cuStreamSynchronize")
    return HostCall::StreamSync;
  if (name == "cudaEventSynchronize" || name == "cuEventSynchronize")
    return HostCall::EventSync;
  if (name == "cudaDeviceSynchronize" || name == "cuCtxSynchronize" ||
      name == "cudaThreadSynchronize")
    return HostCall::DeviceSync;
  if (name == "cudaStreamWaitEvent" || name == "cuStreamWaitEvent")
    return HostCall::StreamWait;
  if (name == "cudaFree" || name == "cuMemFree_v2" || name == "cuMemFree")
    return HostCall::Free;
  if (name == "cudaGraphLaunch" || name == "cuGraphLaunch")
    return HostCall::GraphLaunch;
  if (name == "cudaMemcpy" || name == "cudaMemset" || name == "cuMemcpy" ||
      name == "cuMemcpyHtoD_v2" || name == "cuMemcpyDtoH_v2" || name == "cudaMemcpy2D")
    return HostCall::BlockingCopy;
  return HostCall::Other;
}

void importer::addRange(Trace &trace, llvm::StringRef name, double ts, double dur) {
  if (trace.ranges.size() >= kMaxRanges)
    return;
  auto [known, added] =
      trace.rangeNameIndex.try_emplace(name, uint32_t(trace.rangeNames.size()));
  if (added)
    trace.rangeNames.push_back(keptName(name));
  trace.ranges.push_back({known->second, ts, dur});
}

void importer::finishTrace(Trace &trace) {
  // Several GPUs: the one with the most ops (one device, one pipeline).
  std::map<int64_t, uint64_t> perDevice; // any id, INT64_MAX too
  int64_t busiest = trace.ops.front().device;
  for (const GpuOp &op : trace.ops)
    if (++perDevice[op.device] > perDevice[busiest])
      busiest = op.device;
  trace.device = busiest;
  if (perDevice.size() > 1) {
    trace.otherDevices = perDevice.size() - 1;
    trace.otherDeviceOps = trace.ops.size() - perDevice[busiest];
    trace.ops.erase(std::remove_if(trace.ops.begin(), trace.ops.end(),
                                   [&](const GpuOp &op) { return op.device != busiest; }),
                    trace.ops.end());
  }
  trace.nameIndex = llvm::StringMap<uint32_t>();
  trace.callNameIndex = llvm::StringMap<uint32_t>();
  trace.rangeNameIndex = llvm::StringMap<uint32_t>();
  for (GpuOp &op : trace.ops) {
    auto it = trace.callOf.find(op.correlation);
    if (it != trace.callOf.end()) {
      const HostCall &call = trace.calls[it->second];
      op.launchTs = call.ts;
      op.launchDur = call.dur;
      op.thread = call.thread;
    }
  }
}

static llvm::Expected<Trace> readTraceFrom(JsonReader &r, bool slowly = false,
                                           bool cpuOps = false) {
  Trace trace;
  trace.keepCpuOps = cpuOps;
  bool hip = false, sawEvents = false, sawDevices = false;
  const ObjectWords words{"not a trace: a Kineto trace is a JSON object, this is not JSON",
                          "not a trace: the top-level object is not valid JSON",
                          "the trace is truncated"};
  llvm::Error read = forEachMember(r, words, [&](const std::string &key) -> llvm::Error {
    if (key == "deviceProperties" && !sawDevices) {
      sawDevices = true;
      return forEachEntry(r, "deviceProperties", [&](llvm::StringRef entry, uint64_t index) {
        return readDevice(entry, index, trace);
      });
    }
    if (key == "traceEvents" && !sawEvents) {
      sawEvents = true;
      EventWorker worker(trace, slowly);
      llvm::Error scanned =
          forEachEntry(r, "traceEvents", [&](llvm::StringRef entry, uint64_t index) {
            // A failed entry is the worker's error, and comes first. An
            // empty one (a stray '}') is not JSON, and the scan cannot get
            // past it: it is the last handed over.
            return worker.add(entry, index) && !entry.empty() ? llvm::Error::success()
                                                              : fail("an entry failed");
          });
      // An entry that failed comes before where the scan stopped.
      llvm::Error parsed = worker.finish();
      hip = hip || worker.sawHip();
      if (parsed) {
        llvm::consumeError(std::move(scanned));
        return parsed;
      }
      return scanned;
    }
    return skipMember(r, key, words.truncated);
  });
  if (read)
    return llvm::Error(std::move(read));
  if (!sawEvents)
    return fail("not a Chrome trace: it has no 'traceEvents'");
  if (hip && trace.foreignPlatform.empty())
    trace.foreignPlatform = "ROCm (HIP runtime calls)";
  if (trace.mtia && trace.foreignPlatform.empty())
    trace.foreignPlatform = "Meta MTIA (mtia_ccp_events and mtia_runtime)";
  if (trace.ops.empty()) {
    // What the trace does hold, so that its reader knows what to record.
    std::string devices;
    for (const DeviceInfo &d : trace.devices)
      devices +=
          (devices.empty() ? "" : ", ") + (d.name.empty() ? std::string("unnamed") : d.name);
    return fail(llvm::formatv(
        "the trace has no GPU op (kernel, memcpy or memset) to import: {0}, and {1} runtime "
        "call(s){2}",
        trace.devices.empty()
            ? std::string("it lists no device (no 'deviceProperties')")
            : llvm::formatv("its 'deviceProperties' list {0} device(s) ({1})",
                            trace.devices.size(), devices)
                  .str(),
        trace.calls.size(),
        trace.devices.empty() && trace.calls.empty()
            ? ": the host's events only, as the profiler records without a device's activity "
              "(ProfilerActivity.CUDA for NVIDIA GPUs)"
            : std::string(": the device's activity was not recorded")));
  }
  // Several processes' calls and several GPUs' ops: ranks merged into one
  // file, which one pipeline cannot be (one rank's would be taken for the
  // step, the others dropped).
  if (trace.hostProcesses.size() > 1) {
    std::set<int64_t> devices;
    for (const GpuOp &op : trace.ops)
      if (devices.insert(op.device).second && devices.size() > 1)
        break;
    if (devices.size() > 1) {
      std::string pids;
      for (size_t i = 0; i < std::min<size_t>(trace.hostProcesses.size(), 8); ++i)
        pids += (i ? ", " : "") + std::to_string(trace.hostProcesses[i]);
      return fail(llvm::formatv(
          "it holds the runtime calls of {0} processes (pids {1}{2}) and the ops of several "
          "GPUs: the ranks of a job merged into one file; pipec imports one process's "
          "trace a step, or each rank's own trace together as ranks (pipec import "
          "RANK0.json RANK1.json ...)",
          trace.hostProcesses.size() > 8 ? "more than 8"
                                         : std::to_string(trace.hostProcesses.size()),
          pids, trace.hostProcesses.size() > 8 ? ", ..." : ""));
    }
  }
  finishTrace(trace);
  return trace;
}

llvm::Expected<Trace> importer::readTrace(llvm::StringRef path) {
  llvm::Expected<std::vector<Trace>> processes = readRecording(path);
  if (!processes)
    return processes.takeError();
  if (processes->size() > 1)
    return fail(llvm::formatv("'{0}': the export holds {1} processes that ran GPU work; "
                              "give it alone to `pipec import` to take them as ranks of "
                              "one program",
                              printable(path), processes->size())
                    .str());
  return std::move(processes->front());
}

llvm::Expected<std::vector<Trace>> importer::readRecording(llvm::StringRef path, bool cpuOps) {
  const std::string shown = path == "-" ? "<stdin>" : printable(path);
  std::vector<Trace> out;
  if (path != "-" && isSqliteFile(path)) {
    llvm::Expected<std::vector<Trace>> processes = readNsys(path);
    if (!processes)
      return fail("'" + shown + "': " + llvm::toString(processes.takeError()));
    out = std::move(*processes);
    return out;
  }
  std::string spooled;
  llvm::Expected<std::unique_ptr<ByteSource>> source = openRecording(path, shown, spooled);
  if (!source)
    return source.takeError();
  if (!spooled.empty()) { // an export through a pipe, now in a file
    llvm::Expected<std::vector<Trace>> processes = readNsys(spooled);
    ::unlink(spooled.c_str());
    if (!processes)
      return fail("'" + shown + "': " + llvm::toString(processes.takeError()));
    return std::move(*processes);
  }
  JsonReader reader(**source, kMaxTraceBytes);
  llvm::Expected<Trace> trace = readTraceFrom(reader, /*slowly=*/false, cpuOps);
  if (!trace)
    return fail("'" + shown + "': " + llvm::toString(trace.takeError()));
  out.push_back(std::move(*trace));
  return out;
}

llvm::Expected<Trace> importer::parseTrace(llvm::StringRef text) {
  std::unique_ptr<ByteSource> source = memorySource(text);
  JsonReader reader(*source, kMaxTraceBytes);
  return readTraceFrom(reader);
}

llvm::Expected<Trace> importer::parseTraceSlowly(llvm::StringRef text) {
  std::unique_ptr<ByteSource> source = memorySource(text);
  JsonReader reader(*source, kMaxTraceBytes);
  return readTraceFrom(reader, /*slowly=*/true);
}
