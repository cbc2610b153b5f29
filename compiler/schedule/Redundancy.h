//===- Redundancy.h - Declared dependencies implied by the others ---------===//
//
// A declared dependency p -> v is redundant when another declared dependency
// q of v already has p as an ancestor. This finds every one, exactly, for
// the redundant-dependency lint and the stage graph's reduction, with no
// cap on the number of stages.
//
// The vertices are covered by chains (paths of kept dependencies), and each
// vertex keeps a sparse vector clock: per chain, the position plus one of
// its latest ancestor there. An entry is dropped from a vertex's clock once
// no later vertex can ask about that chain's ancestors -- every one of them
// was last declared as a dependency before this vertex -- so a clock holds
// only the chains that some dependency edge spans across the vertex. On
// the pipelines people write and generate (mostly local edges) that is a
// handful, and the pass is linear in stages plus edges. Graphs where many
// long edges cross many chains make it costlier; past a work budget
// proportional to the graph the pass stops and says so, rather than
// answering late or wrongly.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SCHEDULE_REDUNDANCY_H
#define PIPEC_SCHEDULE_REDUNDANCY_H

#include "compiler/schedule/Instances.h"

#include <cstdint>
#include <vector>

namespace pipec {

struct DeclaredRedundancy {
  /// Parallel to the dependencies' targets: 1 if the edge is needed (every
  /// edge when the pass did not complete).
  std::vector<uint8_t> kept;
  /// False when the work budget ran out; then nothing is known.
  bool complete = true;
  uint64_t work = 0; ///< clock entries read and written
};

/// `deps`: each vertex's dependencies, ascending positions, all smaller
/// than the vertex (a topological order). `budget`: clock entries read and
/// written at most; 0 for the default, proportional to vertices + edges.
DeclaredRedundancy findRedundantDependencies(const CSR &deps, uint64_t budget = 0);

/// The default budget for a graph of this size.
uint64_t defaultRedundancyBudget(const CSR &deps);

} // namespace pipec

#endif // PIPEC_SCHEDULE_REDUNDANCY_H
