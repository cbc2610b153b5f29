//===- Kernels.cu - The spin kernel, the host spin function, stamps -------===//

#include "runtime/cuda/Kernels.h"

#include <algorithm>
#include <chrono>

namespace pipec::cuda {

__device__ __forceinline__ unsigned long long globalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

/// Spins `ns` nanoseconds from this thread's first reading; returns it.
/// (No static shared memory: a block holds only the dynamic shared memory
/// it is launched with, as the model counts it.)
__device__ __forceinline__ unsigned long long spinFor(unsigned long long ns) {
  unsigned long long began = globalTimer();
  while (globalTimer() - began < ns) {
  }
  return began;
}

__global__ void spin(unsigned long long ns, unsigned long long /*tag*/, unsigned char *touch) {
  spinFor(ns);
  if (touch && blockIdx.x == 0 && threadIdx.x == 0)
    touch[0] = 1;
}

__global__ void spinStamped(unsigned long long ns, Stamp *stamp) {
  unsigned long long began = spinFor(ns);
  if (threadIdx.x == 0) {
    atomicMin(&stamp->start, began);
    atomicMax(&stamp->end, globalTimer());
  }
}

__global__ void stampStart(Stamp *stamp) { stamp->start = globalTimer(); }

__global__ void resetStamps(Stamp *stamps, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    stamps[i].start = ~0ull;
    stamps[i].end = 0;
  }
}

__global__ void clockProbe(volatile unsigned *request, volatile unsigned long long *stamps,
                           volatile unsigned *answer, unsigned samples,
                           unsigned long long timeoutNs) {
  for (unsigned i = 0; i < samples; ++i) {
    unsigned long long asked = globalTimer();
    while (*request != i + 1)
      if (globalTimer() - asked > timeoutNs)
        return;
    stamps[i] = globalTimer();
    __threadfence_system();
    *answer = i + 1;
    __threadfence_system();
  }
}

__global__ void timerReadings(unsigned long long *out, unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    out[i] = globalTimer();
}

cudaError_t launchSpin(dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                       unsigned long long ns, unsigned long long tag, unsigned char *touch) {
  spin<<<grid, block, smem, stream>>>(ns, tag, touch);
  return cudaGetLastError();
}
const void *spinKernel() { return reinterpret_cast<const void *>(&spin); }

cudaError_t prepareSpinKernel(int maxBytes) {
  cudaError_t status =
      cudaFuncSetAttribute(spin, cudaFuncAttributeMaxDynamicSharedMemorySize, maxBytes);
  if (status != cudaSuccess)
    return status;
  return cudaFuncSetAttribute(spin, cudaFuncAttributePreferredSharedMemoryCarveout,
                              int(cudaSharedmemCarveoutMaxShared));
}

cudaError_t spinOccupancy(int *blocksPerSM, unsigned threads, size_t smem) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocksPerSM, spin, int(threads), smem);
}

cudaError_t launchSpinStamped(dim3 grid, dim3 block, cudaStream_t stream,
                              unsigned long long ns, Stamp *stamp) {
  spinStamped<<<grid, block, 0, stream>>>(ns, stamp);
  return cudaGetLastError();
}
const void *spinStampedKernel() { return reinterpret_cast<const void *>(&spinStamped); }

cudaError_t launchStampStart(cudaStream_t stream, Stamp *stamp) {
  stampStart<<<1, 1, 0, stream>>>(stamp);
  return cudaGetLastError();
}

cudaError_t launchResetStamps(cudaStream_t stream, Stamp *stamps, size_t n) {
  unsigned blocks = static_cast<unsigned>(std::min<size_t>((n + 255) / 256, 1024));
  resetStamps<<<blocks ? blocks : 1, 256, 0, stream>>>(stamps, n);
  return cudaGetLastError();
}

cudaError_t launchClockProbe(cudaStream_t stream, volatile unsigned *request,
                             volatile unsigned long long *stamps, volatile unsigned *answer,
                             unsigned samples, unsigned long long timeoutNs) {
  clockProbe<<<1, 1, 0, stream>>>(request, stamps, answer, samples, timeoutNs);
  return cudaGetLastError();
}

cudaError_t launchTimerReadings(cudaStream_t stream, unsigned long long *out, unsigned n) {
  timerReadings<<<1, 1, 0, stream>>>(out, n);
  return cudaGetLastError();
}

uint64_t hostNanoseconds() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

void CUDART_CB hostSpin(void *userData) {
  HostWork &work = *static_cast<HostWork *>(userData);
  uint64_t (*clock)() = work.clock ? work.clock : hostNanoseconds;
  work.start = clock();
  auto until = std::chrono::steady_clock::now() +
               std::chrono::nanoseconds(static_cast<long long>(work.us * 1000));
  while (std::chrono::steady_clock::now() < until) {
  }
  work.end = clock();
}

} // namespace pipec::cuda
