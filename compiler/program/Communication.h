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

} // namespace pipec::program

#endif // PIPEC_COMPILER_PROGRAM_COMMUNICATION_H
