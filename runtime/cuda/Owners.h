//===- Owners.h - Move-only owners of CUDA streams, events, graphs, memory ===//
#ifndef PIPEC_RUNTIME_CUDA_OWNERS_H
#define PIPEC_RUNTIME_CUDA_OWNERS_H

#include <cuda_runtime_api.h>

#include <utility>

namespace pipec::cuda {

/// Owns one handle; destroys it with `Destroy` unless empty. Move-only.
template <typename Handle, cudaError_t (*Destroy)(Handle)> class Owner {
public:
  Owner() = default;
  explicit Owner(Handle h) : handle(h) {}
  Owner(Owner &&o) noexcept : handle(std::exchange(o.handle, Handle{})) {}
  Owner &operator=(Owner &&o) noexcept {
    if (this != &o) {
      reset();
      handle = std::exchange(o.handle, Handle{});
    }
    return *this;
  }
  Owner(const Owner &) = delete;
  Owner &operator=(const Owner &) = delete;
  ~Owner() { reset(); }

  Handle get() const { return handle; }
  /// For the CUDA call that creates the handle.
  Handle *out() {
    reset();
    return &handle;
  }
  void reset() {
    if (handle)
      (void)Destroy(handle);
    handle = Handle{};
  }

private:
  Handle handle{};
};

inline cudaError_t freeDevice(void *p) { return cudaFree(p); }
inline cudaError_t freePinned(void *p) { return cudaFreeHost(p); }

using Stream = Owner<cudaStream_t, cudaStreamDestroy>;
using Event = Owner<cudaEvent_t, cudaEventDestroy>;
using Graph = Owner<cudaGraph_t, cudaGraphDestroy>;
using GraphExec = Owner<cudaGraphExec_t, cudaGraphExecDestroy>;
using DeviceMemory = Owner<void *, freeDevice>;
using PinnedMemory = Owner<void *, freePinned>;

} // namespace pipec::cuda

#endif // PIPEC_RUNTIME_CUDA_OWNERS_H
