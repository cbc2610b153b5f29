//===- Kinds.h - The kinds of work a stage does, shared by every layer ----===//
#ifndef PIPEC_SUPPORT_KINDS_H
#define PIPEC_SUPPORT_KINDS_H

namespace pipec {

/// Memset (language version 2, for imported traces): a device-side fill of
/// device memory, as cudaMemsetAsync does. Cpu (version 3): work on the
/// host thread that issues the pipeline, in issue order, on no stream.
/// Collective (version 4): one NCCL collective over several devices, a part
/// on one stream of each.
enum class StageKind { Kernel, Copy, Host, Memset, Cpu, Collective };
/// P2P (version 4): from a device to a peer device (NVLink or PCIe).
enum class CopyDirection { H2D, D2H, D2D, P2P };

/// The NCCL collectives a stage may be.
enum class CollectiveOp { AllReduce, AllGather, ReduceScatter, Broadcast };

/// The copy engine a direction uses (its index among h2d, d2h, d2d): a peer
/// copy is made by the source device's device-to-device engine.
inline unsigned engineIndex(CopyDirection dir) {
  return dir == CopyDirection::P2P ? 2u : static_cast<unsigned>(dir);
}

/// The keyword that spells the kind: "kernel", "copy", "host", "memset",
/// "cpu"; "collective" (whose keyword is its operation).
const char *spelling(StageKind kind);
/// "h2d", "d2h", "d2d", "p2p".
const char *spelling(CopyDirection dir);
/// "allreduce", "allgather", "reducescatter", "broadcast".
const char *spelling(CollectiveOp op);

} // namespace pipec

#endif // PIPEC_SUPPORT_KINDS_H
