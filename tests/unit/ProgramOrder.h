//===- ProgramOrder.h - An unrolled program's accesses, in program order --===//
//
// For the slow, obvious checks of the data rules (tests/unit/DataTest.cpp,
// AdviseTest.cpp): every access of every instance, iteration after
// iteration, stages in declaration order (those that run in the iteration),
// reads before writes, each with the ring slot it touches.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_TESTS_PROGRAMORDER_H
#define PIPEC_TESTS_PROGRAMORDER_H

#include "compiler/program/Program.h"

#include <cstdint>
#include <vector>

namespace pipec::test {

struct Touch {
  uint32_t iteration, stage, buffer, slot;
  bool write;
};

inline std::vector<Touch> programOrder(const program::Pipeline &p) {
  std::vector<Touch> out;
  for (uint32_t it = 0; it < p.iterations; ++it)
    for (uint32_t k = 0; k < p.stages.size(); ++k)
      for (bool write : {false, true})
        if (p.stages[k].runs.runsIn(it, p.iterations))
          for (const program::Access &a : p.stages[k].accesses)
            if (a.write == write)
              out.push_back({it, k, a.buffer, a.slot(it, p.buffers[a.buffer].slots), write});
  return out;
}

} // namespace pipec::test

#endif // PIPEC_TESTS_PROGRAMORDER_H
