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

namespace pipec::program {

/// Whether a kernel of this name moves data between GPUs: NCCL's (and
/// RCCL's) collectives and send/recv (`ncclKernel_…`, `ncclDevKernel_…`),
/// NVSHMEM's kernels, and the all-to-all dispatch and combine kernels of
/// expert-parallel libraries (DeepEP's `deep_ep::…::dispatch`/`combine`,
/// pplx-kernels', anything named all-to-all). A leading "void " is skipped.
bool isCommunicationKernel(llvm::StringRef name);

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
