//===- SlowHappensBefore.h - A schedule's happens-before by brute force ---===//
//
// The relation every lowering keeps, the slow, obvious way: the transitive
// closure of declared and inferred dependencies, stream order, and host
// program order (on each device's host thread, a cpu stage follows the one
// before it, and everything that thread issues after it follows it). reach[u][v]: u happens
// before v. For the small programs of randomized tests (quadratic memory, cubic time).
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_TESTS_SLOWHAPPENSBEFORE_H
#define PIPEC_TESTS_SLOWHAPPENSBEFORE_H

#include "compiler/schedule/Schedule.h"

#include <cstdint>
#include <vector>

namespace pipec::test {

inline std::vector<std::vector<uint8_t>> happensBefore(const Schedule &s) {
  const size_t n = s.instances.size();
  std::vector<std::vector<uint8_t>> reach(n, std::vector<uint8_t>(n, 0));
  // Each stream is a chain, and so is each device's host thread; a cpu
  // stage comes before what its own thread issues after it.
  std::vector<int64_t> last(s.chains(), -1);
  std::vector<int64_t> lastCpu(s.pipeline.deviceCount(), -1);
  for (uint32_t v = 0; v < n; ++v) {
    std::vector<uint32_t> preds(s.instances.deps().row(v).begin(),
                                s.instances.deps().row(v).end());
    const uint32_t thread = s.threadOf(v);
    if (lastCpu[thread] >= 0)
      preds.push_back(uint32_t(lastCpu[thread]));
    const uint32_t chain = s.streamOf(v);
    if (last[chain] >= 0)
      preds.push_back(uint32_t(last[chain]));
    last[chain] = v;
    if (s.onHost(v))
      lastCpu[thread] = v;
    for (uint32_t u : preds) {
      reach[u][v] = 1;
      for (uint32_t w = 0; w < n; ++w)
        if (reach[w][u])
          reach[w][v] = 1;
    }
  }
  return reach;
}

} // namespace pipec::test

#endif // PIPEC_TESTS_SLOWHAPPENSBEFORE_H
