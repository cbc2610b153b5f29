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

__device__ __forceinline__ unsigned long long spinFor(unsigned long long ns) {
  __shared__ unsigned long long began;
  if (threadIdx.x == 0)
    began = globalTimer();
  __syncthreads();
  while (globalTimer() - began < ns) {
  }
  __syncthreads();
  return began;
}

__global__ void spin(unsigned long long ns, unsigned long long /*tag*/,
                     unsigned char *touch) {
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

__global__ void readTimer(unsigned long long *out) { *out = globalTimer(); }

__global__ void timerReadings(unsigned long long *out, unsigned n) {
  for (unsigned i = 0; i < n; ++i)
    out[i] = globalTimer();
}

cudaError_t launchSpin(dim3 grid, dim3 block, cudaStream_t stream,
                       unsigned long long ns, unsigned long long tag,
                       unsigned char *touch) {
  spin<<<grid, block, 0, stream>>>(ns, tag, touch);
  return cudaGetLastError();
}
const void *spinKernel() { return reinterpret_cast<const void *>(&spin); }

cudaError_t launchSpinStamped(dim3 grid, dim3 block, cudaStream_t stream,
                              unsigned long long ns, Stamp *stamp) {
  spinStamped<<<grid, block, 0, stream>>>(ns, stamp);
  return cudaGetLastError();
}
const void *spinStampedKernel() {
  return reinterpret_cast<const void *>(&spinStamped);
}

cudaError_t launchStampStart(cudaStream_t stream, Stamp *stamp) {
  stampStart<<<1, 1, 0, stream>>>(stamp);
  return cudaGetLastError();
}

cudaError_t launchResetStamps(cudaStream_t stream, Stamp *stamps, size_t n) {
  unsigned blocks = static_cast<unsigned>(std::min<size_t>((n + 255) / 256, 1024));
  resetStamps<<<blocks ? blocks : 1, 256, 0, stream>>>(stamps, n);
  return cudaGetLastError();
}

cudaError_t readGlobalTimer(unsigned long long *out) {
  unsigned long long *device = nullptr;
  cudaError_t status = cudaMalloc(&device, sizeof(*device));
  if (status != cudaSuccess)
    return status;
  readTimer<<<1, 1>>>(device);
  status = cudaMemcpy(out, device, sizeof(*out), cudaMemcpyDeviceToHost);
  cudaFree(device);
  return status;
}

cudaError_t launchTimerReadings(cudaStream_t stream, unsigned long long *out,
                                unsigned n) {
  timerReadings<<<1, 1, 0, stream>>>(out, n);
  return cudaGetLastError();
}

uint64_t hostNanoseconds() {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
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
