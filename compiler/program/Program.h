//===- Program.h - A checked pipeline: names resolved, units normalised ---===//
//
// Sema turns the AST into this; the scheduling passes read only this. Times
// are microseconds, sizes bytes, streams and stages referred to by index.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PROGRAM_PROGRAM_H
#define PIPEC_PROGRAM_PROGRAM_H

#include "compiler/support/Kinds.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace pipec::program {

using pipec::CollectiveOp;
using pipec::CopyDirection;
using pipec::StageKind;

/// How a stream's priority was written; `Raw` is an integer CUDA priority.
enum class PriorityClass { High, Normal, Low, Raw };

const char *spelling(PriorityClass cls);

/// `device NAME;` (version 4): one GPU the process drives. A pipeline that
/// declares none has one.
struct Device {
  std::string name;
  llvm::SMRange range;
};

struct Stream {
  std::string name;
  uint32_t device = 0; ///< index into Pipeline::devices (0: the first, or the only one)
  PriorityClass priorityClass = PriorityClass::Normal;
  int64_t rawPriority = 0; ///< as written, for PriorityClass::Raw
  int cudaPriority = 0;    ///< on the device profile's range, clamped
  bool isAuto = false;     ///< created by the compiler (auto0, auto1, ...)
  llvm::SMRange range;
};

struct Dependency {
  uint32_t stage = 0;    ///< index into Pipeline::stages
  uint32_t distance = 0; ///< iterations back: 0, or k of `@prev(k)`
  llvm::SMRange range;
  /// -1 for a declared dependency; else the buffer whose accesses required
  /// it (sync inferred), an index into Pipeline::buffers.
  int32_t inferredFrom = -1;

  bool previousIteration() const { return distance != 0; }
  bool inferred() const { return inferredFrom >= 0; }
};

/// `buffer NAME[SLOTS] SIZE [host];`: a ring of `slots` slots of `bytes`
/// each; in iteration i every access touches slot i mod slots.
struct Buffer {
  std::string name;
  uint32_t slots = 1;
  uint64_t bytes = 0;
  bool host = false;   ///< pinned host memory; else device memory
  uint32_t device = 0; ///< device memory: index into Pipeline::devices
  /// Loop-carried state: declared `state`, or read in an iteration before
  /// that iteration writes it (each iteration reads what an earlier one
  /// left). A change to its slots would change which write a read sees.
  bool state = false;
  bool stateDeclared = false; ///< written `state`
  llvm::SMRange range;
};

/// One `reads(...)` or `writes(...)` entry of a stage.
struct Access {
  uint32_t buffer = 0; ///< index into Pipeline::buffers
  bool write = false;
  llvm::SMRange range;
  /// A read of `@prev(K)`: the slot iteration i - K wrote (0: this
  /// iteration's slot).
  uint32_t distance = 0;
  /// The ring slot an instance of iteration `it` touches, of `slots`.
  uint32_t slot(uint32_t it, uint32_t slots) const {
    return uint32_t((uint64_t(it) + uint64_t(slots) * distance - distance) % slots);
  }
};

constexpr int32_t kNoStream = -1;

/// The iterations a stage runs in: every one (the default), or those that
/// `[first]`, `[last]` and `[every=K]` name (any of them: iteration 0, the
/// last, and 0, K, 2K, ...).
struct RunCondition {
  bool first = false, last = false;
  uint32_t every = 0; ///< 0: no `every=`

  bool always() const { return !first && !last && every == 0; }
  bool runsIn(uint32_t iteration, uint32_t iterations) const {
    return always() || (first && iteration == 0) || (last && iteration + 1 == iterations) ||
           (every != 0 && iteration % every == 0);
  }
  /// At most how many iterations lie between an iteration and the stage's
  /// latest run at or before it, and between two of its runs: what a
  /// dependency on it, or stream order past it, may reach back over.
  uint32_t spacing(uint32_t iterations) const {
    if (always())
      return 1;
    return every ? std::min(every, iterations) : iterations;
  }
};

/// What only a stage of one kind has, one alternative per row of
/// StageKinds.def and in its order (checked below): a stage's work is a
/// `StageWork`, and a `std::visit` over it does not compile until it
/// handles every kind. What every kind has (the time, the size, when it
/// runs, what it touches) stays in Stage.
/// What bounds a kernel's speed beside its SMs' slots (`bound=`).
enum class KernelBound : uint8_t {
  Unsaid,  ///< the file does not say: the model's assumption decides
  Memory,  ///< the device's memory bandwidth, all of it when alone
  Compute, ///< its SMs' issue throughput, all of it when alone
};
struct KernelWork {
  uint32_t blocks = 1;
  uint32_t threads = 128;
  uint64_t smemBytes = 0; ///< shared memory per block (`smem=`)
  uint32_t regs = 0;      ///< registers per thread (`regs=`), 0: not limiting
  /// Bytes it moves through device memory, reads and writes (`bytes=`; 0:
  /// not said): its share of the memory bandwidth when alone.
  uint64_t bytes = 0;
  KernelBound bound = KernelBound::Unsaid;
};
struct CopyWork {
  CopyDirection direction = CopyDirection::H2D;
  /// A `copy p2p`: the device it writes to (index into Pipeline::devices);
  /// it runs on its stream's device, the source.
  uint32_t peerDevice = 0;
  /// `[pageable]` (version 6): the host side is pageable memory. The call
  /// stages it through a pinned buffer, after the work issued before it on
  /// its stream, and returns once the copy is done: the host thread that
  /// issued it waits (the stage after it in the program, pageableWait).
  bool pageable = false;
};
struct HostWork {};
struct MemsetWork {};
struct CpuWork {
  /// The device whose host thread runs it (version 4), as `on DEVICE` names
  /// it (the first device without it). Each device has a host thread of its
  /// own, which issues that device's calls.
  uint32_t hostDevice = 0;
  /// Not declared: the host's wait inside the call of the pageable copy
  /// just before it in the program (pageableWait).
  bool pageableWait = false;
};
/// A collective (version 4) is one stage per device it spans, its parts:
/// stages group .. group + parts - 1, one after another, each on a stream
/// of its own device, named `NAME:DEVICE` (just NAME when it spans one).
/// A part ends when every part has started and the work is done; a
/// dependency on the collective is on the part of the consumer's device.
struct CollectiveWork {
  CollectiveOp op = CollectiveOp::AllReduce;
  uint32_t group = 0; ///< the first part
  uint32_t parts = 0; ///< how many
};

using StageWork =
    std::variant<KernelWork, CopyWork, HostWork, MemsetWork, CpuWork, CollectiveWork>;

static_assert(std::variant_size_v<StageWork> == std::size(kStageKinds),
              "one StageWork alternative per row of StageKinds.def");
#define STAGE_KIND(Name, Keyword, Version, Noun, OnHostThread)                                \
  static_assert(                                                                              \
      std::is_same_v<std::variant_alternative_t<size_t(StageKind::Name), StageWork>,          \
                     Name##Work>,                                                             \
      "StageWork's alternatives in StageKinds.def's order");
#include "compiler/support/StageKinds.def"

/// The work of a stage of the kind, its fields at their defaults.
inline StageWork workOf(StageKind kind) {
  switch (kind) {
#define STAGE_KIND(Name, Keyword, Version, Noun, OnHostThread)                                \
  case StageKind::Name:                                                                       \
    return Name##Work{};
#include "compiler/support/StageKinds.def"
  }
  return KernelWork{};
}

struct Stage {
  std::string name;
  RunCondition runs;          ///< `[first]`, `[last]`, `[every=K]`
  int32_t stream = kNoStream; ///< index into Pipeline::streams, or kNoStream
  StageWork work;             ///< what its kind alone has
  double durationUs = 0;
  std::optional<uint64_t> bytes; ///< copies, memsets and collectives given as a size
  bool dynamic = false;
  /// `issue=T` (version 3): host time spent preparing each launch before
  /// its API call (the framework's dispatch), microseconds. Paid per launch
  /// in the stream lowering, not by a graph replay.
  double issueUs = 0;
  /// `graph=N` (version 5): a node of recorded graph launch N, launched
  /// with the others of N by one host call (the first's a graph launch,
  /// the rest free); -1: launched on its own.
  int64_t graph = -1;
  std::vector<Access> accesses; ///< reads first, then writes, as declared
  /// Declared dependencies (duplicates removed), then the inferred ones.
  std::vector<Dependency> deps;
  llvm::SMRange range; ///< the stage's name

  StageKind kind() const { return static_cast<StageKind>(work.index()); }
  /// The work of a stage known to be of that kind (checked).
  const KernelWork &kernel() const { return std::get<KernelWork>(work); }
  KernelWork &kernel() { return std::get<KernelWork>(work); }
  const CopyWork &copy() const { return std::get<CopyWork>(work); }
  CopyWork &copy() { return std::get<CopyWork>(work); }
  const CpuWork &cpu() const { return std::get<CpuWork>(work); }
  CpuWork &cpu() { return std::get<CpuWork>(work); }
  const CollectiveWork &collective() const { return std::get<CollectiveWork>(work); }
  CollectiveWork &collective() { return std::get<CollectiveWork>(work); }
};

/// A part of a collective (version 4).
inline bool isCollective(const Stage &s) { return s.kind() == StageKind::Collective; }
/// A copy to a peer device (version 4).
inline bool isPeerCopy(const Stage &s) {
  const CopyWork *copy = std::get_if<CopyWork>(&s.work);
  return copy && copy->direction == CopyDirection::P2P;
}
/// The parts of the collective a stage is a part of; 0 for any other stage.
inline uint32_t collectiveParts(const Stage &s) {
  const CollectiveWork *c = std::get_if<CollectiveWork>(&s.work);
  return c ? c->parts : 0;
}
/// SM work whose file does not say what bounds it (a kernel without
/// `bytes=` or `bound=`, a memset): what it asks of the device's memory
/// bandwidth and issue throughput is an assumption (the device model's
/// ModelOptions::contendUnsaid, advise's range).
inline bool boundUnsaid(const Stage &s) {
  if (const KernelWork *k = std::get_if<KernelWork>(&s.work))
    return !k->bytes && k->bound == KernelBound::Unsaid;
  return s.kind() == StageKind::Memset;
}
/// A pageable copy (version 6), whose call holds its host thread.
inline bool isPageableCopy(const Stage &s) {
  const CopyWork *copy = std::get_if<CopyWork>(&s.work);
  return copy && copy->pageable;
}
/// The host's wait inside a pageable copy's call (not declared).
inline bool isPageableWait(const Stage &s) {
  const CpuWork *cpu = std::get_if<CpuWork>(&s.work);
  return cpu && cpu->pageableWait;
}
/// The stage after a pageable copy (`copy`, at index `copyIndex`) in the
/// program: its call's wait, a `cpu` stage of no time of its own on the
/// host thread of `hostDevice`, named `COPY:host`, depending on the copy and
/// running in the iterations it runs in. Sema makes it for every pageable
/// copy it reads, and so does each builder of a program without a parse.
Stage pageableWait(const Stage &copy, uint32_t copyIndex, uint32_t hostDevice);
/// The stage's name as declared: a collective's part `AR:gpu1` is `AR`; a
/// pageable copy's wait `UP:host` is the copy's, `UP`.
inline llvm::StringRef declaredName(const Stage &s) {
  return collectiveParts(s) > 1 || isPageableWait(s) ? llvm::StringRef(s.name).split(':').first
                                                     : llvm::StringRef(s.name);
}

/// A stage that runs on a stream but was declared without `on`: the
/// compiler gives it one. A `cpu` stage runs on the host thread, on none.
inline bool unpinned(const Stage &s) {
  return s.stream == kNoStream && !onHostThread(s.kind());
}

struct Pipeline {
  std::string name;
  uint32_t iterations = 1;
  bool syncDeclared = false;   ///< `sync declared;`: check, infer nothing
  std::vector<Device> devices; ///< as declared; none: one device
  std::vector<Stream> streams;
  std::vector<Buffer> buffers;
  std::vector<Stage> stages;
  llvm::SMRange range; ///< the pipeline's name

  /// The GPUs it runs on: those declared, or the one it has without them.
  size_t deviceCount() const { return devices.empty() ? 1 : devices.size(); }
};

struct Program {
  std::string source;
  std::vector<Pipeline> pipelines;
};

/// Marks loop-carried state: each buffer read in an iteration before that
/// iteration writes it (in program order: declaration order) is `state`,
/// whether declared so or not. Sema does it for a file; each builder of a
/// program without a parse does it too.
void markLoopCarried(Pipeline &p);

/// Whether a pipeline has a collective (version 4).
inline bool hasCollectives(const Pipeline &p) {
  for (const Stage &st : p.stages)
    if (isCollective(st))
      return true;
  return false;
}

} // namespace pipec::program

#endif // PIPEC_PROGRAM_PROGRAM_H
