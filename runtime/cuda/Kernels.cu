//===- Kernels.cu - Spin kernels, stamps, the host spin function ----------===//

#include "runtime/cuda/Kernels.h"

#include <chrono>

namespace pipec::cuda {

__device__ __forceinline__ unsigned long long globalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin(unsigned long long ns, Stamp *stamp) {
  __shared__ unsigned long long began;
  if (threadIdx.x == 0)
    began = globalTimer();
  __syncthreads();
  while (globalTimer() - began < ns) {
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicMin(&stamp->start, began);
    atomicMax(&stamp->end, globalTimer());
  }
}

__global__ void stampStart(Stamp *stamp) { stamp->start = globalTimer(); }
__global__ void stampEnd(Stamp *stamp) { stamp->end = globalTimer(); }

__global__ void resetStamps(Stamp *stamps, size_t n) {
  for (size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    stamps[i].start = ~0ull;
    stamps[i].end = 0;
  }
}

__global__ void readTimer(unsigned long long *out) { *out = globalTimer(); }

cudaError_t launchSpin(dim3 grid, dim3 block, cudaStream_t stream,
                       unsigned long long ns, Stamp *stamp) {
  spin<<<grid, block, 0, stream>>>(ns, stamp);
  return cudaGetLastError();
}
const void *spinKernel() { return reinterpret_cast<const void *>(&spin); }

cudaError_t launchStampStart(cudaStream_t stream, Stamp *stamp) {
  stampStart<<<1, 1, 0, stream>>>(stamp);
  return cudaGetLastError();
}
cudaError_t launchStampEnd(cudaStream_t stream, Stamp *stamp) {
  stampEnd<<<1, 1, 0, stream>>>(stamp);
  return cudaGetLastError();
}
const void *stampStartKernel() {
  return reinterpret_cast<const void *>(&stampStart);
}
const void *stampEndKernel() { return reinterpret_cast<const void *>(&stampEnd); }

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

void CUDART_CB hostSpin(void *microseconds) {
  double us = *static_cast<const double *>(microseconds);
  auto until = std::chrono::steady_clock::now() +
               std::chrono::nanoseconds(static_cast<long long>(us * 1000));
  while (std::chrono::steady_clock::now() < until) {
  }
}

} // namespace pipec::cuda
