//===- Periodic.h - Where an unrolled schedule repeats itself -------------===//
//
// An unrolled pipeline issues the same calls iteration after iteration, but
// for the first few (no loop-carried dependency yet) and the last (a final
// synchronisation). The device model uses that: once its whole state at the
// start of a block of iterations equals the state a block earlier, shifted
// in time and in instance and op numbers, the blocks after it run the same
// way shifted again, as long as the calls they issue are the shifted calls
// too. This file finds the range of blocks where that holds; the model
// (model/sim/Extrapolation.cpp) compares the states and extrapolates.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_MODEL_PERIODIC_H
#define PIPEC_MODEL_PERIODIC_H

#include "compiler/schedule/Schedule.h"

#include <cstdint>
#include <vector>

namespace pipec::sim {

/// Blocks of `iterations` iterations; block b starts at the op that issues
/// (launches or runs) instance b * instances. Within blocks [first, end)
/// every op is the op `ops` before it shifted: the same kind, stream and
/// stage, its instance `instances` later, the record it binds to `ops`
/// later. Absent (iterations == 0) when no such range of at least a few
/// blocks exists.
struct Periodicity {
  uint32_t iterations = 0;
  uint32_t instances = 0;
  uint64_t ops = 0;
  uint32_t first = 0, end = 0;
  uint64_t firstOp = 0; ///< where block `first` starts
  /// The farthest a wait or sync reaches back to its record, in ops.
  uint64_t reach = 0;

  explicit operator bool() const { return iterations != 0; }
  /// Where block b starts, for b >= first - 1.
  uint64_t opOfBlock(uint32_t b) const {
    return b >= first ? firstOp + uint64_t(b - first) * ops : firstOp - ops;
  }
};

/// The periodic range of `list` (a lowering's host calls; `bound`: each
/// one's record, as the model binds them), trying blocks of 1 to 4
/// iterations; none for a pipeline of fewer than 16 iterations.
Periodicity findPeriodicity(const Schedule &s, const std::vector<Op> &list,
                            const std::vector<uint32_t> &bound);

/// The same for the graph lowering (one segment, no host work), where the
/// device takes nodes as their predecessors end: blocks whose instances
/// have the previous block's streams, predecessor counts (`indegree`) and
/// successors (`successors`), shifted.
Periodicity findGraphPeriodicity(const Schedule &s, const CSR &successors,
                                 const std::vector<uint32_t> &indegree);

} // namespace pipec::sim

#endif // PIPEC_MODEL_PERIODIC_H
