//===- Trace.cpp - Reading a Kineto trace ---------------------------------===//

#include "runtime/import/Trace.h"

#include "compiler/support/Printable.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <unistd.h>

using namespace pipec;
using namespace pipec::importer;

namespace {

llvm::Error fail(const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), why.str());
}

/// The whole file ('-': standard input), gunzipped when it is gzip (zlib
/// reads anything else as it is); never more than kMaxTraceBytes. The file
/// is opened once: a pipe or /dev/stdin has no second reading.
llvm::Expected<std::string> readText(llvm::StringRef path) {
  const std::string shown = path == "-" ? "<stdin>" : printable(path);
  int fd = path == "-" ? ::dup(STDIN_FILENO) : ::open(path.str().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail("cannot read '" + shown + "': " + std::strerror(errno));
  gzFile z = gzdopen(fd, "rb");
  if (!z) {
    ::close(fd);
    return fail("cannot read '" + shown + "'");
  }
  gzbuffer(z, 1 << 17);
  std::string text;
  char chunk[1 << 16];
  for (;;) {
    int n = gzread(z, chunk, sizeof chunk);
    if (n < 0) {
      int code = 0;
      std::string why = gzerror(z, &code);
      gzclose(z);
      if (code == Z_ERRNO)
        return fail("cannot read '" + shown + "': " + std::strerror(errno));
      return fail("'" + shown + "' is a truncated or damaged gzip file: " + why);
    }
    if (n == 0)
      break;
    text.append(chunk, size_t(n));
    if (text.size() > kMaxTraceBytes) {
      gzclose(z);
      return fail("'" + shown + "' is too large uncompressed (over 1024 MiB); "
                  "record fewer steps");
    }
  }
  // gzread stops quietly at a truncated stream: gzclose, or the buffer
  // state, tells.
  int code = 0;
  const char *why = gzerror(z, &code);
  bool truncated = code != Z_OK && code != Z_STREAM_END;
  std::string message = why ? why : "";
  bool direct = gzdirect(z);
  if (gzclose(z) != Z_OK || (truncated && !direct))
    return fail("'" + shown + "' is a truncated or damaged gzip file" +
                (message.empty() ? "" : ": " + message));
  return text;
}

/// Deeper values are refused: JSON's parser recurses on nesting.
constexpr int kMaxNesting = 64;

/// From `at` (at or before a '[' or '{'), the end of that value: one past
/// its closing bracket, skipping strings; npos when the text ends first,
/// npos - 1 when it nests deeper than kMaxNesting.
size_t endOfValue(llvm::StringRef text, size_t at) {
  int depth = 0;
  bool inString = false;
  for (size_t i = at; i < text.size(); ++i) {
    char c = text[i];
    if (inString) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        inString = false;
      continue;
    }
    if (c == '"')
      inString = true;
    else if ((c == '[' || c == '{') && ++depth > kMaxNesting)
      return llvm::StringRef::npos - 1;
    else if (c == ']' || c == '}') {
      if (--depth == 0)
        return i + 1;
    }
  }
  return llvm::StringRef::npos;
}

size_t skipSpace(llvm::StringRef text, size_t i) {
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
    ++i;
  return i;
}

/// From `at` (the first character of any JSON value), one past its end; npos
/// when the text ends first, npos - 1 when it nests too deeply.
size_t skipValue(llvm::StringRef text, size_t at) {
  if (at >= text.size())
    return llvm::StringRef::npos;
  char c = text[at];
  if (c == '[' || c == '{')
    return endOfValue(text, at);
  if (c == '"') {
    for (size_t i = at + 1; i < text.size(); ++i) {
      if (text[i] == '\\')
        ++i;
      else if (text[i] == '"')
        return i + 1;
    }
    return llvm::StringRef::npos;
  }
  size_t i = at;
  while (i < text.size() && text[i] != ',' && text[i] != '}' && text[i] != ']' &&
         !std::isspace(static_cast<unsigned char>(text[i])))
    ++i;
  return i;
}

/// The largest event or device entry parsed: an event of a real trace is a
/// few hundred bytes, and one of a gigabyte (a gzip bomb's name) would be
/// parsed into as much again.
constexpr size_t kMaxEntryBytes = size_t(16) << 20;
/// The most `deviceProperties` entries: a machine has a few GPUs.
constexpr size_t kMaxDevices = 4096;
/// Names are kept to this many bytes (a kernel's demangled name can be long,
/// but not a megabyte).
constexpr size_t kMaxNameBytes = 1024;

/// A name from the trace, as pipec keeps it: at most kMaxNameBytes, no
/// control characters.
std::string keptName(llvm::StringRef name) {
  if (name.size() > kMaxNameBytes)
    return printable(name.take_front(kMaxNameBytes)) + "...";
  return printable(name);
}

/// Calls `each(element text, index)` for every element of the array at
/// `at` (its '['), parsing none of them; returns the position after the
/// array. `what` names it in an error.
template <typename Each>
llvm::Expected<size_t> forEachElement(llvm::StringRef text, size_t at,
                                      llvm::StringRef what, Each each) {
  size_t i = skipSpace(text, at);
  if (i >= text.size() || text[i] != '[')
    return fail("'" + what + "' is not an array");
  ++i;
  uint64_t index = 0;
  for (;;) {
    i = skipSpace(text, i);
    while (i < text.size() && text[i] == ',')
      i = skipSpace(text, i + 1);
    if (i >= text.size())
      return fail("the trace is truncated (inside '" + what + "')");
    if (text[i] == ']')
      return i + 1;
    size_t end = skipValue(text, i);
    if (end == llvm::StringRef::npos)
      return fail("the trace is truncated (inside '" + what + "', entry " +
                  llvm::Twine(index) + ")");
    if (end == llvm::StringRef::npos - 1)
      return fail("entry " + llvm::Twine(index) + " of '" + what +
                  "' nests more than 64 levels deep");
    if (end - i > kMaxEntryBytes)
      return fail("entry " + llvm::Twine(index) + " of '" + what + "' is " +
                  llvm::Twine(uint64_t(end - i)) +
                  " bytes long; pipec reads entries of at most 16 MiB");
    if (llvm::Error e = each(text.slice(i, end), index))
      return e;
    i = end;
    ++index;
  }
}

int64_t intOr(const llvm::json::Object *o, llvm::StringRef key, int64_t fallback) {
  if (!o)
    return fallback;
  if (auto v = o->getInteger(key))
    return *v;
  // A number no integer can hold (1e400 reads as infinity) is not one.
  if (auto d = o->getNumber(key); d && *d >= -9.2e18 && *d <= 9.2e18)
    return static_cast<int64_t>(*d);
  return fallback;
}

/// A device property: a count that fits 32 bits, else 0 (not known).
uint32_t propertyOr0(const llvm::json::Object *o, llvm::StringRef key) {
  int64_t v = intOr(o, key, 0);
  return v >= 0 && v <= int64_t(UINT32_MAX) ? static_cast<uint32_t>(v) : 0;
}

double numberOr(const llvm::json::Object *o, llvm::StringRef key, double fallback) {
  if (!o)
    return fallback;
  if (auto d = o->getNumber(key))
    return *d;
  return fallback;
}

/// x * y * z of a `[x, y, z]` array (1 when absent); none when an entry is
/// not a positive whole number or the product passes `limit`.
std::optional<uint64_t> product(const llvm::json::Object *args, llvm::StringRef key,
                                uint64_t limit) {
  if (!args)
    return 1;
  const llvm::json::Array *a = args->getArray(key);
  if (!a)
    return 1;
  uint64_t p = 1;
  for (const llvm::json::Value &v : *a) {
    std::optional<int64_t> n;
    if (auto i = v.getAsInteger())
      n = *i;
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

llvm::Expected<Trace> importer::readTrace(llvm::StringRef path) {
  llvm::Expected<std::string> text = readText(path);
  if (!text)
    return text.takeError();
  llvm::Expected<Trace> trace = parseTrace(*text);
  if (!trace)
    return fail("'" + (path == "-" ? std::string("<stdin>") : printable(path)) +
                "': " + llvm::toString(trace.takeError()));
  return trace;
}

namespace {

/// One deviceProperties entry.
llvm::Error readDevice(llvm::StringRef entry, uint64_t index, Trace &trace) {
  if (trace.devices.size() >= kMaxDevices)
    return fail("'deviceProperties' lists more than " + llvm::Twine(kMaxDevices) +
                " devices");
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(entry);
  if (!v)
    return fail("entry " + llvm::Twine(index) + " of 'deviceProperties' is not valid JSON: " +
                llvm::toString(v.takeError()));
  const llvm::json::Object *o = v->getAsObject();
  if (!o)
    return llvm::Error::success();
  DeviceInfo info;
  if (auto n = o->getString("name"))
    info.name = keptName(*n);
  if (o->get("gcnArchName") || llvm::StringRef(info.name).contains("AMD"))
    return fail("a ROCm trace (device '" + info.name +
                "'): pipec models CUDA devices only");
  info.id = intOr(o, "id", int64_t(trace.devices.size()));
  info.sms = propertyOr0(o, "numSms");
  info.maxThreadsPerSM = propertyOr0(o, "maxThreadsPerMultiprocessor");
  info.maxThreadsPerBlock = propertyOr0(o, "maxThreadsPerBlock");
  info.sharedMemoryPerSM = propertyOr0(o, "sharedMemPerMultiprocessor");
  info.sharedMemoryPerBlock = o->get("sharedMemPerBlockOptin")
                                  ? propertyOr0(o, "sharedMemPerBlockOptin")
                                  : propertyOr0(o, "sharedMemPerBlock");
  info.registersPerSM = propertyOr0(o, "regsPerMultiprocessor");
  info.major = propertyOr0(o, "computeMajor");
  info.minor = propertyOr0(o, "computeMinor");
  trace.devices.push_back(std::move(info));
  return llvm::Error::success();
}

/// The longest time a .pipe stage may take (the language's limit).
constexpr double kMaxStageUs = 3600e6;

/// One traceEvents entry: kept when it is a GPU op, a runtime call, a sync
/// or a step; a GPU op whose numbers pipec cannot represent is an error
/// that names the event.
llvm::Error readEvent(llvm::StringRef entry, uint64_t index, Trace &trace, bool &hip) {
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(entry);
  if (!v)
    return fail("event " + llvm::Twine(index) + " is not valid JSON: " +
                llvm::toString(v.takeError()));
  const llvm::json::Object *e = v->getAsObject();
  if (!e)
    return llvm::Error::success();
  // Categories as PyTorch 1.x ("Kernel", "Memcpy", "Runtime") and 2.x
  // ("kernel", "gpu_memcpy", "cuda_runtime") write them.
  std::string catText = e->getString("cat").getValueOr("").lower();
  if (catText == "memcpy")
    catText = "gpu_memcpy";
  else if (catText == "memset")
    catText = "gpu_memset";
  else if (catText == "runtime")
    catText = "cuda_runtime";
  llvm::StringRef cat = catText;
  llvm::StringRef name = e->getString("name").getValueOr("");
  const llvm::json::Object *args = e->getObject("args");
  double ts = numberOr(e, "ts", 0), dur = numberOr(e, "dur", 0);
  if (cat == "kernel" || cat == "gpu_memcpy" || cat == "gpu_memset") {
    GpuOp op;
    op.kind = cat == "kernel"       ? OpKind::Kernel
              : cat == "gpu_memcpy" ? OpKind::Memcpy
                                    : OpKind::Memset;
    op.name = keptName(name);
    auto bad = [&](const llvm::Twine &why) {
      llvm::StringRef shown = llvm::StringRef(op.name).take_front(80);
      return fail("event " + llvm::Twine(index) + " (" + cat + " '" + shown +
                  (op.name.size() > 80 ? "..." : "") + "') " + why);
    };
    llvm::Optional<double> tsValue = e->getNumber("ts"), durValue = e->getNumber("dur");
    if (!tsValue || !std::isfinite(*tsValue))
      return bad("has no finite 'ts'");
    if (!durValue || !std::isfinite(*durValue))
      return bad("has no finite 'dur'");
    if (*durValue < 0)
      return bad("has a negative 'dur'");
    if (*durValue > kMaxStageUs)
      return bad("lasts " + llvm::formatv("{0:f1}", *durValue / 1e6).str() +
                 " s: more than the 3600 s a .pipe stage may take");
    op.stream = intOr(args, "stream", intOr(e, "tid", 0));
    op.ts = *tsValue;
    op.dur = *durValue;
    op.correlation = intOr(args, "correlation", intOr(args, "correlation_id", -1));
    op.device = intOr(args, "device", intOr(e, "pid", 0));
    std::optional<uint64_t> blocks = product(args, "grid", 2147483647);
    if (!blocks)
      return bad("has a 'grid' that is not 1 to 2147483647 blocks");
    std::optional<uint64_t> threads = product(args, "block", 1024);
    if (!threads)
      return bad("has a 'block' that is not 1 to 1024 threads");
    op.blocks = *blocks;
    op.threads = *threads;
    op.regs = uint32_t(std::clamp<int64_t>(intOr(args, "registers per thread", 0), 0, 1 << 20));
    op.smem = uint64_t(std::clamp<int64_t>(intOr(args, "shared memory", 0), 0, int64_t(1) << 40)) +
              uint64_t(std::clamp<int64_t>(intOr(args, "dynamic shared memory", 0), 0,
                                           int64_t(1) << 40));
    op.bytes = uint64_t(std::max<int64_t>(0, intOr(args, "bytes", 0)));
    op.direction = directionOf(name);
    op.event = index;
    trace.ops.push_back(std::move(op));
  } else if (cat == "cuda_runtime" || cat == "cuda_driver") {
    int64_t corr = intOr(args, "correlation", intOr(args, "correlation_id", -1));
    if (corr >= 0)
      trace.runtimeCalls[corr] = {ts, dur};
    if (name == "cudaStreamWaitEvent" || name == "cuStreamWaitEvent")
      trace.streamWaitCalls.push_back(ts);
    if (name == "cudaDeviceSynchronize" || name == "cuCtxSynchronize")
      trace.contextSyncCalls.push_back(ts);
    if (name.startswith("hip"))
      hip = true;
  } else if (cat == "cuda_sync") {
    llvm::StringRef kind = args ? args->getString("cuda_sync_kind").getValueOr(name) : name;
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
    s.recordCorrelation = intOr(args, "wait_on_cuda_event_record_corr_id", -1);
    s.correlation = intOr(args, "correlation", -1);
    s.ts = ts;
    trace.syncs.push_back(s);
  } else if (name.startswith("ProfilerStep#") && cat != "gpu_user_annotation") {
    int64_t number = 0;
    if (!name.drop_front(13).getAsInteger(10, number) && std::isfinite(ts) &&
        std::isfinite(dur))
      trace.steps.push_back({number, ts, dur});
  }
  return llvm::Error::success();
}

} // namespace

llvm::Expected<Trace> importer::parseTrace(llvm::StringRef text) {
  Trace trace;
  size_t i = skipSpace(text, 0);
  if (i >= text.size() || text[i] != '{')
    return fail("not a trace: a Kineto trace is a JSON object, this is not JSON");
  // The top-level object's keys, one by one: a "traceEvents" or
  // "deviceProperties" nested deeper (in distributedInfo, in an event's
  // args) is not the trace's.
  bool hip = false, sawEvents = false, sawDevices = false;
  ++i;
  for (;;) {
    i = skipSpace(text, i);
    while (i < text.size() && text[i] == ',')
      i = skipSpace(text, i + 1);
    if (i >= text.size())
      return fail("the trace is truncated");
    if (text[i] == '}')
      break;
    if (text[i] != '"')
      return fail("not a trace: the top-level object is not valid JSON");
    size_t keyEnd = skipValue(text, i);
    if (keyEnd == llvm::StringRef::npos)
      return fail("the trace is truncated");
    llvm::StringRef key = text.slice(i + 1, keyEnd - 1);
    i = skipSpace(text, keyEnd);
    if (i >= text.size() || text[i] != ':')
      return fail("not a trace: the top-level object is not valid JSON");
    i = skipSpace(text, i + 1);
    llvm::Expected<size_t> next = size_t(0);
    if (key == "deviceProperties" && !sawDevices) {
      sawDevices = true;
      next = forEachElement(text, i, "deviceProperties",
                            [&](llvm::StringRef entry, uint64_t index) {
                              return readDevice(entry, index, trace);
                            });
    } else if (key == "traceEvents" && !sawEvents) {
      sawEvents = true;
      next = forEachElement(text, i, "traceEvents",
                            [&](llvm::StringRef entry, uint64_t index) {
                              return readEvent(entry, index, trace, hip);
                            });
    } else {
      size_t end = skipValue(text, i);
      if (end == llvm::StringRef::npos)
        return fail("the trace is truncated (inside '" + printable(key) + "')");
      if (end == llvm::StringRef::npos - 1)
        return fail("'" + printable(key) + "' nests more than 64 levels deep");
      next = end;
    }
    if (!next)
      return next.takeError();
    i = *next;
  }
  if (!sawEvents)
    return fail("not a Chrome trace: it has no 'traceEvents'");
  if (hip)
    return fail("a ROCm trace (HIP runtime calls): pipec models CUDA devices only");
  if (trace.ops.empty())
    return fail("the trace has no GPU op (kernel, memcpy or memset); was it "
                "recorded with ProfilerActivity.CUDA?");
  // Several GPUs: the one with the most ops (one device, one pipeline).
  llvm::DenseMap<int64_t, uint64_t> perDevice;
  int64_t busiest = trace.ops.front().device;
  for (const GpuOp &op : trace.ops)
    if (++perDevice[op.device] > perDevice[busiest])
      busiest = op.device;
  trace.device = busiest;
  if (perDevice.size() > 1) {
    trace.otherDevices = perDevice.size() - 1;
    trace.ops.erase(std::remove_if(trace.ops.begin(), trace.ops.end(),
                                   [&](const GpuOp &op) { return op.device != busiest; }),
                    trace.ops.end());
  }
  for (GpuOp &op : trace.ops) {
    auto it = trace.runtimeCalls.find(op.correlation);
    if (it != trace.runtimeCalls.end())
      op.launchTs = it->second.first;
  }
  return trace;
}
