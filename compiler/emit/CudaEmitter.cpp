//===- CudaEmitter.cpp - A standalone CUDA C++ program for a schedule -----===//
//
// The program performs exactly the schedule: the stream lowering as
// straight-line code, one CUDA call per host call of the schedule; the graph
// lowering as one explicit graph with exactly the schedule's edges. It needs
// nothing but the CUDA toolkit: `nvcc -O2 -arch=sm_90 pipeline.cu -o pipeline`.
//
//===----------------------------------------------------------------------===//

#include "compiler/emit/CudaNccl.h"
#include "compiler/emit/Emitters.h"
#include "compiler/emit/SpinShapeText.h"

#include "compiler/lower/CallPlan.h"

#include "compiler/schedule/Schedule.h"
#include "compiler/support/Decimal.h"
#include "compiler/support/Overloaded.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>
#include <iterator>
#include <optional>

using namespace pipec;
using llvm::formatv;

namespace {

/// A call table's row kinds (writeCallTable): the emitted program's `enum
/// Op` is written from kTableOpNames, in this order.
enum class TableOp : uint8_t {
  SetDevice,
  Dispatch,
  Kernel,
  Copy,
  PeerCopy,
  Memset,
  HostFunc,
  Collective,
  Record,
  Wait,
  Sync,
  Cpu,
  GroupStart,
  GroupEnd,
  GraphLaunch,
  Post,
  Await,
};
constexpr const char *kTableOpNames[] = {
    "SetDevice",  "Dispatch",   "Kernel",      "Copy", "PeerCopy", "Memset",
    "HostFunc",   "Collective", "Record",      "Wait", "Sync",     "Cpu",
    "GroupStart", "GroupEnd",   "GraphLaunch", "Post", "Await",
};
static_assert(std::size(kTableOpNames) == size_t(TableOp::Await) + 1,
              "a name for every TableOp");
// The emitted placeOf switches on a row's place kind as lower::Place has them.
static_assert(lower::Place::Declared == 0 && lower::Place::Device == 1 &&
                  lower::Place::Device2 == 2 && lower::Place::Host == 3 &&
                  lower::Place::Nothing == 4,
              "placeOf's cases are lower::Place::Kind's values");

/// A C++ identifier made of a pipeline's name.
std::string identifier(llvm::StringRef name) {
  std::string out = "pipeline_";
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return out;
}

/// `text` as it may stand in a `//` comment: control bytes (a newline would
/// end the comment and let the rest be compiled) and backslashes (a final
/// one would continue it) escaped as C does.
std::string commentText(llvm::StringRef text) {
  std::string out;
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\\')
      out += "\\\\";
    else if (u < 0x20 || u == 0x7f)
      out += llvm::formatv("\\x{0:x-2}", unsigned(u)).str();
    else
      out += c;
  }
  return out;
}

const char *kPrelude = R"(#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <cstdlib>
#include <thread>
#include <vector>

// Every CUDA call is checked: a failure names the call and stops the program.
#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t status_ = (call);                                              \
    if (status_ != cudaSuccess) {                                              \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,       \
                   cudaGetErrorString(status_));                               \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

// A kernel stage: every block busy-waits its share of the stage's time on
// %globaltimer (spinLaunch, below, works out how much, and the dynamic shared
// memory it is launched with). `touch`, when not null, is a declared buffer
// the stage accesses: one thread writes a byte of it, so the kernel uses the
// memory it declares.
__global__ void spin(unsigned long long nanoseconds, unsigned char *touch) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < nanoseconds);
  if (touch && blockIdx.x == 0 && threadIdx.x == 0)
    touch[0] = 1;
}

)";

/// How a kernel stage is launched, at run time: the same text pipec's CUDA
/// backend is compiled from (SpinShape.inc), then its use here.
const char *kSpinLaunch = R"(
// A kernel stage as written, and what the device model counts for it.
struct KernelStage {
  const char *name;
  double microseconds;            // the whole kernel, alone on the device
  unsigned blocks, threads;
  unsigned long long sharedBytes; // smem=
  unsigned modelBlocksPerSM;      // blocks per SM the model fits (regs= too)
};
// What it is launched with on this device.
struct SpinLaunch {
  unsigned long long nanoseconds; // per block: the kernel's time over its waves
  unsigned long long sharedBytes; // dynamic shared memory, padded for regs=
};

static int deviceAttribute(cudaDeviceAttr attribute) {
  int device = 0, value = 0;
  CHECK(cudaGetDevice(&device));
  CHECK(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

// Lets the spin kernel have all the shared memory a block may ask, from the
// largest carveout: smem= beyond 48 KiB, and the padding that stands for
// regs=, need it.
static void prepareSpin() {
  CHECK(cudaFuncSetAttribute(spin, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             deviceAttribute(cudaDevAttrMaxSharedMemoryPerBlockOptin)));
  CHECK(cudaFuncSetAttribute(spin, cudaFuncAttributePreferredSharedMemoryCarveout,
                             cudaSharedmemCarveoutMaxShared));
}

// The occupancy calculator's blocks per SM for the spin kernel.
static SpinLaunch spinLaunch(const KernelStage &k) {
  auto occupancy = [&](unsigned long long bytes) {
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, spin, k.threads, bytes) !=
        cudaSuccess) {
      (void)cudaGetLastError();
      return 0u;
    }
    return static_cast<unsigned>(blocks);
  };
  bool exact = true;
  unsigned long long shared = pipec_spin::spinSharedMemory(
      k.modelBlocksPerSM, k.sharedBytes,
      deviceAttribute(cudaDevAttrMaxSharedMemoryPerBlockOptin), occupancy, &exact);
  unsigned perSM = occupancy(shared);
  if (!exact)
    std::fprintf(stderr, "note: kernel stage '%s' fits %u block(s) per SM on this device, "
                 "the model %u\n", k.name, perSM, k.modelBlocksPerSM);
  unsigned long long waves = pipec_spin::spinWaves(
      k.blocks, perSM, deviceAttribute(cudaDevAttrMultiProcessorCount));
  return {pipec_spin::spinBlockNanoseconds(k.microseconds, waves), shared};
}

// An idle GPU clocks down (an H200 to 345 MHz): a fifth of a second of work
// on every SM brings its clocks up before anything is timed.
static void warmUp() {
  spin<<<deviceAttribute(cudaDevAttrMultiProcessorCount) * 4, 256>>>(200000000ull, nullptr);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  std::printf("warmed up: 200 ms of work on every SM\n");
}
)";

/// Host stages, timing, buffers.
const char *kRuntime = R"(
// Busy host work: a cpu stage, the dispatch (issue=) before a launch.
static void spinHost(double us) {
  auto until = std::chrono::steady_clock::now() +
               std::chrono::nanoseconds(static_cast<long long>(us * 1000));
  while (std::chrono::steady_clock::now() < until) {
  }
}

// A host stage: spins on the host for the microseconds userData points to.
void CUDART_CB hostSpin(void *microseconds) {
  spinHost(*static_cast<const double *>(microseconds));
}

using Clock = std::chrono::steady_clock;
static double microsSince(Clock::time_point t) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

// Nearest-rank percentile, q in (0, 1].
static double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(q * v.size() + 0.999999);
  return v[std::min(v.size(), std::max<size_t>(rank, 1)) - 1];
}

// One pinned host buffer and one device buffer per copy stage (two device
// buffers for d2d), allocated once, outside the timed region.
struct Buffers {
  std::vector<void *> host, device, device2;
  // The declared buffers (language version 2), every ring slot.
  std::vector<void *> declared;
  std::vector<int> declaredOnHost;
  // `deviceOf` (several devices): the device each one's memory is on.
  // `peerOf`: the device a p2p copy's destination is on.
  void allocate(const unsigned long long *bytes, const int *direction, int n,
                const int *deviceOf = nullptr, const int *peerOf = nullptr) {
    host.assign(n, nullptr);
    device.assign(n, nullptr);
    device2.assign(n, nullptr);
    for (int i = 0; i < n; ++i) {
      if (deviceOf)
        CHECK(cudaSetDevice(deviceOf[i]));
      CHECK(cudaMalloc(&device[i], bytes[i]));
      if (direction[i] == 4 && peerOf)
        CHECK(cudaSetDevice(peerOf[i]));
      if (direction[i] == 2 || direction[i] == 4)
        CHECK(cudaMalloc(&device2[i], bytes[i]));
      else if (direction[i] != 3) // a memset needs device memory only
        CHECK(cudaMallocHost(&host[i], bytes[i]));
    }
  }
  // Buffer i: slots[i] slots of bytes[i] each, one after another in
  // `declared`.
  void allocateDeclared(const unsigned long long *bytes, const unsigned *slots,
                        const int *onHost, int n, const int *deviceOf = nullptr) {
    declared.clear();
    declaredOnHost.clear();
    for (int i = 0; i < n; ++i)
      for (unsigned j = 0; j < slots[i]; ++j) {
        if (deviceOf)
          CHECK(cudaSetDevice(deviceOf[i]));
        declared.push_back(nullptr);
        declaredOnHost.push_back(onHost[i]);
        if (onHost[i])
          CHECK(cudaMallocHost(&declared.back(), bytes[i]));
        else
          CHECK(cudaMalloc(&declared.back(), bytes[i]));
      }
  }
  // A collective's parts: what each sends and receives, on its device.
  std::vector<void *> send, recv;
  void allocateParts(const unsigned long long *bytes, int n, const int *deviceOf) {
    send.assign(n, nullptr);
    recv.assign(n, nullptr);
    for (int i = 0; i < n; ++i) {
      CHECK(cudaSetDevice(deviceOf[i]));
      CHECK(cudaMalloc(&send[i], bytes[i]));
      CHECK(cudaMalloc(&recv[i], bytes[i]));
    }
  }
  void release() {
    for (void *p : send) CHECK(cudaFree(p));
    for (void *p : recv) CHECK(cudaFree(p));
    for (void *p : host) if (p) CHECK(cudaFreeHost(p));
    for (void *p : device) if (p) CHECK(cudaFree(p));
    for (void *p : device2) if (p) CHECK(cudaFree(p));
    for (size_t i = 0; i < declared.size(); ++i)
      CHECK(declaredOnHost[i] ? cudaFreeHost(declared[i]) : cudaFree(declared[i]));
  }
};
)";

class Writer {
public:
  Writer(const Schedule &s, const DeviceProfile &profile, llvm::raw_ostream &os,
         size_t callTableFrom)
      : s(s), profile(profile), os(os), name(identifier(s.pipeline.name)),
        callTableFrom(callTableFrom) {
    // Copy stages, numbered for the buffers.
    copyIndex.assign(s.pipeline.stages.size(), -1);
    for (size_t k = 0; k < s.pipeline.stages.size(); ++k)
      if (s.pipeline.stages[k].kind() == StageKind::Copy ||
          s.pipeline.stages[k].kind() == StageKind::Memset)
        copyIndex[k] = copies++;
    if (program::hasCollectives(s.pipeline))
      comms.emplace(s, profile);
    for (const program::Buffer &b : s.pipeline.buffers) {
      declaredBase.push_back(declaredSlots);
      declaredSlots += b.slots;
    }
    // What the per-instance code repeats, made once: each stage's
    // identifier, each stream's `stream[i]`.
    for (size_t k = 0; k < s.pipeline.stages.size(); ++k) {
      std::string id;
      for (char c : s.pipeline.stages[k].name)
        id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
      ids.push_back(id + "_" + std::to_string(k));
    }
    for (size_t i = 0; i < s.streamPlan.streams.size(); ++i)
      streamRefs.push_back("stream[" + std::to_string(i) + "]");
  }

  void pipeline() {
    const size_t n = s.instances.size();
    os << formatv("\n// ---- pipeline '{0}': {1} stage instances, {2} "
                  "iteration(s), lowered to {3} ----\n",
                  s.pipeline.name, n, s.pipeline.iterations, spelling(s.lowering));
    os << "namespace " << name << " {\n\n";
    os << formatv("constexpr int kStreams = {0};\n", s.streamPlan.streams.size());
    os << formatv("constexpr int kCopies = {0};\n", std::max(copies, 1));
    os << "// Stream priorities: high = the device's greatest, low = its least,\n"
       << "// normal = the midpoint rounded towards low; raw ones are clamped.\n";
    os << "enum class Priority { High, Normal, Low, Raw };\n";
    os << "struct StreamSpec { const char *name; Priority priority; int raw; };\n";
    os << "const StreamSpec kStreamSpecs[kStreams] = {\n";
    for (const program::Stream &st : s.streamPlan.streams) {
      const char *cls = st.priorityClass == program::PriorityClass::High  ? "High"
                        : st.priorityClass == program::PriorityClass::Low ? "Low"
                        : st.priorityClass == program::PriorityClass::Raw ? "Raw"
                                                                          : "Normal";
      os << formatv("    {{\"{0}\", Priority::{1}, {2}},\n", st.name, cls, st.rawPriority);
    }
    os << "};\n\n";
    // Stage constants, by stage.
    os << "// Stage work: kernel and host times, copy sizes.\n";
    for (size_t k = 0; k < s.pipeline.stages.size(); ++k) {
      const program::Stage &st = s.pipeline.stages[k];
      std::string id = "k" + stageId(k);
      auto bytes = [&](llvm::StringRef what) {
        os << formatv("constexpr unsigned long long {0}Bytes = {1}ull; // {2}\n", id,
                      lower::stageBuffers(st, profile).bytes, what);
      };
      // hostSpin's argument, spinHost's, NCCL's time (its bytes are the
      // part tables').
      auto microseconds = [&] {
        os << formatv("double {0}Microseconds = {1}; // {2}\n", id,
                      formatv("{0:f3}", st.durationUs).str(), spelling(st.kind()));
      };
      std::visit(Overloaded{
                     [&](const program::KernelWork &k) {
                       os << formatv("const KernelStage {0} = {{\"{1}\", {2}, {3}, {4}, "
                                     "{5}ull, {6}};\n"
                                     "SpinLaunch {0}Launch; // set by prepare()\n",
                                     id, st.name, formatv("{0:f3}", st.durationUs).str(),
                                     k.blocks, k.threads, k.smemBytes,
                                     profile.blocksPerSM(k.threads, k.smemBytes, k.regs));
                     },
                     [&](const program::CopyWork &c) {
                       bytes((llvm::Twine("copy ") + spelling(c.direction)).str());
                     },
                     [&](const program::MemsetWork &) { bytes("memset "); },
                     [&](const program::HostWork &) { microseconds(); },
                     [&](const program::CpuWork &) { microseconds(); },
                     [&](const program::CollectiveWork &) { microseconds(); },
                 },
                 st.work);
      if (st.issueUs > 0)
        os << formatv(
            "[[maybe_unused]] constexpr double {0}Issue = {1}; // dispatch, each launch\n", id,
            formatv("{0:f3}", st.issueUs).str());
    }
    os << "// Each kernel stage's launch on this device (SpinShape.inc).\n"
          "static void prepare() {\n";
    for (size_t k = 0; k < s.pipeline.stages.size(); ++k)
      if (s.pipeline.stages[k].kind() == StageKind::Kernel)
        os << "  k" << stageId(k) << "Launch = spinLaunch(k" << stageId(k) << ");\n";
    os << "}\n";
    os << "const unsigned long long kCopyBytes[kCopies] = {";
    for (size_t k = 0, i = 0; k < s.pipeline.stages.size(); ++k)
      if (copyIndex[k] >= 0)
        os << (i++ ? ", " : "") << "k" << stageId(k) << "Bytes";
    if (!copies)
      os << "1";
    os << "};\n";
    os << "const int kCopyDirection[kCopies] = {";
    for (size_t k = 0, i = 0; k < s.pipeline.stages.size(); ++k)
      if (copyIndex[k] >= 0) {
        const program::Stage &st = s.pipeline.stages[k];
        os << (i++ ? ", " : "")
           << (st.kind() == StageKind::Memset ? 3
               : st.copy().direction == CopyDirection::P2P
                   ? 4
                   : static_cast<int>(st.copy().direction));
      }
    if (!copies)
      os << "0";
    os << "}; // 0 h2d, 1 d2h, 2 d2d, 3 memset, 4 p2p\n\n";
    // Per buffer, not per slot: rings of thousands of slots stay one line.
    os << "// The declared buffers: buffer i is kBufferSlots[i] slots of\n"
          "// kBufferBytes[i] bytes; slot j of it is b.declared[its first index + j].\n";
    os << formatv("constexpr int kBuffers = {0};\n", s.pipeline.buffers.size());
    os << "const unsigned long long kBufferBytes[kBuffers + 1] = {";
    for (const program::Buffer &b : s.pipeline.buffers)
      os << b.bytes << "ull, ";
    os << "0};\n";
    os << "const unsigned kBufferSlots[kBuffers + 1] = {";
    for (const program::Buffer &b : s.pipeline.buffers)
      os << b.slots << ", ";
    os << "0};\n";
    os << "const int kBufferOnHost[kBuffers + 1] = {";
    for (const program::Buffer &b : s.pipeline.buffers)
      os << (b.host ? 1 : 0) << ", ";
    os << "0};\n";
    if (several())
      deviceTables();
    for (size_t i = 0; i < s.pipeline.buffers.size(); ++i)
      os << formatv("// buffer '{0}': b.declared[{1}] .. b.declared[{2}]\n",
                    s.pipeline.buffers[i].name, declaredBase[i],
                    declaredBase[i] + s.pipeline.buffers[i].slots - 1);
    os << '\n';

    if (comms)
      comms->writeTables(os);
    if (s.lowering == Lowering::Streams)
      streams();
    else
      graph();
    os << "\n} // namespace " << name << "\n";
  }

private:
  const std::string &stageId(size_t k) const { return ids[k]; }

  /// Instance v's name, as the comments give it: `Stage[3]`.
  void writeLabel(uint32_t v) { s.instances.writeName(os, v); }
  /// A cpu stage: the host spins for its time, in both lowerings.
  void writeCpu(uint32_t v) {
    os << "  spinHost(k" << stageId(s.instances.stageOf(v)) << "Microseconds); // ";
    writeLabel(v);
    os << " (cpu)\n";
  }

  /// A place as the program names it: `b.declared[i]` for a declared
  /// buffer's slot, else stage k's own buffer (`b.device[c]`, ...).
  void writePlace(const lower::Place &p, uint32_t k) {
    switch (p.kind) {
    case lower::Place::Declared:
      os << "b.declared[" << Decimal(declaredBase[p.buffer] + p.slot) << ']';
      return;
    case lower::Place::Device:
      os << "b.device[" << copyIndex[k] << ']';
      return;
    case lower::Place::Device2:
      os << "b.device2[" << copyIndex[k] << ']';
      return;
    case lower::Place::Host:
      os << "b.host[" << copyIndex[k] << ']';
      return;
    case lower::Place::Nothing:
      os << "nullptr";
      return;
    }
  }

  /// The declared buffer a kernel instance touches, as a pointer the spin
  /// kernel takes; "nullptr" when it declares none.
  void writeTouch(uint32_t v) {
    const lower::Place p = lower::kernelPlace(s, v);
    if (p.kind == lower::Place::Nothing) {
      os << "nullptr";
      return;
    }
    os << "static_cast<unsigned char *>(";
    writePlace(p, s.instances.stageOf(v));
    os << ')';
  }

  /// A place as a table row holds it: its kind (lower::Place::Kind) and
  /// index into the array of that kind.
  std::pair<int, int64_t> placeRow(const lower::Place &p, uint32_t k) const {
    const int kind = int(p.kind); // placeOf's switch, in the emitted program
    switch (p.kind) {
    case lower::Place::Declared:
      return {kind, int64_t(declaredBase[p.buffer]) + p.slot};
    case lower::Place::Device:
    case lower::Place::Device2:
    case lower::Place::Host:
      return {kind, copyIndex[k]};
    case lower::Place::Nothing:
      break;
    }
    return {kind, -1};
  }

  /// A long schedule's calls as a table walked by a loop: nvcc's time and
  /// memory grow with the statements of a function, a table's rows cost it
  /// next to nothing (80,000 instances build in seconds, not hours). The
  /// same calls in the same order as the statements a short one gets.
  void writeCallTable(size_t calls) {
    const program::Pipeline &p = s.pipeline;
    os << "// Per stage, what its calls take.\n"
          "struct StageWork {\n"
          "  const KernelStage *kernel; SpinLaunch *launch; double issue;\n"
          "  unsigned long long bytes; cudaMemcpyKind kind; double *micros;\n"
          "  int peer, device;\n"
          "};\n";
    os << formatv("const StageWork kWork[{0}] = {{\n", std::max<size_t>(1, p.stages.size()));
    for (size_t k = 0; k < p.stages.size(); ++k) {
      const program::Stage &st = p.stages[k];
      const std::string id = "k" + stageId(k);
      const bool kernel = st.kind() == StageKind::Kernel;
      const bool sized = st.kind() == StageKind::Copy || st.kind() == StageKind::Memset;
      const bool micros = st.kind() == StageKind::Host || st.kind() == StageKind::Cpu ||
                          st.kind() == StageKind::Collective;
      const char *kind = "cudaMemcpyDeviceToDevice";
      int peer = 0;
      if (st.kind() == StageKind::Copy) {
        kind = st.copy().direction == CopyDirection::H2D   ? "cudaMemcpyHostToDevice"
               : st.copy().direction == CopyDirection::D2H ? "cudaMemcpyDeviceToHost"
                                                           : "cudaMemcpyDeviceToDevice";
        peer = int(st.copy().peerDevice);
      }
      os << "    {" << (kernel ? "&" + id : "nullptr") << ", "
         << (kernel ? "&" + id + "Launch" : "nullptr") << ", "
         << (st.issueUs > 0 ? id + "Issue" : "0.0") << ", " << (sized ? id + "Bytes" : "0ull")
         << ", " << kind << ", " << (micros ? "&" + id + "Microseconds" : "nullptr") << ", "
         << peer << ", " << (st.stream >= 0 ? deviceOfStream(uint32_t(st.stream)) : 0u)
         << "}, // " << st.name << "\n";
    }
    if (p.stages.empty())
      os << "    {}\n";
    os << "};\n";
    os << "enum Op : unsigned char {";
    for (size_t i = 0; i < std::size(kTableOpNames); ++i)
      os << (i ? ", " : " ") << kTableOpNames[i];
    os << R"( };
// One host call: what it does, on which stream, its stage (or event,
// device, collective part) and the places it writes and reads
// (0 declared, 1 device, 2 device2, 3 host, 4 none: placeOf).
struct CallRow {
  unsigned char op, dstKind, srcKind, thread;
  int stream, a;
  long long dst, src;
};
)";
    os << formatv("const CallRow kCalls[{0}] = {{\n", calls);
    lower::forEachStreamCall(s, &*recorded, threadsOrNull(), [&](const lower::Call &c) {
      const int stream = c.stream == kHostStream ? -1 : int(c.stream);
      TableOp op = TableOp::SetDevice;
      int64_t a = 0;
      const lower::Place none;
      std::pair<int, int64_t> dst = placeRow(none, 0), src = dst;
      const uint32_t k = c.kind == lower::Call::Launch || c.kind == lower::Call::Dispatch ||
                                 c.kind == lower::Call::Cpu
                             ? s.instances.stageOf(c.instance)
                             : 0;
      switch (c.kind) {
      case lower::Call::SetDevice:
        op = TableOp::SetDevice, a = c.device;
        break;
      case lower::Call::Dispatch:
        op = TableOp::Dispatch, a = k;
        break;
      case lower::Call::Launch:
        a = k;
        switch (c.work) {
        case lower::Work::Kernel:
          op = TableOp::Kernel, dst = placeRow(lower::kernelPlace(s, c.instance), k);
          break;
        case lower::Work::Copy:
        case lower::Work::PeerCopy: {
          const lower::CopyPlaces places = lower::copyPlaces(s, c.instance);
          op = c.work == lower::Work::Copy ? TableOp::Copy : TableOp::PeerCopy;
          dst = placeRow(places.dst, k), src = placeRow(places.src, k);
          break;
        }
        case lower::Work::Memset:
          op = TableOp::Memset, dst = placeRow(lower::memsetPlace(s, c.instance), k);
          break;
        case lower::Work::HostFunc:
          op = TableOp::HostFunc;
          break;
        case lower::Work::Collective:
          op = TableOp::Collective, a = comms->partOfStage(k);
          break;
        case lower::Work::HostThread:
          llvm_unreachable("a cpu stage is a Cpu call, not a launch");
        }
        break;
      case lower::Call::Record:
        op = TableOp::Record, a = c.event;
        break;
      case lower::Call::Wait:
        op = TableOp::Wait, a = c.event;
        break;
      case lower::Call::Sync:
        op = TableOp::Sync, a = c.event;
        break;
      case lower::Call::Cpu:
        op = TableOp::Cpu, a = k;
        break;
      case lower::Call::Join:
        if (c.event == lower::kNoToken)
          return true; // one thread issues every device's calls: nothing to do
        op = TableOp::Await, a = c.event;
        break;
      case lower::Call::Post:
        op = TableOp::Post, a = c.event;
        break;
      case lower::Call::Await:
        op = TableOp::Await, a = c.event;
        break;
      case lower::Call::GroupStart:
        op = TableOp::GroupStart;
        break;
      case lower::Call::GroupEnd:
        op = TableOp::GroupEnd;
        break;
      case lower::Call::RecordedLaunch:
        op = TableOp::GraphLaunch, a = c.segment;
        break;
      case lower::Call::GraphLaunch:
        llvm_unreachable("a graph launch in the stream lowering");
      }
      os << "    {" << int(op) << ", " << dst.first << ", " << src.first << ", " << c.thread
         << ", " << stream << ", " << a << ", " << dst.second << ", " << src.second << "},\n";
      return true;
    });
    os << "};\n";
    os << R"(static void *placeOf(unsigned char kind, long long i, Buffers &b) {
  switch (kind) {
  case 0: return b.declared[i];
  case 1: return b.device[i];
  case 2: return b.device2[i];
  case 3: return b.host[i];
  default: return nullptr;
  }
}
static void issue()"
       << issueParameters() << R"() {
  for (const CallRow &c : kCalls) {)"
       << (threads ? "\n    if (c.thread != thread)\n      continue;" : "") << R"(
    const StageWork &w = kWork[c.op == Record || c.op == Wait || c.op == Sync ||
                                       c.op == SetDevice || c.op == Collective ||
                                       c.op == GraphLaunch || c.op == Post || c.op == Await
                                   ? 0
                                   : c.a];
    cudaStream_t s = c.stream >= 0 ? stream[c.stream] : nullptr;
    switch (c.op) {
    case SetDevice: CHECK(cudaSetDevice(c.a)); break;
    case Dispatch: spinHost(w.issue); break;
    case Kernel:
      spin<<<w.kernel->blocks, w.kernel->threads, w.launch->sharedBytes, s>>>(
          w.launch->nanoseconds, static_cast<unsigned char *>(placeOf(c.dstKind, c.dst, b)));
      CHECK(cudaGetLastError());
      break;
    case Copy:
      CHECK(cudaMemcpyAsync(placeOf(c.dstKind, c.dst, b), placeOf(c.srcKind, c.src, b),
                            w.bytes, w.kind, s));
      break;
    case PeerCopy:
      CHECK(cudaMemcpyPeerAsync(placeOf(c.dstKind, c.dst, b), w.peer,
                                placeOf(c.srcKind, c.src, b), w.device, w.bytes, s));
      break;
    case Memset: CHECK(cudaMemsetAsync(placeOf(c.dstKind, c.dst, b), 0, w.bytes, s)); break;
    case HostFunc: CHECK(cudaLaunchHostFunc(s, hostSpin, w.micros)); break;
)";
    if (comms)
      os << "    case Collective: runPart(c.a, s, b); break;\n"
            "    case Sync: waitEvent(event[c.a]); break;\n"
            "    case GroupStart: NCCL_CHECK(nccl.groupStart()); break;\n"
            "    case GroupEnd: NCCL_CHECK(nccl.groupEnd()); break;\n";
    else
      os << "    case Sync: CHECK(cudaEventSynchronize(event[c.a])); break;\n";
    os << R"(    case Record: CHECK(cudaEventRecord(event[c.a], s)); break;
    case Wait: CHECK(cudaStreamWaitEvent(s, event[c.a], 0)); break;
    case Cpu: spinHost(*w.micros); break;
    case GraphLaunch: CHECK(cudaGraphLaunch(recorded[c.a], s)); break;
)";
    if (threads)
      os << "    case Post: post(c.a, gen); break;\n"
            "    case Await: await(c.a, gen); break;\n";
    os << R"(    default: break;
    }
  }
}

)";
  }

  /// One call of the stream lowering, as a statement of `issue`.
  void writeCall(const lower::Call &c) {
    const std::string &stream = c.stream == kHostStream ? noStream : streamRefs[c.stream];
    const std::string &id = c.kind == lower::Call::Dispatch || c.kind == lower::Call::Launch
                                ? stageId(s.instances.stageOf(c.instance))
                                : noStream;
    switch (c.kind) {
    case lower::Call::SetDevice:
      os << "  CHECK(cudaSetDevice(" << c.device << "));\n";
      return;
    case lower::Call::Dispatch:
      os << "  spinHost(k" << id << "Issue); // dispatch\n";
      return;
    case lower::Call::Launch:
      writeLaunch(c, stream, id);
      return;
    case lower::Call::Record:
      os << "  CHECK(cudaEventRecord(event[" << Decimal(c.event) << "], " << stream << ")); ";
      if (scratch(c))
        os << "// fork or join around a recorded graph launch\n";
      else
        os << "// after ", writeLabel(c.instance), os << '\n';
      return;
    case lower::Call::Wait:
      os << "  CHECK(cudaStreamWaitEvent(" << stream << ", event[" << Decimal(c.event)
         << "], 0)); ";
      if (scratch(c))
        os << "// fork or join around a recorded graph launch\n";
      else
        os << "// for ", writeLabel(c.instance), os << '\n';
      return;
    case lower::Call::Sync:
      // With collectives, a wait that polls NCCL's errors (CudaNccl).
      if (comms)
        os << "  waitEvent(event[" << Decimal(c.event) << "]); // for ";
      else
        os << "  CHECK(cudaEventSynchronize(event[" << Decimal(c.event) << "])); // for ";
      writeLabel(c.instance);
      os << '\n';
      return;
    case lower::Call::Cpu:
      writeCpu(c.instance);
      return;
    case lower::Call::Join:
      if (c.event != lower::kNoToken) {
        os << "  await(" << Decimal(c.event) << ", gen); // join: ";
        writeLabel(c.instance);
        os << " has run on its device's host thread\n";
        return;
      }
      // One thread issues every device's calls, in issue order: the other
      // thread's cpu stage has run.
      os << "  // join: ";
      writeLabel(c.instance);
      os << " ran on another device's host thread\n";
      return;
    case lower::Call::Post:
      os << "  post(" << Decimal(c.event)
         << ", gen); // another thread awaits what is above\n";
      return;
    case lower::Call::Await:
      os << "  await(" << Decimal(c.event) << ", gen); // what another thread posts\n";
      return;
    case lower::Call::GroupStart:
      os << "  NCCL_CHECK(nccl.groupStart());\n";
      return;
    case lower::Call::GroupEnd:
      os << "  NCCL_CHECK(nccl.groupEnd());\n";
      return;
    case lower::Call::RecordedLaunch:
      os << "  CHECK(cudaGraphLaunch(recorded[" << Decimal(c.segment) << "], " << stream
         << ")); // recorded graph " << s.instances.stage(c.instance).graph << ", from ";
      writeLabel(c.instance);
      os << '\n';
      return;
    case lower::Call::GraphLaunch:
      break;
    }
    llvm_unreachable("a graph launch in the stream lowering");
  }

  /// A launch call: instance c.instance's work on `stream`.
  void writeLaunch(const lower::Call &c, const std::string &stream, const std::string &id) {
    const uint32_t v = c.instance;
    const program::Stage &st = s.instances.stage(v);
    switch (c.work) {
    case lower::Work::Kernel:
      os << "  spin<<<" << st.kernel().blocks << ", " << st.kernel().threads << ", k" << id
         << "Launch.sharedBytes, " << stream << ">>>(k" << id << "Launch.nanoseconds, ";
      writeTouch(v);
      os << "); // ";
      writeLabel(v);
      os << "\n  CHECK(cudaGetLastError());\n";
      return;
    case lower::Work::Collective:
      comms->writeCall(os, v, stream);
      os << " // ";
      break;
    case lower::Work::PeerCopy:
      os << "  CHECK(cudaMemcpyPeerAsync(";
      writePeerCopyOperands(v);
      os << ", " << stream << ")); // ";
      break;
    case lower::Work::Copy:
      os << "  CHECK(cudaMemcpyAsync(";
      writeCopyOperands(v);
      os << ", " << stream << ")); // ";
      break;
    case lower::Work::Memset:
      os << "  CHECK(cudaMemsetAsync(";
      writePlace(lower::memsetPlace(s, v), s.instances.stageOf(v));
      os << ", 0, k" << id << "Bytes, " << stream << ")); // ";
      break;
    case lower::Work::HostFunc:
      os << "  CHECK(cudaLaunchHostFunc(" << stream << ", hostSpin, &k" << id
         << "Microseconds)); // ";
      break;
    case lower::Work::HostThread:
      llvm_unreachable("a cpu stage is a Cpu call, not a launch");
    }
    writeLabel(v);
    os << '\n';
  }

  /// The statements that fill `cudaKernelNodeParams p` for instance v.
  void writeKernelParams(uint32_t v) {
    const program::Stage &st = s.instances.stage(v);
    os << "    unsigned long long nanoseconds = k" << stageId(s.instances.stageOf(v))
       << "Launch.nanoseconds;\n"
          "    unsigned char *touch = ";
    writeTouch(v);
    os << ";\n"
          "    void *args[] = {&nanoseconds, &touch};\n"
          "    cudaKernelNodeParams p{};\n"
          "    p.func = reinterpret_cast<void *>(&spin);\n"
          "    p.gridDim = dim3("
       << st.kernel().blocks << ");\n    p.blockDim = dim3(" << st.kernel().threads
       << ");\n    p.sharedMemBytes = static_cast<unsigned>(k"
       << stageId(s.instances.stageOf(v)) << "Launch.sharedBytes);\n"
       << "    p.kernelParams = args;\n";
  }

  /// The statements that fill `cudaHostNodeParams p` for stage k.
  void writeHostParams(uint32_t k) {
    os << "    cudaHostNodeParams p{};\n"
          "    p.fn = hostSpin;\n"
          "    p.userData = &k"
       << stageId(k) << "Microseconds;\n";
  }

  /// Several devices (language version 4): one process drives them all.
  bool several() const { return s.pipeline.deviceCount() > 1; }
  uint32_t deviceOfStream(uint32_t stream) const {
    return stream == kHostStream ? 0 : s.streamPlan.streams[stream].device;
  }

  /// Which device each stream, copy and buffer is on, and a synchronize()
  /// that waits for all of them.
  void deviceTables() {
    os << formatv("constexpr int kDevices = {0};\n", s.pipeline.deviceCount());
    os << "const int kStreamDevice[kStreams] = {";
    for (size_t i = 0; i < s.streamPlan.streams.size(); ++i)
      os << (i ? ", " : "") << s.streamPlan.streams[i].device;
    os << "};\n";
    os << "const int kCopyDevice[kCopies] = {";
    for (size_t k = 0, i = 0; k < s.pipeline.stages.size(); ++k)
      if (copyIndex[k] >= 0)
        os << (i++ ? ", " : "")
           << deviceOfStream(uint32_t(std::max(0, s.pipeline.stages[k].stream)));
    if (!copies)
      os << "0";
    os << "};\n";
    os << "// The device a copy writes to: its own but for a p2p copy.\n"
          "const int kCopyPeer[kCopies] = {";
    for (size_t k = 0, i = 0; k < s.pipeline.stages.size(); ++k)
      if (copyIndex[k] >= 0) {
        const program::Stage &st = s.pipeline.stages[k];
        os << (i++ ? ", " : "")
           << (program::isPeerCopy(st) ? st.copy().peerDevice
                                       : deviceOfStream(uint32_t(std::max(0, st.stream))));
      }
    if (!copies)
      os << "0";
    os << "};\n";
    os << "const int kBufferDevice[kBuffers + 1] = {";
    for (const program::Buffer &b : s.pipeline.buffers)
      os << (b.host ? 0 : b.device) << ", ";
    os << "0};\n";
    os << "static void synchronize() {\n"
          "  for (int d = 0; d < kDevices; ++d) {\n"
          "    CHECK(cudaSetDevice(d));\n"
          "    CHECK(cudaDeviceSynchronize());\n"
          "  }\n"
          "}\n";
  }

  void commonSetup() {
    os << R"(static int priorityOf(const StreamSpec &spec, int least, int greatest) {
  switch (spec.priority) {
  case Priority::High: return greatest;
  case Priority::Low: return least;
  case Priority::Normal: return least + (greatest - least) / 2;
  case Priority::Raw: return std::min(least, std::max(greatest, spec.raw));
  }
  return least;
}

)";
  }

  void streams() {
    commonSetup();
    recorded.emplace(s);
    if (several())
      threads.emplace(s);
    const uint32_t tokens = threads ? threads->tokens : 0;
    os << formatv("constexpr int kEvents = {0};\n", std::max(1u, recorded->events() + tokens));
    if (several()) {
      // Each event object is recorded on one device's streams (the plan
      // pools them per device): it is made there. Then each token's own.
      std::vector<uint32_t> eventDevice(std::max(1u, s.eventObjects + tokens), 0);
      for (const Op &op : s.ops)
        if (op.kind == Op::Record)
          eventDevice[op.event] = deviceOfStream(op.stream);
      for (uint32_t k = 0; k < tokens; ++k)
        eventDevice[threads->eventBase + k] = threads->tokenDevice[k];
      os << "const int kEventDevice[kEvents] = {";
      for (size_t i = 0; i < eventDevice.size(); ++i)
        os << (i ? ", " : "") << eventDevice[i];
      os << "};\n";
    }
    os << '\n';
    os << "// The schedule's host calls, in issue order: "
       << formatv("{0} launches, {1} records, {2} waits.\n", s.instances.size(), s.records,
                  s.waits);
    size_t calls = 0;
    lower::forEachStreamCall(s, &*recorded, threadsOrNull(), [&](const lower::Call &) {
      ++calls;
      return true;
    });
    writeRecordedGraphs();
    if (threads)
      writeHostThreads();
    if (calls > callTableFrom) {
      writeCallTable(calls);
    } else if (!threads) {
      os << "static void issue(" << issueParameters() << ") {\n";
      // Millions of calls: written piece by piece, no string built per call.
      lower::forEachStreamCall(s, &*recorded, [&](const lower::Call &c) {
        writeCall(c);
        return true;
      });
      os << "}\n\n";
    } else {
      // A function per thread, then one that calls the thread's.
      for (uint32_t th = 0; th < threads->count; ++th) {
        os << "// Device " << th << "'s host thread.\n"
           << "static void issue" << th << "(" << issueParameters(/*thread=*/false) << ") {\n";
        lower::forEachStreamCall(s, &*recorded, &*threads, [&](const lower::Call &c) {
          if (c.thread == th)
            writeCall(c);
          return true;
        });
        os << "}\n";
      }
      os << "static void issue(" << issueParameters() << ") {\n  switch (thread) {\n";
      for (uint32_t th = 0; th < threads->count; ++th)
        os << "  case " << th << ": issue" << th
           << "(stream, event, b, recorded, gen); break;\n";
      os << "  }\n}\n\n";
    }
    const char *parts = comms ? "  b.allocateParts(kPartBytes, kParts, kPartDevice);\n"
                                "  makeComms();\n"
                              : "";
    const char *noParts = comms ? "  destroyComms();\n" : "";
    if (several())
      os << R"(static void run(int replays) {
  prepare();
  cudaStream_t stream[kStreams];
  for (int i = 0; i < kStreams; ++i) {
    CHECK(cudaSetDevice(kStreamDevice[i]));
    int least = 0, greatest = 0;
    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    CHECK(cudaStreamCreateWithPriority(&stream[i], cudaStreamNonBlocking,
                                       priorityOf(kStreamSpecs[i], least, greatest)));
  }
  cudaEvent_t event[kEvents];
  for (int i = 0; i < kEvents; ++i) {
    CHECK(cudaSetDevice(kEventDevice[i]));
    CHECK(cudaEventCreateWithFlags(&event[i], cudaEventDisableTiming));
  }
  // Peer copies go over NVLink (or PCIe) where the devices can reach each
  // other's memory; elsewhere the runtime stages them through the host.
  for (int d = 0; d < kDevices; ++d)
    for (int e = 0; e < kDevices; ++e) {
      int can = 0;
      if (d == e || cudaDeviceCanAccessPeer(&can, d, e) != cudaSuccess || !can)
        continue;
      CHECK(cudaSetDevice(d));
      cudaError_t enabled = cudaDeviceEnablePeerAccess(e, 0);
      if (enabled == cudaErrorPeerAccessAlreadyEnabled)
        cudaGetLastError(); // clears it
      else
        CHECK(enabled);
    }
  Buffers b;
)"
         << "  b.allocate(kCopyBytes, kCopyDirection, " << copies
         << ", kCopyDevice, kCopyPeer);\n"
         << "  b.allocateDeclared(kBufferBytes, kBufferSlots, kBufferOnHost, kBuffers, "
            "kBufferDevice);\n"
         << parts;
    else
      os << R"(static void run(int replays) {
  prepare();
  int least = 0, greatest = 0;
  CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t stream[kStreams];
  for (int i = 0; i < kStreams; ++i)
    CHECK(cudaStreamCreateWithPriority(&stream[i], cudaStreamNonBlocking,
                                       priorityOf(kStreamSpecs[i], least, greatest)));
  cudaEvent_t event[kEvents];
  for (int i = 0; i < kEvents; ++i)
    CHECK(cudaEventCreateWithFlags(&event[i], cudaEventDisableTiming));
  Buffers b;
)"
         << "  b.allocate(kCopyBytes, kCopyDirection, " << copies << ");\n"
         << "  b.allocateDeclared(kBufferBytes, kBufferSlots, kBufferOnHost, kBuffers);\n"
         << parts
         << (recorded->launches.empty()
                 ? "  cudaGraphExec_t *recorded = nullptr; // no recorded graph launch\n"
                 : "  // The recorded graph launches' graphs, built and instantiated once.\n"
                   "  RecordedGraphs graphs(b, least, greatest);\n"
                   "  cudaGraphExec_t *recorded = graphs.exec;\n");
    const std::string sync = std::string(comms ? "waitStreams(stream, kStreams); " : "") +
                             (several() ? "synchronize()" : "CHECK(cudaDeviceSynchronize())");
    if (several())
      os << "  cudaGraphExec_t *recorded = nullptr; // one device's recorded graphs only\n"
            "  // Each device's host thread issues its calls, beside the others.\n"
            "  Threads threads(kDevices, [&](int thread, int gen) {\n"
            "    CHECK(cudaSetDevice(thread));\n"
            "    issue(thread, stream, event, b, recorded, gen);\n"
            "  });\n";
    const char *issueAll = several() ? "threads.run()" : "issue(stream, event, b, recorded)";
    os << formatv(R"(
  Clock::time_point t = Clock::now();
  {4};
  {2};
  double first = microsSince(t);
  std::vector<double> replay, submit;
  for (int i = 0; i < replays; ++i) {{
    t = Clock::now();
    {4};
    submit.push_back(microsSince(t));
    {2};
    replay.push_back(microsSince(t));
  }
  std::printf("pipeline '{1}', lowered to streams, %d replays\n", replays);
  std::printf("  first launch   %10.1f us\n", first);
  std::printf("  replay median  %10.1f us   p95 %.1f us\n", percentile(replay, 0.5),
              percentile(replay, 0.95));
  std::printf("  host submit    %10.1f us   median\n", percentile(submit, 0.5));

{3}  b.release();
  for (int i = 0; i < kEvents; ++i)
    CHECK(cudaEventDestroy(event[i]));
  for (int i = 0; i < kStreams; ++i)
    CHECK(cudaStreamDestroy(stream[i]));
}
)",
                  copies, s.pipeline.name, sync, noParts, issueAll);
  }

  /// `issue`'s parameters: with several devices, the thread's and the
  /// replay's number (`gen`) too.
  std::string issueParameters(bool thread = true) const {
    std::string p = threads && thread ? "int thread, " : "";
    p += "[[maybe_unused]] cudaStream_t *stream, [[maybe_unused]] cudaEvent_t *event,\n"
         "                  [[maybe_unused]] Buffers &b, [[maybe_unused]] cudaGraphExec_t "
         "*recorded";
    if (threads)
      p += ", [[maybe_unused]] int gen";
    return p;
  }

  /// With several devices: the tokens threads post and await, and the
  /// threads, one per device, that issue each replay's calls.
  void writeHostThreads() {
    os << formatv("// What one device's host thread needs of another's: {0} token(s), each\n"
                  "// posted with the replay's number once what it stands for is issued (or,\n"
                  "// for a cpu stage, has run).\n"
                  "constexpr int kTokens = {1};\n",
                  threads->tokens, std::max(1u, threads->tokens));
    os << R"(static std::atomic<int> posted[kTokens];
[[maybe_unused]] static void post(int token, int gen) {
  posted[token].store(gen, std::memory_order_release);
}
[[maybe_unused]] static void await(int token, int gen) {
  while (posted[token].load(std::memory_order_acquire) < gen)
    std::this_thread::yield();
}
// A host thread per device: this one is device 0's; the others wait for each
// replay to start, issue their calls and say they are done.
struct Threads {
  std::function<void(int, int)> body; // (thread, replay number)
  std::atomic<int> generation{0}, finished{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  Threads(int n, std::function<void(int, int)> f) : body(std::move(f)) {
    for (int t = 1; t < n; ++t)
      workers.emplace_back([this, t] {
        for (int seen = 0;;) {
          int g;
          while ((g = generation.load(std::memory_order_acquire)) == seen) {
            if (stop.load())
              return;
            std::this_thread::yield();
          }
          seen = g;
          body(t, g);
          finished.fetch_add(1, std::memory_order_release);
        }
      });
  }
  // One replay's calls, every thread's: returns once all are issued.
  void run() {
    finished.store(0);
    const int g = generation.load() + 1;
    generation.store(g, std::memory_order_release);
    body(0, g);
    while (finished.load(std::memory_order_acquire) < int(workers.size()))
      std::this_thread::yield();
  }
  ~Threads() {
    stop.store(true);
    for (std::thread &w : workers)
      w.join();
  }
};

)";
  }

  void graph() {
    commonSetup();
    const size_t n = s.instances.size();
    auto edges = s.graphEdges();
    const lower::GraphPlan plan(s);
    const uint32_t nodes = plan.nodes, graphEvents = plan.events;
    const uint32_t launchStreams = plan.launchStreams;
    os << formatv("constexpr int kNodes = {0};\n", n);
    os << formatv("constexpr int kSegments = {0};\n", std::max(1u, s.segments));
    os << "// Segment g is launched on launchStream[g % kLaunchStreams]: a graph launch\n"
          "// follows all earlier work of its stream, so segments on other streams\n"
          "// overlap as far as their event waits allow.\n";
    os << formatv("constexpr int kLaunchStreams = {0};\n", launchStreams);
    os << "// One event per event-record node: after an instance a host sync or a\n"
          "// later segment's event-wait node waits on.\n";
    os << formatv("constexpr int kGraphEvents = {0};\n\n", std::max(1u, graphEvents));
    os << formatv("// The graph: {0} nodes, {1} edges (the transitive reduction "
                  "of dependencies and stream order), in {2} segment(s) between "
                  "host synchronisations; node[i] is instance i (none for a cpu "
                  "stage).\n",
                  nodes, edges.size(), std::max(1u, s.segments));
    os << "static void build(cudaGraph_t *graph, cudaGraphNode_t *node, Buffers &b,\n"
          "                  int least, int greatest, cudaEvent_t *event) {\n"
          "  (void)event;\n"
          "  (void)b;\n";
    os << "  cudaKernelNodeAttrValue priority{};\n";
    plan.forEachNode([&](const lower::Node &node) {
      writeNode(node, plan.eventOf);
      return true;
    });
    os << "}\n\n";
    updateDynamic(plan);
    // One replay: the host's calls in order (the segments' launches, cpu
    // stages, and before a synchronising cpu stage a record and a sync).
    os << "// One replay: the host's calls, in order.\n"
          "static void replay(cudaGraphExec_t *exec, cudaGraphNode_t *node, Buffers &b,\n"
          "                   cudaStream_t *launchStream, cudaEvent_t *event) {\n"
          "  (void)event;\n";
    plan.forEachReplayCall([&](const lower::Call &c) {
      switch (c.kind) {
      case lower::Call::GraphLaunch:
        os << "  updateDynamic(exec, " << Decimal(c.segment) << ", node, b);\n"
           << "  CHECK(cudaGraphLaunch(exec[" << Decimal(c.segment) << "], launchStream["
           << Decimal(c.stream) << "]));\n";
        break;
      case lower::Call::Sync:
        os << "  CHECK(cudaEventSynchronize(event[" << Decimal(c.event) << "])); // "
           << s.instances.name(c.instance) << " done\n";
        break;
      case lower::Call::Cpu:
        writeCpu(c.instance);
        break;
      default:
        llvm_unreachable("a replay is graph launches, syncs and cpu stages");
      }
      return true;
    });
    os << "}\n\n";
    os << formatv(R"(static void run(int replays) {{
  prepare();
  int least = 0, greatest = 0;
  CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t launchStream[kLaunchStreams];
  for (int i = 0; i < kLaunchStreams; ++i)
    CHECK(cudaStreamCreateWithFlags(&launchStream[i], cudaStreamNonBlocking));
  cudaEvent_t event[kGraphEvents];
  for (int i = 0; i < kGraphEvents; ++i)
    CHECK(cudaEventCreateWithFlags(&event[i], cudaEventDisableTiming));
  auto synchronize = [&] {{
    for (int i = 0; i < kLaunchStreams; ++i)
      CHECK(cudaStreamSynchronize(launchStream[i]));
  };
  Buffers b;
  b.allocate(kCopyBytes, kCopyDirection, {0});
  b.allocateDeclared(kBufferBytes, kBufferSlots, kBufferOnHost, kBuffers);

  Clock::time_point t = Clock::now();
  cudaGraph_t graph[kSegments];
  for (int g = 0; g < kSegments; ++g)
    CHECK(cudaGraphCreate(&graph[g], 0));
  std::vector<cudaGraphNode_t> node(kNodes);
  build(graph, node.data(), b, least, greatest, event);
  double built = microsSince(t);
  t = Clock::now();
  cudaGraphExec_t exec[kSegments];
  for (int g = 0; g < kSegments; ++g)
    CHECK(cudaGraphInstantiate(&exec[g], graph[g], cudaGraphInstantiateFlagUseNodePriority));
  double instantiated = microsSince(t);
  t = Clock::now();
  replay(exec, node.data(), b, launchStream, event);
  synchronize();
  double first = microsSince(t);
  std::vector<double> replays_, submit;
  for (int i = 0; i < replays; ++i) {{
    t = Clock::now();
    replay(exec, node.data(), b, launchStream, event);
    submit.push_back(microsSince(t));
    synchronize();
    replays_.push_back(microsSince(t));
  }
  std::printf("pipeline '{1}', lowered to graph, %d replays\n", replays);
  std::printf("  build          %10.1f us   cudaGraphAdd*Node calls\n", built);
  std::printf("  instantiate    %10.1f us\n", instantiated);
  std::printf("  first launch   %10.1f us\n", first);
  std::printf("  replay median  %10.1f us   p95 %.1f us\n", percentile(replays_, 0.5),
              percentile(replays_, 0.95));
  std::printf("  host submit    %10.1f us   median\n", percentile(submit, 0.5));

  for (int g = 0; g < kSegments; ++g) {{
    CHECK(cudaGraphExecDestroy(exec[g]));
    CHECK(cudaGraphDestroy(graph[g]));
  }
  for (int i = 0; i < kGraphEvents; ++i)
    CHECK(cudaEventDestroy(event[i]));
  b.release();
  for (int i = 0; i < kLaunchStreams; ++i)
    CHECK(cudaStreamDestroy(launchStream[i]));
}
)",
                  copies, s.pipeline.name);
  }

  /// The parameters of every `dynamic` stage's node, set again before each
  /// launch, as a program whose shapes change must.
  void updateDynamic(const lower::GraphPlan &plan) {
    os << "// Before each segment's launch: the nodes of `dynamic` stages get their\n"
          "// parameters again (a changing shape would be set here).\n";
    os << "static void updateDynamic(cudaGraphExec_t *execs, int segment, "
          "cudaGraphNode_t *node, [[maybe_unused]] Buffers &b) {\n";
    for (uint32_t v : plan.dynamic) {
      os << "  if (segment == " << Decimal(s.segmentOf[v]) << ") { // ";
      writeLabel(v);
      os << "\n    cudaGraphExec_t exec = execs[segment];\n";
      switch (lower::cudaWorkOf(s.instances.stage(v))) {
      case lower::Work::Kernel:
        writeKernelParams(v);
        os << "    CHECK(cudaGraphExecKernelNodeSetParams(exec, node[" << Decimal(v)
           << "], &p));\n";
        break;
      case lower::Work::Copy:
        os << "    CHECK(cudaGraphExecMemcpyNodeSetParams1D(exec, node[" << Decimal(v)
           << "], ";
        writeCopyOperands(v);
        os << "));\n";
        break;
      case lower::Work::Memset:
        writeMemsetParams(v);
        os << "    CHECK(cudaGraphExecMemsetNodeSetParams(exec, node[" << Decimal(v)
           << "], &p));\n";
        break;
      case lower::Work::HostFunc:
        writeHostParams(s.instances.stageOf(v));
        os << "    CHECK(cudaGraphExecHostNodeSetParams(exec, node[" << Decimal(v)
           << "], &p));\n";
        break;
      case lower::Work::PeerCopy:
      case lower::Work::Collective:
      case lower::Work::HostThread:
        llvm_unreachable("not a node of a graph pipec emits");
      }
      os << "  }\n";
    }
    if (plan.dynamic.empty())
      os << "  (void)execs, (void)segment, (void)node, (void)b; // no dynamic stage\n";
    os << "}\n\n";
  }

  /// Whether call c records or waits for the recorded graphs' own event.
  bool scratch(const lower::Call &c) const {
    return recorded && !recorded->launches.empty() && c.event == recorded->scratchEvent;
  }

  /// The stream lowering's recorded graph launches (lower::RecordedGraphs):
  /// a graph per shape, built and instantiated once, before the first replay.
  void writeRecordedGraphs() {
    const lower::RecordedGraphs &r = *recorded;
    if (r.launches.empty())
      return;
    os << formatv("// The recorded graph launches (graph=N): {0} launch(es) of {1} graph(s). "
                  "Each is\n"
                  "// launched on its first node's stream, after what every stream of its "
                  "nodes\n"
                  "// issued before it; the streams it touches go on after the whole graph.\n",
                  r.launches.size(), r.shapes.size());
    os << formatv("constexpr int kRecordedShapes = {0};\n", r.shapes.size());
    os << formatv("constexpr int kRecordedNodes = {0};\n", s.instances.size());
    os << "static void buildRecorded(cudaGraph_t *graph, cudaGraphNode_t *node, "
          "[[maybe_unused]] Buffers &b,\n"
          "                          [[maybe_unused]] int least, [[maybe_unused]] int "
          "greatest) {\n"
          "  [[maybe_unused]] cudaKernelNodeAttrValue priority{};\n";
    for (uint32_t l : r.shapes)
      r.forEachNode(l, [&](const lower::Node &node) {
        writeNode(node, {});
        return true;
      });
    os << R"(}
struct RecordedGraphs {
  cudaGraph_t graph[kRecordedShapes];
  cudaGraphExec_t exec[kRecordedShapes];
  RecordedGraphs(Buffers &b, int least, int greatest) {
    std::vector<cudaGraphNode_t> node(kRecordedNodes);
    for (int g = 0; g < kRecordedShapes; ++g)
      CHECK(cudaGraphCreate(&graph[g], 0));
    buildRecorded(graph, node.data(), b, least, greatest);
    for (int g = 0; g < kRecordedShapes; ++g)
      CHECK(cudaGraphInstantiate(&exec[g], graph[g], cudaGraphInstantiateFlagUseNodePriority));
  }
  ~RecordedGraphs() {
    for (int g = 0; g < kRecordedShapes; ++g) {
      CHECK(cudaGraphExecDestroy(exec[g]));
      CHECK(cudaGraphDestroy(graph[g]));
    }
  }
};

)";
  }

  /// Node `node` of the graph, with its event-wait nodes before it and its
  /// event-record node after it, as a block of `build` (`eventOf`: the
  /// graph lowering's events of the instances it waits for).
  void writeNode(const lower::Node &node, llvm::ArrayRef<uint32_t> eventOf) {
    const uint32_t v = node.instance;
    os << "  { // ";
    writeLabel(v);
    os << '\n';
    // An ordering from another segment: an event-wait node before this one.
    for (size_t i = 0; i < node.waitFor.size(); ++i)
      os << "    cudaGraphNode_t wait" << Decimal(i) << ";\n"
         << "    CHECK(cudaGraphAddEventWaitNode(&wait" << Decimal(i) << ", graph["
         << Decimal(node.segment) << "], nullptr, 0, event["
         << Decimal(eventOf[node.waitFor[i]]) << "])); // after "
         << s.instances.name(node.waitFor[i]) << "\n";
    const size_t count = node.after.size() + node.waitFor.size();
    if (count) {
      os << "    cudaGraphNode_t deps[] = {";
      for (size_t i = 0; i < node.after.size(); ++i)
        os << (i ? ", node[" : "node[") << Decimal(node.after[i]) << ']';
      for (size_t i = 0; i < node.waitFor.size(); ++i)
        os << (i + node.after.size() ? ", wait" : "wait") << Decimal(i);
      os << "};\n";
    }
    // `(&node[v], graph[g], deps, count`: every cudaGraphAdd*Node starts so.
    auto nodeArgs = [&] {
      os << "(&node[" << Decimal(v) << "], graph[" << Decimal(node.segment) << "], "
         << (count ? "deps" : "nullptr") << ", " << Decimal(count);
    };
    switch (node.work) {
    case lower::Work::Kernel:
      writeKernelParams(v);
      os << "    CHECK(cudaGraphAddKernelNode";
      nodeArgs();
      os << ", &p));\n"
            "    priority.priority = priorityOf(kStreamSpecs["
         << Decimal(s.streamOf(v))
         << "], least, greatest);\n"
            "    CHECK(cudaGraphKernelNodeSetAttribute(node["
         << Decimal(v) << "], cudaLaunchAttributePriority, &priority));\n";
      break;
    case lower::Work::Copy:
      os << "    CHECK(cudaGraphAddMemcpyNode1D";
      nodeArgs();
      os << ", ";
      writeCopyOperands(v);
      os << "));\n";
      break;
    case lower::Work::Memset:
      writeMemsetParams(v);
      os << "    CHECK(cudaGraphAddMemsetNode";
      nodeArgs();
      os << ", &p));\n";
      break;
    case lower::Work::HostFunc:
      writeHostParams(s.instances.stageOf(v));
      os << "    CHECK(cudaGraphAddHostNode";
      nodeArgs();
      os << ", &p));\n";
      break;
    case lower::Work::PeerCopy:
    case lower::Work::Collective:
    case lower::Work::HostThread:
      llvm_unreachable("not a node of a graph pipec emits");
    }
    // What a host sync or a later segment waits on: an event-record node.
    if (node.record != lower::kNoRecord)
      os << "    cudaGraphNode_t record;\n"
         << "    CHECK(cudaGraphAddEventRecordNode(&record, graph[" << Decimal(node.segment)
         << "], &node[" << Decimal(v) << "], 1, event[" << Decimal(node.record) << "]));\n";
    os << "  }\n";
  }

  /// `cudaMemsetParams p` for instance v, as statements.
  void writeMemsetParams(uint32_t v) {
    os << "    cudaMemsetParams p{};\n"
          "    p.dst = ";
    writePlace(lower::memsetPlace(s, v), s.instances.stageOf(v));
    os << ";\n"
          "    p.value = 0;\n"
          "    p.elementSize = 1;\n"
          "    p.width = k"
       << stageId(s.instances.stageOf(v))
       << "Bytes;\n"
          "    p.height = 1;\n";
  }

  /// dst, dstDevice, src, srcDevice, bytes of instance v's p2p copy, for
  /// cudaMemcpyPeerAsync.
  void writePeerCopyOperands(uint32_t v) {
    const uint32_t k = s.instances.stageOf(v);
    const program::Stage &st = s.pipeline.stages[k];
    const lower::CopyPlaces c = lower::copyPlaces(s, v);
    writePlace(c.dst, k);
    os << ", " << st.copy().peerDevice << ", ";
    writePlace(c.src, k);
    os << ", " << deviceOfStream(uint32_t(st.stream)) << ", k" << stageId(k) << "Bytes";
  }

  /// dst, src, bytes, kind of instance v's copy, for the 1D memcpy calls.
  void writeCopyOperands(uint32_t v) {
    const uint32_t k = s.instances.stageOf(v);
    const program::Stage &st = s.pipeline.stages[k];
    const char *kind = st.copy().direction == CopyDirection::H2D ? "cudaMemcpyHostToDevice"
                       : st.copy().direction == CopyDirection::D2H
                           ? "cudaMemcpyDeviceToHost"
                           : "cudaMemcpyDeviceToDevice";
    const lower::CopyPlaces c = lower::copyPlaces(s, v);
    writePlace(c.dst, k);
    os << ", ";
    writePlace(c.src, k);
    os << ", k" << stageId(k) << "Bytes, " << kind;
  }

  const Schedule &s;
  const DeviceProfile &profile;
  llvm::raw_ostream &os;
  std::string name;
  std::vector<int> copyIndex;
  int copies = 0;
  std::optional<Communicators> comms; ///< with collectives
  /// The stream lowering's recorded graph launches (made by streams()).
  std::optional<lower::RecordedGraphs> recorded;
  /// With several devices, each device's host thread (made by streams()).
  std::optional<lower::HostThreads> threads;
  const lower::HostThreads *threadsOrNull() const { return threads ? &*threads : nullptr; }
  std::vector<uint32_t> declaredBase;  ///< per buffer: its first slot's index
  std::vector<std::string> ids;        ///< per stage: its C++ identifier
  std::vector<std::string> streamRefs; ///< per stream: `stream[i]`
  const std::string noStream;          ///< a host-thread op's (none)
  /// Past this many host calls, the stream lowering's calls are a table
  /// walked by a loop (writeCallTable), not statements.
  size_t callTableFrom;
  uint32_t declaredSlots = 0;
};

} // namespace

llvm::Error pipec::cudaCannotEmit(llvm::ArrayRef<const Schedule *> schedules) {
  for (const Schedule *s : schedules) {
    if (s->lowering != Lowering::Graph)
      continue;
    // Several devices are driven from one process, lowered to streams.
    if (s->pipeline.deviceCount() > 1)
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("pipeline '{0}' declares {1} devices; --emit=cuda lowers such "
                        "pipelines to streams (--lower=streams or auto)",
                        s->pipeline.name, s->pipeline.deviceCount())
              .str());
    // NCCL's calls are made on streams (a graph would capture them).
    if (program::hasCollectives(s->pipeline))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          llvm::formatv("pipeline '{0}' has collectives; --emit=cuda writes them as NCCL "
                        "calls on streams (--lower=streams)",
                        s->pipeline.name)
              .str());
  }
  return llvm::Error::success();
}

namespace {

/// `word` as a shell reads it back: as it is when it is plain, else
/// single-quoted.
std::string shellWord(llvm::StringRef word) {
  if (!word.empty() &&
      word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                             "0123456789._+-/") == llvm::StringRef::npos)
    return word.str();
  std::string quoted = "'";
  for (char c : word)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

} // namespace

llvm::Error pipec::emitCuda(llvm::ArrayRef<const Schedule *> schedules, llvm::StringRef source,
                            const DeviceProfile &profile, llvm::raw_ostream &os,
                            size_t callTableFrom, llvm::StringRef fileName) {
  if (llvm::Error e = cudaCannotEmit(schedules))
    return e;
  // The build line names the file this is (nvcc takes a name not ending
  // in .cu as CUDA with -x cu), and a program named after it.
  const llvm::StringRef name = fileName.empty() ? llvm::StringRef("pipeline.cu") : fileName;
  llvm::StringRef stem = name;
  const bool cu = stem.consume_back(".cu") && !stem.empty();
  const std::string program = commentText(shellWord(cu ? stem : "pipeline"));
  const std::string build =
      std::string(cu ? "" : "-x cu ") + "-o " + program + " " + commentText(shellWord(name));
  os << "// Generated by pipec from " << commentText(source) << ": ";
  for (size_t i = 0; i < schedules.size(); ++i)
    os << (i ? ", " : "") << "pipeline '" << schedules[i]->pipeline.name << "' ("
       << spelling(schedules[i]->lowering) << ")";
  os << ".\n"
     << "// It performs exactly the schedule pipec planned -- streams,\n"
     << "// priorities, events, launches, or graph nodes and edges -- and times\n"
     << "// it. Stages are stand-ins: kernels spin for their time, copies move\n"
     << "// their bytes between pinned host and device memory, host stages spin.\n"
     << "//\n"
     << "// Build: nvcc -O2 -arch=sm_90 " << build << "   (H100/H200;\n"
     << "//        -arch=native for the GPU of the building machine; without a\n"
     << "//        target, CUDA 13 builds sm_75 code that the driver JIT-compiles)\n"
     << "// Run:   ./" << program << " [replays]        (default 100)\n\n";
  os << kPrelude << "\n// ---- SpinShape.inc: how pipec stands in for a kernel stage ----\n"
     << kSpinShapeText << kSpinLaunch << kRuntime;
  const bool collectives =
      std::any_of(schedules.begin(), schedules.end(),
                  [](const Schedule *s) { return program::hasCollectives(s->pipeline); });
  if (collectives)
    os << kNcclPrelude;
  for (const Schedule *s : schedules)
    Writer(*s, profile, os, callTableFrom).pipeline();
  os << R"(
int main(int argc, char **argv) {
  int replays = argc > 1 ? std::atoi(argv[1]) : 100;
  if (replays < 1) {
    std::fprintf(stderr, "usage: %s [replays >= 1]\n", argv[0]);
    return 2;
  }
)";
  if (collectives) // before the devices: without NCCL they cannot run it
    os << "  if (!loadNccl())\n    return 4;\n";
  os << R"(  int devices = 0;
  cudaError_t status = cudaGetDeviceCount(&devices);
  if (status != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "no CUDA device: %s\n",
                 status != cudaSuccess ? cudaGetErrorString(status)
                                       : "the CUDA runtime sees no GPU");
    return 3;
  }
  CHECK(cudaSetDevice(0));
  prepareSpin();
  warmUp();
)";
  // Several devices (language version 4): as many GPUs, each prepared.
  size_t needed = 1;
  for (const Schedule *s : schedules)
    needed = std::max(needed, s->pipeline.deviceCount());
  if (needed > 1)
    os << formatv(R"(  if (devices < {0}) {{
    std::fprintf(stderr, "this program drives {0} devices; the CUDA runtime sees %d\n",
                 devices);
    return 3;
  }
  for (int d = 1; d < {0}; ++d) {{
    CHECK(cudaSetDevice(d));
    prepareSpin();
    warmUp();
  }
  CHECK(cudaSetDevice(0));
)",
                  needed);
  for (const Schedule *s : schedules)
    os << "  " << identifier(s->pipeline.name) << "::run(replays);\n";
  os << "  return 0;\n}\n";
  return llvm::Error::success();
}
