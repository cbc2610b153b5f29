//===- Kernels.h - The work a stage does on the GPU -----------------------===//
#ifndef PIPEC_RUNTIME_CUDA_KERNELS_H
#define PIPEC_RUNTIME_CUDA_KERNELS_H

#include <cuda_runtime_api.h>

#include <cstdint>

namespace pipec::cuda {

/// Stamps of one stage instance, in %globaltimer nanoseconds: the earliest
/// block start and the latest block end.
struct Stamp {
  unsigned long long start;
  unsigned long long end;
};

/// A kernel stage: every block spins for `ns` nanoseconds on %globaltimer,
/// and stamps its start (atomicMin) and end (atomicMax) into `stamp`.
cudaError_t launchSpin(dim3 grid, dim3 block, cudaStream_t stream,
                       unsigned long long ns, Stamp *stamp);
/// The spin kernel itself, for explicit graph kernel nodes.
const void *spinKernel();

/// One thread writes %globaltimer into *slot (start or end of a copy or a
/// host stage, which cannot stamp themselves).
cudaError_t launchStampStart(cudaStream_t stream, Stamp *stamp);
cudaError_t launchStampEnd(cudaStream_t stream, Stamp *stamp);
const void *stampStartKernel();
const void *stampEndKernel();

/// Sets every stamp to {max, 0} before a replay.
cudaError_t launchResetStamps(cudaStream_t stream, Stamp *stamps, size_t n);

/// Reads %globaltimer once, from a one-thread kernel (synchronously).
cudaError_t readGlobalTimer(unsigned long long *out);

/// A host stage: spins on the host for the microseconds *userData points to.
void CUDART_CB hostSpin(void *microseconds);

} // namespace pipec::cuda

#endif // PIPEC_RUNTIME_CUDA_KERNELS_H
