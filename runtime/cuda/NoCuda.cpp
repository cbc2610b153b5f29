//===- NoCuda.cpp - The CUDA backend's entry points, in a build without it ===//

#include "runtime/cuda/CudaBackend.h"

using namespace pipec;

bool runtime::cudaBuilt() { return false; }

llvm::Expected<std::unique_ptr<runtime::Backend>>
runtime::makeCudaBackend(const DeviceProfile &) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "no CUDA device: this build of pipec has no CUDA backend (nvcc was not "
      "found when it was configured)");
}

llvm::Expected<DeviceProfile> runtime::calibrate(const DeviceProfile &, llvm::raw_ostream &) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "no CUDA device: this build of pipec has no CUDA backend");
}
