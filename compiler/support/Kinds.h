//===- Kinds.h - The kinds of work a stage does, shared by every layer ----===//
//
// Made from StageKinds.def, the one table of stage kinds, copy directions
// and collective operations.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SUPPORT_KINDS_H
#define PIPEC_SUPPORT_KINDS_H

namespace pipec {

/// Memset (for imported traces): a device-side fill of device memory, as
/// cudaMemsetAsync does. Cpu (version 3): work on the host thread that
/// issues the pipeline, in issue order, on no stream. Collective (version
/// 4): one NCCL collective over several devices, a part on one stream of
/// each.
enum class StageKind {
#define STAGE_KIND(Name, Keyword, Version, Noun, OnHostThread) Name,
#include "compiler/support/StageKinds.def"
};
/// P2P (version 4): from a device to a peer device (NVLink or PCIe).
enum class CopyDirection {
#define COPY_DIRECTION(Name, Keyword, Version) Name,
#include "compiler/support/StageKinds.def"
};
/// The NCCL collectives a stage may be.
enum class CollectiveOp {
#define COLLECTIVE_OP(Name, Keyword) Name,
#include "compiler/support/StageKinds.def"
};

/// Every stage kind, in the table's order.
constexpr StageKind kStageKinds[] = {
#define STAGE_KIND(Name, Keyword, Version, Noun, OnHostThread) StageKind::Name,
#include "compiler/support/StageKinds.def"
};
constexpr CopyDirection kCopyDirections[] = {
#define COPY_DIRECTION(Name, Keyword, Version) CopyDirection::Name,
#include "compiler/support/StageKinds.def"
};
constexpr CollectiveOp kCollectiveOps[] = {
#define COLLECTIVE_OP(Name, Keyword) CollectiveOp::Name,
#include "compiler/support/StageKinds.def"
};

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

/// The language version that brought the kind (or the direction).
unsigned versionOf(StageKind kind);
unsigned versionOf(CopyDirection dir);
/// What diagnostics call stages of the kind: "cpu stages", "collectives".
const char *nounOf(StageKind kind);
/// Whether the kind runs on the host thread, in issue order, on no stream.
bool onHostThread(StageKind kind);

} // namespace pipec

#endif // PIPEC_SUPPORT_KINDS_H
