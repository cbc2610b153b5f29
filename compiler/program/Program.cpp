//===- Program.cpp --------------------------------------------------------===//

#include "compiler/program/Program.h"

using namespace pipec::program;

const char *pipec::program::spelling(PriorityClass cls) {
  switch (cls) {
  case PriorityClass::High:
    return "high";
  case PriorityClass::Normal:
    return "normal";
  case PriorityClass::Low:
    return "low";
  case PriorityClass::Raw:
    return "raw";
  }
  return "?";
}

void pipec::program::markLoopCarried(Pipeline &p) {
  const size_t n = p.buffers.size();
  std::vector<uint8_t> written(n, 0), readFirst(n, 0);
  for (const Stage &st : p.stages)
    for (bool write : {false, true})
      for (const Access &a : st.accesses) {
        if (a.write != write)
          continue;
        if (!write && !written[a.buffer])
          readFirst[a.buffer] = 1;
        if (write)
          written[a.buffer] = 1;
      }
  for (size_t b = 0; b < n; ++b)
    if (readFirst[b] && written[b])
      p.buffers[b].state = true;
}

Stage pipec::program::pageableWait(const Stage &copy, uint32_t copyIndex,
                                   uint32_t hostDevice) {
  Stage wait;
  wait.name = copy.name + ":host";
  wait.range = copy.range;
  wait.runs = copy.runs;
  CpuWork work;
  work.hostDevice = hostDevice;
  work.pageableWait = true;
  wait.work = work;
  wait.deps.push_back(Dependency{copyIndex, 0, copy.range, -1});
  return wait;
}
