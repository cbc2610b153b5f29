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
  if (isCollective(stage) ||
      (stage.kind == StageKind::Copy && stage.direction == CopyDirection::P2P))
    return true;
  return stage.kind == StageKind::Kernel &&
         isCommunicationKernel(kernelName.empty() ? llvm::StringRef(stage.name) : kernelName);
}
