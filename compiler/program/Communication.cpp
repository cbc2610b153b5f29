//===- Communication.cpp --------------------------------------------------===//

#include "compiler/program/Communication.h"

using namespace pipec;

bool program::isCommunicationKernel(llvm::StringRef name) {
  name = name.ltrim();
  if (name.startswith("void "))
    name = name.drop_front(5).ltrim();
  if (name.startswith("ncclKernel") || name.startswith("ncclDevKernel") ||
      name.startswith("nvshmem"))
    return true;
  // Expert parallelism's all-to-all: its dispatch and combine kernels.
  const std::string lower = name.lower();
  const llvm::StringRef l(lower);
  if (l.contains("alltoall") || l.contains("all_to_all"))
    return true;
  // DeepEP's (deep_ep::intranode::dispatch, ::combine; not its layout
  // kernels), pplx-kernels'.
  if (l.contains("deep_ep::"))
    return l.contains("::dispatch") || l.contains("::combine");
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
