//===- Kinds.cpp ----------------------------------------------------------===//

#include "compiler/support/Kinds.h"

const char *pipec::spelling(StageKind kind) {
  switch (kind) {
  case StageKind::Kernel:
    return "kernel";
  case StageKind::Copy:
    return "copy";
  case StageKind::Host:
    return "host";
  case StageKind::Memset:
    return "memset";
  case StageKind::Cpu:
    return "cpu";
  case StageKind::Collective:
    return "collective";
  }
  return "?";
}

const char *pipec::spelling(CopyDirection dir) {
  switch (dir) {
  case CopyDirection::H2D:
    return "h2d";
  case CopyDirection::D2H:
    return "d2h";
  case CopyDirection::D2D:
    return "d2d";
  case CopyDirection::P2P:
    return "p2p";
  }
  return "?";
}

const char *pipec::spelling(CollectiveOp op) {
  switch (op) {
  case CollectiveOp::AllReduce:
    return "allreduce";
  case CollectiveOp::AllGather:
    return "allgather";
  case CollectiveOp::ReduceScatter:
    return "reducescatter";
  case CollectiveOp::Broadcast:
    return "broadcast";
  }
  return "?";
}
