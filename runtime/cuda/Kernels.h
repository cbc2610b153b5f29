//===- Kernels.h - The work a stage does on the GPU -----------------------===//
#ifndef PIPEC_RUNTIME_CUDA_KERNELS_H
#define PIPEC_RUNTIME_CUDA_KERNELS_H

#include <cuda_runtime_api.h>

#include <cstdint>

namespace pipec::cuda {

/// A kernel stage: every block spins for `ns` nanoseconds on %globaltimer,
/// launched with `smem` bytes of dynamic shared memory (SpinShape.inc says
/// how much of each). `tag` is not used by the kernel: it names the stage
/// instance (tagFor(v)), so that a captured graph's kernel nodes identify
/// themselves by their own arguments.
/// `touch`, when not null, is a declared buffer the stage accesses: one
/// thread writes a byte of it, so the kernel uses the memory it declares.
cudaError_t launchSpin(dim3 grid, dim3 block, size_t smem, cudaStream_t stream,
                       unsigned long long ns, unsigned long long tag, unsigned char *touch);
/// The spin kernel itself, for explicit graph kernel nodes: arguments
/// (unsigned long long ns, unsigned long long tag, unsigned char *touch).
const void *spinKernel();
/// Lets the spin kernel have all the dynamic shared memory a block may ask
/// (`maxBytes`), from the largest shared-memory carveout.
cudaError_t prepareSpinKernel(int maxBytes);
/// The occupancy calculator's blocks per SM for the spin kernel.
cudaError_t spinOccupancy(int *blocksPerSM, unsigned threads, size_t smem);

constexpr unsigned long long kTagMagic = 0x70697065ull << 32; // "pipe"
inline unsigned long long tagFor(uint32_t instance) { return kTagMagic | instance; }
/// The instance a tag names, or -1 when it is not one of pipec's.
inline int64_t instanceOfTag(unsigned long long tag) {
  return (tag >> 32) == (kTagMagic >> 32) ? int64_t(tag & 0xffffffffu) : -1;
}

/// A host stage's work: spin for `us` microseconds, and read `clock` (CUPTI's
/// or the host's, in nanoseconds) at the start and at the end.
struct HostWork {
  double us = 0;
  uint64_t (*clock)() = nullptr;
  uint64_t start = 0, end = 0;
};
/// The host function of a host stage: userData is a HostWork.
void CUDART_CB hostSpin(void *work);
/// The host clock in nanoseconds (steady_clock), for HostWork::clock.
uint64_t hostNanoseconds();

// ---- Calibration only: kernels that stamp %globaltimer -------------------

/// Stamps of one item, in %globaltimer nanoseconds: the earliest block start
/// and the latest block end.
struct Stamp {
  unsigned long long start;
  unsigned long long end;
};

/// Like launchSpin, and every block stamps its start (atomicMin) and end
/// (atomicMax) into `stamp`, which must be reset first.
cudaError_t launchSpinStamped(dim3 grid, dim3 block, cudaStream_t stream,
                              unsigned long long ns, Stamp *stamp);
const void *spinStampedKernel();

/// One thread writes %globaltimer into stamp->start.
cudaError_t launchStampStart(cudaStream_t stream, Stamp *stamp);

/// Sets every stamp to {max, 0}.
cudaError_t launchResetStamps(cudaStream_t stream, Stamp *stamps, size_t n);

/// The host/device clock probe: a one-thread kernel that, `samples` times,
/// waits until the host writes i + 1 to request[0] (mapped pinned memory),
/// writes %globaltimer to stamps[i] and then i + 1 to answer[0]. The host
/// brackets each round trip with its own clock (CalibrationMath's
/// clockOffset). It gives up after `timeoutNs` without a request.
cudaError_t launchClockProbe(cudaStream_t stream, volatile unsigned *request,
                             volatile unsigned long long *stamps, volatile unsigned *answer,
                             unsigned samples, unsigned long long timeoutNs);

/// `n` successive readings of %globaltimer by one thread, into `out` (device).
cudaError_t launchTimerReadings(cudaStream_t stream, unsigned long long *out, unsigned n);

} // namespace pipec::cuda

#endif // PIPEC_RUNTIME_CUDA_KERNELS_H
