//===- Check.h - One checked-call helper for the CUDA runtime -------------===//
//
// Every CUDA call goes through PIPEC_CUDA_TRY, which turns a failure into an
// llvm::Error naming the call and what it was for (the stage, usually):
//   "cudaMemcpyAsync for stage 'H2D[3]': invalid argument"
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_CUDA_CHECK_H
#define PIPEC_RUNTIME_CUDA_CHECK_H

#include "llvm/Support/Error.h"

#include <cuda_runtime_api.h>

#include <string>

namespace pipec::cuda {

/// The error for a failed call; `context` is built only here, on failure.
inline llvm::Error failure(cudaError_t status, const char *call, const std::string &context) {
  std::string message = std::string(call);
  if (!context.empty())
    message += " for " + context;
  message += std::string(": ") + cudaGetErrorString(status);
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

inline llvm::Error check(cudaError_t status, const char *call, const std::string &context) {
  if (status == cudaSuccess)
    return llvm::Error::success();
  return failure(status, call, context);
}

} // namespace pipec::cuda

/// Calls `expr` (a CUDA runtime call); on failure returns an llvm::Error
/// from the enclosing function. `context` (what the call was for) is
/// evaluated only on failure: the issue path builds no string.
#define PIPEC_CUDA_TRY(expr, context)                                                         \
  do {                                                                                        \
    cudaError_t pipecStatus = (expr);                                                         \
    if (pipecStatus != cudaSuccess)                                                           \
      return ::llvm::Error(::pipec::cuda::failure(pipecStatus, #expr, (context)));            \
  } while (false)

#endif // PIPEC_RUNTIME_CUDA_CHECK_H
