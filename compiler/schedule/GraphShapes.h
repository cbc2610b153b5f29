//===- GraphShapes.h - Which segments of the graph lowering are one graph --===//
//
// An iterated pipeline whose host synchronises every iteration (a decode
// loop: a token, a sync, the next) lowers to a segment per iteration, each
// the same graph: the same stages, the same edges within it and waits into
// it, the same ring slots. A real loop captures that graph once and
// replays it; the one-time cost (capture, instantiation, first upload) is
// one graph's, and what it saves is paid back in iterations.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SCHEDULE_GRAPHSHAPES_H
#define PIPEC_SCHEDULE_GRAPHSHAPES_H

#include "compiler/schedule/Schedule.h"

#include <vector>

namespace pipec {

/// Per segment of `s`'s graph lowering, the first segment that is the same
/// graph (itself when none before it is); `distinct` gets how many graphs
/// there are. Linear in the instances and edges.
std::vector<uint32_t> sameGraphAs(const Schedule &s, uint32_t &distinct);

} // namespace pipec

#endif // PIPEC_SCHEDULE_GRAPHSHAPES_H
