//===- Trace.cpp - Reading a Kineto trace ---------------------------------===//

#include "runtime/import/Trace.h"

#include "llvm/Support/JSON.h"
#include "compiler/support/ReadFile.h"

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>

using namespace pipec;
using namespace pipec::importer;

namespace {

llvm::Error fail(const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), why.str());
}

/// The whole file, gunzipped when it starts with gzip's magic bytes; never
/// more than kMaxTraceBytes.
llvm::Expected<std::string> readText(llvm::StringRef path) {
  std::FILE *f = std::fopen(path.str().c_str(), "rb");
  if (!f)
    return fail("cannot read '" + path + "': " + std::strerror(errno));
  unsigned char magic[2] = {0, 0};
  size_t got = std::fread(magic, 1, 2, f);
  std::fclose(f);
  bool gzipped = got == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
  std::string text;
  if (!gzipped)
    return readBounded(path, kMaxTraceBytes, path);
  gzFile z = gzopen(path.str().c_str(), "rb");
  if (!z)
    return fail("cannot read '" + path + "'");
  char chunk[1 << 16];
  for (;;) {
    int n = gzread(z, chunk, sizeof chunk);
    if (n < 0) {
      int code = 0;
      std::string why = gzerror(z, &code);
      gzclose(z);
      return fail("'" + path + "' is not a valid gzip file: " + why);
    }
    if (n == 0)
      break;
    text.append(chunk, size_t(n));
    if (text.size() > kMaxTraceBytes) {
      gzclose(z);
      return fail("'" + path + "' is too large uncompressed (over 1024 MiB); "
                  "record fewer steps");
    }
  }
  // gzread stops quietly at a truncated stream: gzclose, or the buffer
  // state, tells.
  int code = 0;
  const char *why = gzerror(z, &code);
  bool truncated = code != Z_OK && code != Z_STREAM_END;
  std::string message = why ? why : "";
  if (gzclose(z) != Z_OK || truncated)
    return fail("'" + path + "' is a truncated or damaged gzip file" +
                (message.empty() ? "" : ": " + message));
  return text;
}

/// The position after `"key"` and its ':' at any depth, or npos.
size_t findKey(llvm::StringRef text, llvm::StringRef key) {
  std::string quoted = "\"" + key.str() + "\"";
  size_t at = 0;
  while ((at = text.find(quoted, at)) != llvm::StringRef::npos) {
    size_t p = at + quoted.size();
    while (p < text.size() && std::isspace(static_cast<unsigned char>(text[p])))
      ++p;
    if (p < text.size() && text[p] == ':')
      return p + 1;
    at = p;
  }
  return llvm::StringRef::npos;
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

/// x * y * z of a `[x, y, z]` array.
uint64_t product(const llvm::json::Object *args, llvm::StringRef key) {
  if (!args)
    return 1;
  const llvm::json::Array *a = args->getArray(key);
  if (!a)
    return 1;
  uint64_t p = 1;
  for (const llvm::json::Value &v : *a)
    if (auto n = v.getAsInteger())
      p *= uint64_t(std::max<int64_t>(1, *n));
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
    return fail("'" + path + "': " + llvm::toString(trace.takeError()));
  return trace;
}

llvm::Expected<Trace> importer::parseTrace(llvm::StringRef text) {
  Trace trace;
  llvm::StringRef trimmed = text.ltrim();
  if (trimmed.empty() || trimmed.front() != '{')
    return fail("not a trace: a Kineto trace is a JSON object, this is not JSON");

  // deviceProperties: small, parsed whole.
  size_t props = findKey(text, "deviceProperties");
  if (props != llvm::StringRef::npos) {
    size_t end = endOfValue(text, props);
    if (end == llvm::StringRef::npos)
      return fail("the trace is truncated (inside 'deviceProperties')");
    if (end == llvm::StringRef::npos - 1)
      return fail("'deviceProperties' nests too deeply");
    llvm::Expected<llvm::json::Value> v = llvm::json::parse(text.slice(props, end));
    if (!v)
      return fail("'deviceProperties' is not valid JSON: " + llvm::toString(v.takeError()));
    if (const llvm::json::Array *a = v->getAsArray())
      for (const llvm::json::Value &d : *a)
        if (const llvm::json::Object *o = d.getAsObject()) {
          DeviceInfo info;
          if (auto n = o->getString("name"))
            info.name = n->str();
          if (o->get("gcnArchName") || llvm::StringRef(info.name).contains("AMD"))
            return fail("a ROCm trace (device '" + info.name +
                        "'): pipec models CUDA devices only");
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
        }
  }

  size_t events = findKey(text, "traceEvents");
  if (events == llvm::StringRef::npos)
    return fail("not a Chrome trace: it has no 'traceEvents'");
  size_t i = events;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])))
    ++i;
  if (i >= text.size() || text[i] != '[')
    return fail("'traceEvents' is not an array");
  ++i;
  uint64_t index = 0;
  bool hip = false;
  for (;;) {
    while (i < text.size() && (std::isspace(static_cast<unsigned char>(text[i])) ||
                               text[i] == ','))
      ++i;
    if (i >= text.size())
      return fail("the trace is truncated (inside 'traceEvents')");
    if (text[i] == ']')
      break;
    size_t end = endOfValue(text, i);
    if (end == llvm::StringRef::npos)
      return fail("the trace is truncated (inside 'traceEvents', event " +
                  llvm::Twine(index) + ")");
    if (end == llvm::StringRef::npos - 1)
      return fail("event " + llvm::Twine(index) + " nests more than 64 levels deep");
    llvm::Expected<llvm::json::Value> v = llvm::json::parse(text.slice(i, end));
    if (!v)
      return fail("event " + llvm::Twine(index) + " is not valid JSON: " +
                  llvm::toString(v.takeError()));
    i = end;
    ++index;
    const llvm::json::Object *e = v->getAsObject();
    if (!e)
      continue;
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
      op.name = name.str();
      op.stream = intOr(args, "stream", intOr(e, "tid", 0));
      op.ts = ts;
      op.dur = std::max(0.0, dur);
      op.correlation = intOr(args, "correlation", intOr(args, "correlation_id", -1));
      op.device = intOr(args, "device", intOr(e, "pid", 0));
      op.blocks = product(args, "grid");
      op.threads = product(args, "block");
      op.regs = uint32_t(std::max<int64_t>(0, intOr(args, "registers per thread", 0)));
      op.smem = uint64_t(std::max<int64_t>(0, intOr(args, "shared memory", 0))) +
                uint64_t(std::max<int64_t>(0, intOr(args, "dynamic shared memory", 0)));
      op.bytes = uint64_t(std::max<int64_t>(0, intOr(args, "bytes", 0)));
      op.direction = directionOf(name);
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
        continue;
      s.stream = intOr(args, "stream", -1);
      s.waitOnStream = intOr(args, "wait_on_stream", -1);
      s.recordCorrelation = intOr(args, "wait_on_cuda_event_record_corr_id", -1);
      s.correlation = intOr(args, "correlation", -1);
      s.ts = ts;
      trace.syncs.push_back(s);
    } else if (name.startswith("ProfilerStep#") && cat != "gpu_user_annotation") {
      int64_t number = 0;
      if (!name.drop_front(13).getAsInteger(10, number))
        trace.steps.push_back({number, ts, dur});
    }
  }
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
