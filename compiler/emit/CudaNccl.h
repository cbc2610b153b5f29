//===- CudaNccl.h - NCCL in the emitted CUDA program ----------------------===//
//
// A program with collectives (language version 4) calls NCCL, loaded at
// run time with dlopen (libnccl.so.2), as pipec loads CUPTI: it builds
// where NCCL is not installed, and says so when it runs without it. The few
// prototypes it calls are declared here, from NCCL's C ABI.
//
// Each collective is one communicator per set of devices it spans (made
// once, by ncclCommInitAll: one rank per device, in the order the stage
// lists its streams), and one NCCL call per part, all of them inside one
// ncclGroupStart/ncclGroupEnd.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_EMIT_CUDANCCL_H
#define PIPEC_EMIT_CUDANCCL_H

#include "compiler/schedule/Schedule.h"

#include <cstdint>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace pipec {

/// The loader and the prototypes: what every program with collectives
/// shares, before its pipelines.
extern const char *const kNcclPrelude;

/// The communicators of one pipeline: a set of devices per distinct list
/// of devices a collective spans; each part's rank in its set.
class Communicators {
public:
  /// `profile` gives the bytes of a collective given a time.
  Communicators(const Schedule &s, const DeviceProfile &profile);

  /// The tables (kParts, kPartDevice, kPartBytes, kPartComm, the sets) and
  /// `makeComms`/`destroyComms`, inside the pipeline's namespace.
  void writeTables(llvm::raw_ostream &os) const;
  /// The NCCL call of instance v, a collective's part, with its stream.
  void writeCall(llvm::raw_ostream &os, uint32_t v, const std::string &stream) const;
  /// Stage k's index among the parts (runPart's argument), or -1.
  int32_t partOfStage(uint32_t k) const { return partOf[k]; }

private:
  const Schedule &s;
  std::vector<int32_t> partOf;             ///< per stage: its index among parts, or -1
  std::vector<uint32_t> partStage;         ///< per part: its stage
  std::vector<uint32_t> partComm;          ///< per part: its communicator slot
  std::vector<uint64_t> partBytes;         ///< per part: its buffer's bytes
  std::vector<std::vector<uint32_t>> sets; ///< devices of each communicator set
};

} // namespace pipec

#endif // PIPEC_EMIT_CUDANCCL_H
