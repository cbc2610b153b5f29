//===- Cupti.h - CUPTI's Activity API, loaded at run time -----------------===//
//
// libcupti.so is opened with dlopen the first time it is needed, so that
// pipec starts (and says "no CUDA device") where it is absent. The Activity
// API records every kernel and copy with its start and end on CUPTI's clock,
// which cuptiGetTimestamp() reads on the host: the profilers' way of timing.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_CUDA_CUPTI_H
#define PIPEC_RUNTIME_CUDA_CUPTI_H

#include "runtime/timing/Timing.h"

#include "llvm/Support/Error.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

namespace pipec::cuda {

/// Whether CUPTI could be loaded and its callbacks registered (once per
/// process; later calls return the first answer).
const runtime::CuptiStatus &cuptiStatus();

/// CUPTI's clock, in nanoseconds (only when cuptiStatus().usable).
uint64_t cuptiNow();

/// CUPTI's id of a stream, and of a graph node, as its records carry them.
llvm::Expected<uint32_t> cuptiStreamId(cudaStream_t stream);
llvm::Expected<uint64_t> cuptiNodeId(cudaGraphNode_t node);

/// Starts collecting CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED reports (a
/// subscriber to CUPTI's resource callbacks, made once): call it before the
/// cudaGraphInstantiate whose clones are wanted.
llvm::Error cuptiBeginClones();
/// Stops collecting and returns the clones reported since the begin.
llvm::Expected<std::vector<runtime::NodeClone>> cuptiEndClones();

/// Starts recording kernels and copies (concurrent kernel mode, which does
/// not serialise them).
llvm::Error cuptiStartRecording();
/// Flushes, stops recording and returns what was recorded since the start.
llvm::Expected<std::vector<runtime::DeviceRecord>> cuptiStopRecording();

} // namespace pipec::cuda

#endif // PIPEC_RUNTIME_CUDA_CUPTI_H
