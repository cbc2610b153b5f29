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
