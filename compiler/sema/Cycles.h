//===- Cycles.h - Dependency cycles within one iteration ------------------===//
#ifndef PIPEC_SEMA_CYCLES_H
#define PIPEC_SEMA_CYCLES_H

#include <cstdint>
#include <vector>

namespace pipec::sema {

/// `dependsOn[v]` lists the stages v depends on (same iteration only). Returns
/// one cycle for each strongly connected component that has one, each as
/// [s, x1, ..., xk]: s depends on x1, x1 on x2, ..., xk on s, where s is the
/// component's smallest index and the path is a shortest one. A self-loop is
/// not reported here. Linear time; no recursion.
std::vector<std::vector<uint32_t>>
findCycles(const std::vector<std::vector<uint32_t>> &dependsOn);

} // namespace pipec::sema

#endif // PIPEC_SEMA_CYCLES_H
