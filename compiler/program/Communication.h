//===- Communication.h - What counts as communication ----------*- C++ -*-===//
//
// One list, for every figure that splits a device's time into computation
// and communication (the analysis's comm_us and comm_hidden_fraction, the
// import report's recorded and predicted ones): collectives, peer copies,
// and the kernels whose names say they move data between GPUs.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_COMPILER_PROGRAM_COMMUNICATION_H
#define PIPEC_COMPILER_PROGRAM_COMMUNICATION_H

#include "compiler/program/Program.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace pipec::program {

/// Whether a kernel of this name moves data between GPUs: NCCL's (and
/// RCCL's) collectives and send/recv (`ncclKernel_…`, `ncclDevKernel_…`),
/// NVSHMEM's kernels (`nvshmem…`, anywhere in a scoped name), MSCCL's and
/// MSCCL++'s, the all-to-all dispatch, combine and notify kernels of
/// expert-parallel libraries (DeepEP's `deep_ep::…` and any
/// `…::ep::internode|intranode::…` namespace, as DualPipe's builds name
/// them; pplx-kernels'; anything named all-to-all), and the custom
/// all-reduces of inference servers (vLLM's `cross_device_reduce_…`,
/// TensorRT-LLM's one- and two-shot all-reduce kernels and fused
/// all-reduces); and whatever the user's pattern matches
/// (setUserCommunicationKernels). A leading "void " is skipped.
bool isCommunicationKernel(llvm::StringRef name);

/// A user's own communication kernels: an extended POSIX regular
/// expression that a kernel's name (its whole recorded name, or a stage's
/// name) need only contain a match of (`--comm-kernels`). Set once, by the
/// tool, before any command runs; an error says why an expression is bad,
/// and leaves the pattern unset. An empty one unsets it.
llvm::Error setUserCommunicationKernels(llvm::StringRef regex);

/// Whether a stage is communication: a collective, a peer copy, or a
/// kernel whose name (`kernelName`, or the stage's own when empty) is one
/// of isCommunicationKernel's.
bool isCommunication(const Stage &stage, llvm::StringRef kernelName = llvm::StringRef());

/// A collective's dependencies, and dependencies on it, spread over its
/// parts (sema does it to every checked program; a program built without a
/// parse, as the import of several ranks builds one, does it too): each
/// part keeps what runs on its own device and what runs on no device it
/// spans; a stage that depends on the collective depends on the part on
/// its own device, or on every part where it has none there.
void spreadCollectives(Pipeline &out);

} // namespace pipec::program

#endif // PIPEC_COMPILER_PROGRAM_COMMUNICATION_H
