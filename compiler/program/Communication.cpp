//===- Communication.cpp --------------------------------------------------===//

#include "compiler/program/Communication.h"
#include "compiler/support/Printable.h"

#include "llvm/Support/Regex.h"

#include <optional>

using namespace pipec;

namespace {
/// The user's pattern (--comm-kernels); none unless set.
std::optional<llvm::Regex> &userPattern() {
  static std::optional<llvm::Regex> pattern;
  return pattern;
}
} // namespace

llvm::Error program::setUserCommunicationKernels(llvm::StringRef regex) {
  userPattern().reset();
  if (regex.empty())
    return llvm::Error::success();
  llvm::Regex pattern(regex, llvm::Regex::NoFlags);
  std::string why;
  if (!pattern.isValid(why))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--comm-kernels: '" + printable(regex) +
                                       "' is not a regular expression: " + why);
  userPattern() = std::move(pattern);
  return llvm::Error::success();
}

bool program::isCommunicationKernel(llvm::StringRef name) {
  if (userPattern() && userPattern()->match(name))
    return true;
  name = name.ltrim();
  if (name.startswith("void "))
    name = name.drop_front(5).ltrim();
  if (name.startswith("ncclKernel") || name.startswith("ncclDevKernel") ||
      name.startswith("nvshmem"))
    return true;
  const std::string lower = name.lower();
  const llvm::StringRef l(lower);
  // NVSHMEM's kernels in a scope (nvshmemi_…, nvshmem::…), MSCCL's and
  // MSCCL++'s.
  if (l.contains("nvshmem") || l.contains("msccl"))
    return true;
  // Expert parallelism's all-to-all: its dispatch and combine kernels.
  if (l.contains("alltoall") || l.contains("all_to_all"))
    return true;
  // The custom all-reduces of inference servers: vLLM's
  // (vllm::cross_device_reduce_1stage, _2stage), TensorRT-LLM's
  // (oneShotAllReduceKernel, twoShotAllReduceKernel, allreduce_fusion_…).
  if (l.contains("cross_device_reduce") || l.contains("oneshotallreduce") ||
      l.contains("twoshotallreduce") || l.contains("allreduce_fusion") ||
      l.contains("custom_all_reduce"))
    return true;
  // DeepEP's (deep_ep::intranode::dispatch, ::combine, ::notify_dispatch;
  // not its layout kernels), and any `…::ep::internode|intranode::`
  // namespace (DualPipe's dpsk::ep::internode::dispatch); pplx-kernels'.
  auto epKernel = [&] {
    return l.contains("dispatch") || l.contains("combine") || l.contains("notify");
  };
  if (l.contains("deep_ep::") || l.contains("ep::internode::") ||
      l.contains("ep::intranode::"))
    return !l.contains("layout") && epKernel();
  return l.contains("pplx") && (l.contains("dispatch") || l.contains("combine"));
}

bool program::isCommunication(const Stage &stage, llvm::StringRef kernelName) {
  if (isCollective(stage) || isPeerCopy(stage))
    return true;
  return stage.kind() == StageKind::Kernel &&
         isCommunicationKernel(kernelName.empty() ? llvm::StringRef(stage.name) : kernelName);
}

/// A collective's dependencies, and dependencies on it, between its parts:
/// each part waits for what runs on its own device (a `cpu` stage is on its
/// host thread's device; what runs on a device it does not span, or a host
/// stage without a stream, every part waits for), and a stage that depends
/// on it waits for the part on its own device (every part, where it has
/// none there).
void program::spreadCollectives(Pipeline &out) {
  constexpr uint32_t kHost = UINT32_MAX;
  auto deviceOf = [&](uint32_t v) {
    const Stage &st = out.stages[v];
    if (onHostThread(st.kind()) && !out.devices.empty())
      return st.cpu().hostDevice;
    return st.stream == kNoStream ? kHost : out.streams[st.stream].device;
  };
  auto partOn = [&](uint32_t group, uint32_t device) -> uint32_t {
    for (uint32_t k = 0; k < out.stages[group].collective().parts; ++k)
      if (deviceOf(group + k) == device)
        return group + k;
    return UINT32_MAX;
  };
  // A dependency of a stage on `device`: on the part there, or every part.
  auto retarget = [&](const Dependency &d, uint32_t device, std::vector<Dependency> &into) {
    const Stage &target = out.stages[d.stage];
    if (collectiveParts(target) < 2) {
      into.push_back(d);
      return;
    }
    uint32_t part = device == kHost ? UINT32_MAX : partOn(d.stage, device);
    for (uint32_t k = 0; k < target.collective().parts; ++k)
      if (part == UINT32_MAX || part == d.stage + k) {
        Dependency moved = d;
        moved.stage = d.stage + k;
        into.push_back(moved);
      }
  };
  std::vector<Dependency> spread;
  for (uint32_t v = 0; v < out.stages.size(); ++v) {
    Stage &st = out.stages[v];
    bool touches = collectiveParts(st) > 1;
    for (const Dependency &d : st.deps)
      touches |= collectiveParts(out.stages[d.stage]) > 1;
    if (!touches)
      continue;
    const uint32_t device = deviceOf(v);
    spread.clear();
    for (const Dependency &d : st.deps) {
      if (collectiveParts(st) > 1 && !isCollective(out.stages[d.stage])) {
        // A part keeps what its own device runs, and what no part's does.
        uint32_t from = deviceOf(d.stage);
        if (from != device && from != kHost &&
            partOn(st.collective().group, from) != UINT32_MAX)
          continue;
      }
      retarget(d, device, spread);
    }
    st.deps = spread;
  }
}
