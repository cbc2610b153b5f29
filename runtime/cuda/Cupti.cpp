//===- Cupti.cpp - CUPTI's Activity API, loaded at run time ---------------===//

#include "runtime/cuda/Cupti.h"

#include <cupti.h>

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

using namespace pipec;
using namespace pipec::cuda;

namespace {

/// The entry points pipec uses, resolved with dlsym.
struct Api {
  decltype(&cuptiActivityRegisterCallbacks) registerCallbacks = nullptr;
  decltype(&cuptiActivityEnable) enable = nullptr;
  decltype(&cuptiActivityDisable) disable = nullptr;
  decltype(&cuptiActivityFlushAll) flushAll = nullptr;
  decltype(&cuptiActivityGetNextRecord) nextRecord = nullptr;
  decltype(&cuptiGetTimestamp) timestamp = nullptr;
  decltype(&cuptiGetStreamIdEx) streamId = nullptr;
  decltype(&cuptiGetGraphNodeId) nodeId = nullptr;
  decltype(&cuptiGetResultString) resultString = nullptr;
  decltype(&cuptiSubscribe) subscribe = nullptr;
  decltype(&cuptiEnableCallback) enableCallback = nullptr;
};

Api api;
runtime::CuptiStatus status;
std::mutex recordsMutex;
std::vector<runtime::DeviceRecord> records;
std::mutex clonesMutex;
std::vector<runtime::NodeClone> clones;
CUpti_SubscriberHandle subscriber = nullptr;

constexpr size_t kBufferBytes = size_t(8) << 20;
constexpr size_t kAlign = 8;

void CUPTIAPI bufferRequested(uint8_t **buffer, size_t *size, size_t *maxNumRecords) {
  *buffer = static_cast<uint8_t *>(std::aligned_alloc(kAlign, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;
  *maxNumRecords = 0;
}

void CUPTIAPI bufferCompleted(CUcontext, uint32_t, uint8_t *buffer, size_t, size_t validSize) {
  CUpti_Activity *record = nullptr;
  std::lock_guard<std::mutex> lock(recordsMutex);
  while (buffer && api.nextRecord(buffer, validSize, &record) == CUPTI_SUCCESS) {
    if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
        record->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
      auto *k = reinterpret_cast<const CUpti_ActivityKernel10 *>(record);
      records.push_back({k->streamId, k->graphNodeId, k->start, k->end});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
      auto *m = reinterpret_cast<const CUpti_ActivityMemcpy6 *>(record);
      records.push_back({m->streamId, m->graphNodeId, m->start, m->end});
    } else if (record->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
      auto *m = reinterpret_cast<const CUpti_ActivityMemset4 *>(record);
      records.push_back({m->streamId, m->graphNodeId, m->start, m->end});
    }
  }
  std::free(buffer);
}

/// CUPTI's resource callback: a node of a graph being instantiated was
/// cloned (CUpti_GraphData's node is the clone, originalNode the template's).
void CUPTIAPI resourceCallback(void *, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                               const void *data) {
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || id != CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED)
    return;
  const auto *resource = static_cast<const CUpti_ResourceData *>(data);
  const auto *graph = static_cast<const CUpti_GraphData *>(resource->resourceDescriptor);
  if (!graph)
    return;
  runtime::NodeClone c;
  if (api.nodeId(graph->originalNode, &c.original) != CUPTI_SUCCESS ||
      api.nodeId(graph->node, &c.clone) != CUPTI_SUCCESS)
    return;
  std::lock_guard<std::mutex> lock(clonesMutex);
  clones.push_back(c);
}

std::string resultText(CUptiResult result) {
  const char *text = nullptr;
  if (api.resultString)
    api.resultString(result, &text);
  return text ? text : "CUPTI error " + std::to_string(int(result));
}

llvm::Error failed(const char *call, CUptiResult result) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "%s: %s", call,
                                 resultText(result).c_str());
}

/// dlopen's candidates: $PIPEC_CUPTI, the loader's path, the toolkit's.
void *openLibrary(std::string &why) {
  std::vector<std::string> names;
  if (const char *path = std::getenv("PIPEC_CUPTI"))
    names.push_back(path);
  for (const char *name :
       {"libcupti.so", "libcupti.so.13", "libcupti.so.12",
        "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so", "/usr/local/cuda/lib64/libcupti.so",
        "/usr/local/cuda/lib/libcupti.so"})
    names.push_back(name);
  for (const std::string &name : names)
    if (void *handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL))
      return handle;
  const char *error = dlerror();
  why = error ? error : "libcupti.so not found";
  return nullptr;
}

template <typename F> bool resolve(void *handle, const char *symbol, F &out) {
  out = reinterpret_cast<F>(dlsym(handle, symbol));
  return out != nullptr;
}

void load() {
  void *handle = openLibrary(status.why);
  if (!handle)
    return;
  bool ok = resolve(handle, "cuptiActivityRegisterCallbacks", api.registerCallbacks) &&
            resolve(handle, "cuptiActivityEnable", api.enable) &&
            resolve(handle, "cuptiActivityDisable", api.disable) &&
            resolve(handle, "cuptiActivityFlushAll", api.flushAll) &&
            resolve(handle, "cuptiActivityGetNextRecord", api.nextRecord) &&
            resolve(handle, "cuptiGetTimestamp", api.timestamp) &&
            resolve(handle, "cuptiGetStreamIdEx", api.streamId) &&
            resolve(handle, "cuptiGetGraphNodeId", api.nodeId);
  (void)resolve(handle, "cuptiGetResultString", api.resultString);
  (void)resolve(handle, "cuptiSubscribe", api.subscribe);
  (void)resolve(handle, "cuptiEnableCallback", api.enableCallback);
  if (!ok) {
    status.why = "libcupti.so lacks an entry point pipec needs";
    return;
  }
  CUptiResult result = api.registerCallbacks(bufferRequested, bufferCompleted);
  if (result != CUPTI_SUCCESS) {
    status.why = "cuptiActivityRegisterCallbacks: " + resultText(result);
    return;
  }
  status.usable = true;
  status.why.clear();
  Dl_info info{};
  if (dladdr(reinterpret_cast<void *>(api.timestamp), &info) && info.dli_fname)
    status.library = info.dli_fname;
}

} // namespace

const runtime::CuptiStatus &cuda::cuptiStatus() {
  static std::once_flag once;
  std::call_once(once, load);
  return status;
}

uint64_t cuda::cuptiNow() {
  uint64_t t = 0;
  if (api.timestamp)
    api.timestamp(&t);
  return t;
}

llvm::Expected<uint32_t> cuda::cuptiStreamId(cudaStream_t stream) {
  uint32_t id = 0;
  if (CUptiResult r = api.streamId(nullptr, reinterpret_cast<CUstream>(stream), 0, &id);
      r != CUPTI_SUCCESS)
    return failed("cuptiGetStreamIdEx", r);
  return id;
}

llvm::Expected<uint64_t> cuda::cuptiNodeId(cudaGraphNode_t node) {
  uint64_t id = 0;
  if (CUptiResult r = api.nodeId(reinterpret_cast<CUgraphNode>(node), &id); r != CUPTI_SUCCESS)
    return failed("cuptiGetGraphNodeId", r);
  return id;
}

llvm::Error cuda::cuptiBeginClones() {
  if (!api.subscribe || !api.enableCallback)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "libcupti.so lacks cuptiSubscribe");
  if (!subscriber)
    if (CUptiResult r = api.subscribe(&subscriber, resourceCallback, nullptr);
        r != CUPTI_SUCCESS) {
      subscriber = nullptr;
      return failed("cuptiSubscribe", r);
    }
  {
    std::lock_guard<std::mutex> lock(clonesMutex);
    clones.clear();
  }
  if (CUptiResult r = api.enableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                         CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
      r != CUPTI_SUCCESS)
    return failed("cuptiEnableCallback", r);
  return llvm::Error::success();
}

llvm::Expected<std::vector<runtime::NodeClone>> cuda::cuptiEndClones() {
  if (CUptiResult r = api.enableCallback(0, subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                         CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED);
      r != CUPTI_SUCCESS)
    return failed("cuptiEnableCallback", r);
  std::lock_guard<std::mutex> lock(clonesMutex);
  return std::move(clones);
}

llvm::Error cuda::cuptiStartRecording() {
  {
    std::lock_guard<std::mutex> lock(recordsMutex);
    records.clear();
  }
  for (CUpti_ActivityKind kind : {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                  CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET})
    if (CUptiResult r = api.enable(kind); r != CUPTI_SUCCESS)
      return failed("cuptiActivityEnable", r);
  return llvm::Error::success();
}

llvm::Expected<std::vector<runtime::DeviceRecord>> cuda::cuptiStopRecording() {
  CUptiResult flushed = api.flushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  api.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  api.disable(CUPTI_ACTIVITY_KIND_MEMCPY);
  api.disable(CUPTI_ACTIVITY_KIND_MEMSET);
  if (flushed != CUPTI_SUCCESS)
    return failed("cuptiActivityFlushAll", flushed);
  std::lock_guard<std::mutex> lock(recordsMutex);
  return std::move(records);
}
