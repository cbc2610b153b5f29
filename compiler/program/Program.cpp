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
