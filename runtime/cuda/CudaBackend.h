//===- CudaBackend.h - The schedule on a real GPU -------------------------===//
#ifndef PIPEC_RUNTIME_CUDA_CUDABACKEND_H
#define PIPEC_RUNTIME_CUDA_CUDABACKEND_H

#include "runtime/Backend.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class raw_ostream;
}

namespace pipec::runtime {

/// Whether this build has the CUDA backend at all.
bool cudaBuilt();

/// The CUDA backend on device 0; an error whose message starts with
/// "no CUDA device" when none answers (or this build has no CUDA backend).
llvm::Expected<std::unique_ptr<Backend>> makeCudaBackend(const DeviceProfile &profile);

/// Measures the device model's parameters on device 0 and returns a profile
/// (the defaults for what it does not measure). Progress goes to `log`.
llvm::Expected<DeviceProfile> calibrate(const DeviceProfile &defaults, llvm::raw_ostream &log);

} // namespace pipec::runtime

#endif // PIPEC_RUNTIME_CUDA_CUDABACKEND_H
