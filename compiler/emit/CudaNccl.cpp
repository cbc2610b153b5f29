//===- CudaNccl.cpp - NCCL in the emitted CUDA program --------------------===//

#include "compiler/emit/CudaNccl.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace pipec;
using llvm::formatv;

const char *const pipec::kNcclPrelude = R"(
// ---- NCCL, loaded at run time (libnccl.so.2): the calls of its C ABI ----
#include <dlfcn.h>
typedef struct ncclComm *ncclComm_t;
typedef int ncclResult_t;       // ncclSuccess = 0
constexpr int ncclInt8 = 0;     // ncclDataType_t
constexpr int ncclSum = 0;      // ncclRedOp_t
struct Nccl {
  ncclResult_t (*commInitAll)(ncclComm_t *, int, const int *);
  ncclResult_t (*commDestroy)(ncclComm_t);
  ncclResult_t (*commFinalize)(ncclComm_t);  // NCCL 2.14 on; null before
  ncclResult_t (*commGetAsyncError)(ncclComm_t, ncclResult_t *);
  ncclResult_t (*groupStart)();
  ncclResult_t (*groupEnd)();
  ncclResult_t (*allReduce)(const void *, void *, size_t, int, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*allGather)(const void *, void *, size_t, int, ncclComm_t, cudaStream_t);
  ncclResult_t (*reduceScatter)(const void *, void *, size_t, int, int, ncclComm_t,
                                cudaStream_t);
  ncclResult_t (*broadcast)(const void *, void *, size_t, int, int, ncclComm_t, cudaStream_t);
  const char *(*getErrorString)(ncclResult_t);
};
static Nccl nccl;

// False, having said why, when NCCL cannot be loaded: libnccl.so.2 from the
// library path, or the file PIPEC_NCCL names.
static bool loadNccl() {
  const char *path = std::getenv("PIPEC_NCCL");
  if (!path || !*path)
    path = "libnccl.so.2";
  void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    std::fprintf(stderr, "NCCL is missing (%s): this program's collectives need "
                         "libnccl.so.2 on the library path, or PIPEC_NCCL naming it\n",
                 dlerror());
    return false;
  }
  struct { const char *name; void **into; } calls[] = {
      {"ncclCommInitAll", reinterpret_cast<void **>(&nccl.commInitAll)},
      {"ncclCommDestroy", reinterpret_cast<void **>(&nccl.commDestroy)},
      {"ncclCommGetAsyncError", reinterpret_cast<void **>(&nccl.commGetAsyncError)},
      {"ncclGroupStart", reinterpret_cast<void **>(&nccl.groupStart)},
      {"ncclGroupEnd", reinterpret_cast<void **>(&nccl.groupEnd)},
      {"ncclAllReduce", reinterpret_cast<void **>(&nccl.allReduce)},
      {"ncclAllGather", reinterpret_cast<void **>(&nccl.allGather)},
      {"ncclReduceScatter", reinterpret_cast<void **>(&nccl.reduceScatter)},
      {"ncclBroadcast", reinterpret_cast<void **>(&nccl.broadcast)},
      {"ncclGetErrorString", reinterpret_cast<void **>(&nccl.getErrorString)}};
  for (auto &call : calls)
    if (!(*call.into = dlsym(library, call.name))) {
      std::fprintf(stderr, "NCCL is missing %s: %s is too old, or not NCCL\n", call.name,
                   path);
      return false;
    }
  nccl.commFinalize = reinterpret_cast<ncclResult_t (*)(ncclComm_t)>(
      dlsym(library, "ncclCommFinalize"));
  return true;
}

// Every NCCL call is checked, as every CUDA call is.
#define NCCL_CHECK(call)                                                       \
  do {                                                                         \
    ncclResult_t status_ = (call);                                             \
    if (status_ != 0) {                                                        \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                   nccl.getErrorString(status_));                              \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)
)";

Communicators::Communicators(const Schedule &s, const DeviceProfile &profile) : s(s) {
  const program::Pipeline &p = s.pipeline;
  partOf.assign(p.stages.size(), -1);
  std::map<std::vector<uint32_t>, uint32_t> slotOf; // a set's first slot
  uint32_t slots = 0;
  for (uint32_t k = 0; k < p.stages.size(); ++k) {
    const program::Stage &st = p.stages[k];
    if (!program::isCollective(st) || st.collective().group != k)
      continue;
    std::vector<uint32_t> devices;
    for (uint32_t r = 0; r < st.collective().parts; ++r)
      devices.push_back(s.streamPlan.streams[p.stages[k + r].stream].device);
    auto [it, added] = slotOf.try_emplace(devices, slots);
    if (added) {
      sets.push_back(devices);
      slots += static_cast<uint32_t>(devices.size());
    }
    for (uint32_t r = 0; r < st.collective().parts; ++r) {
      partOf[k + r] = static_cast<int32_t>(partStage.size());
      partStage.push_back(k + r);
      partComm.push_back(it->second + r);
      // Given a time, the bytes that take it by NCCL's formulas.
      partBytes.push_back(st.bytes ? std::max<uint64_t>(1, *st.bytes)
                                   : profile.collectiveBytes(st.collective().op, st.durationUs,
                                                             st.collective().parts));
    }
  }
}

void Communicators::writeTables(llvm::raw_ostream &os) const {
  const program::Pipeline &p = s.pipeline;
  auto list = [&](auto each, size_t n) {
    for (size_t i = 0; i < n; ++i)
      os << (i ? ", " : "") << each(i);
  };
  os << "// Collectives: a part per device each spans, one NCCL call each; the\n"
        "// communicators, one per set of devices, made once (ncclCommInitAll).\n";
  os << formatv("constexpr int kParts = {0};\n", partStage.size());
  os << "const int kPartDevice[kParts] = {";
  list([&](size_t i) { return s.streamPlan.streams[p.stages[partStage[i]].stream].device; },
       partStage.size());
  os << "};\nconst unsigned long long kPartBytes[kParts] = {";
  list([&](size_t i) { return std::to_string(partBytes[i]) + "ull"; }, partStage.size());
  os << "};\nconst int kPartComm[kParts] = {";
  list([&](size_t i) { return partComm[i]; }, partComm.size());
  // What each part runs, for a call table (CudaEmitter's writeCallTable):
  // 0 all-reduce, 1 all-gather, 2 reduce-scatter, 3 broadcast; its ranks.
  os << "};\nconst int kPartOp[kParts] = {";
  list(
      [&](size_t i) {
        switch (p.stages[partStage[i]].collective().op) {
        case CollectiveOp::AllReduce:
          return 0;
        case CollectiveOp::AllGather:
          return 1;
        case CollectiveOp::ReduceScatter:
          return 2;
        case CollectiveOp::Broadcast:
          break;
        }
        return 3;
      },
      partStage.size());
  os << "};\nconst int kPartRanks[kParts] = {";
  list([&](size_t i) { return p.stages[partStage[i]].collective().parts; }, partStage.size());
  size_t slots = 0;
  for (const std::vector<uint32_t> &set : sets)
    slots += set.size();
  os << formatv("};\nconstexpr int kComms = {0};\n", slots);
  os << formatv("constexpr int kCommSets = {0};\n", sets.size());
  os << "const int kCommSetSize[kCommSets] = {";
  list([&](size_t i) { return sets[i].size(); }, sets.size());
  os << "};\nconst int kCommSetDevices[kComms] = {";
  bool first = true;
  for (const std::vector<uint32_t> &set : sets)
    for (uint32_t d : set) {
      os << (first ? "" : ", ") << d;
      first = false;
    }
  os << R"(};
ncclComm_t comm[kComms];
static void makeComms() {
  for (int set = 0, slot = 0; set < kCommSets; slot += kCommSetSize[set++])
    NCCL_CHECK(nccl.commInitAll(&comm[slot], kCommSetSize[set], &kCommSetDevices[slot]));
}
// Torn down as NCCL asks: every communicator finalized in one group (a
// destroy alone, one communicator after another, can hang at exit on
// several GPUs: each waits for its peers' teardown), then destroyed.
static void destroyComms() {
  if (nccl.commFinalize) {
    NCCL_CHECK(nccl.groupStart());
    for (int i = 0; i < kComms; ++i)
      NCCL_CHECK(nccl.commFinalize(comm[i]));
    NCCL_CHECK(nccl.groupEnd());
  }
  for (int i = 0; i < kComms; ++i)
    NCCL_CHECK(nccl.commDestroy(comm[i]));
}
// NCCL's errors come asynchronously (a failed peer, a broken link): every
// wait polls each communicator, and gives up, naming the device, when
// nothing completes for PIPEC_NCCL_TIMEOUT seconds (300 by default) --
// where a failed peer would otherwise hang the program.
static double ncclTimeoutSeconds() {
  const char *given = std::getenv("PIPEC_NCCL_TIMEOUT");
  return given && *given ? std::atof(given) : 300.0;
}
static void pollComms(Clock::time_point since, const char *what) {
  for (int i = 0; i < kComms; ++i) {
    ncclResult_t async = 0;
    NCCL_CHECK(nccl.commGetAsyncError(comm[i], &async));
    if (async != 0 && async != 7) { // 7: ncclInProgress
      std::fprintf(stderr, "NCCL: the communicator of device %d failed while waiting for "
                   "%s: %s\n", kCommSetDevices[i], what, nccl.getErrorString(async));
      std::exit(1);
    }
  }
  if (std::chrono::duration<double>(Clock::now() - since).count() > ncclTimeoutSeconds()) {
    std::fprintf(stderr, "NCCL: nothing completed in %.0f s waiting for %s: a peer is "
                 "stuck or gone (PIPEC_NCCL_TIMEOUT sets the wait)\n",
                 ncclTimeoutSeconds(), what);
    std::exit(1);
  }
}
// Part `part`'s NCCL call on `stream` (a call table's row): as the
// statements of a short program make it.
[[maybe_unused]] static void runPart(int part, cudaStream_t stream, Buffers &b) {
  const unsigned long long bytes = kPartBytes[part];
  ncclComm_t c = comm[kPartComm[part]];
  switch (kPartOp[part]) {
  case 0:
    NCCL_CHECK(nccl.allReduce(b.send[part], b.recv[part], bytes, ncclInt8, ncclSum, c, stream));
    break;
  case 1:
    NCCL_CHECK(nccl.allGather(b.send[part], b.recv[part], bytes / kPartRanks[part], ncclInt8,
                              c, stream));
    break;
  case 2:
    NCCL_CHECK(nccl.reduceScatter(b.send[part], b.recv[part], bytes / kPartRanks[part],
                                  ncclInt8, ncclSum, c, stream));
    break;
  default:
    NCCL_CHECK(nccl.broadcast(b.send[part], b.recv[part], bytes, ncclInt8, 0, c, stream));
    break;
  }
}
// A host synchronisation, polling NCCL as it waits.
[[maybe_unused]] static void waitEvent(cudaEvent_t e) {
  const Clock::time_point since = Clock::now();
  cudaError_t status;
  while ((status = cudaEventQuery(e)) == cudaErrorNotReady) {
    pollComms(since, "an event");
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  CHECK(status);
}
// Every stream done (the end of a replay), polling NCCL as it waits.
[[maybe_unused]] static void waitStreams(const cudaStream_t *streams, int count) {
  const Clock::time_point since = Clock::now();
  for (int i = 0; i < count; ++i) {
    cudaError_t status;
    while ((status = cudaStreamQuery(streams[i])) == cudaErrorNotReady) {
      pollComms(since, "the replay's end");
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
    CHECK(status);
  }
}
)";
}

void Communicators::writeCall(llvm::raw_ostream &os, uint32_t v,
                              const std::string &stream) const {
  const uint32_t k = s.instances.stageOf(v);
  const program::Stage &st = s.pipeline.stages[k];
  const int32_t part = partOf[k];
  const std::string buffers = formatv("b.send[{0}], b.recv[{0}], kPartBytes[{0}]", part);
  const std::string ranks =
      st.collective().parts > 1 ? formatv(" / {0}", st.collective().parts).str() : "";
  const std::string tail = formatv("comm[kPartComm[{0}]], {1}", part, stream);
  switch (st.collective().op) {
  case CollectiveOp::AllReduce:
    os << "  NCCL_CHECK(nccl.allReduce(" << buffers << ", ncclInt8, ncclSum, " << tail
       << "));";
    break;
  case CollectiveOp::AllGather: // each rank gives its share of the whole
    os << "  NCCL_CHECK(nccl.allGather(" << buffers << ranks << ", ncclInt8, " << tail
       << "));";
    break;
  case CollectiveOp::ReduceScatter: // each rank keeps its share
    os << "  NCCL_CHECK(nccl.reduceScatter(" << buffers << ranks << ", ncclInt8, ncclSum, "
       << tail << "));";
    break;
  case CollectiveOp::Broadcast: // from rank 0
    os << "  NCCL_CHECK(nccl.broadcast(" << buffers << ", ncclInt8, 0, " << tail << "));";
    break;
  }
}
