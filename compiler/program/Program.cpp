//===- Program.cpp --------------------------------------------------------===//

#include "compiler/program/Program.h"

using namespace pipec::program;

const char *pipec::program::spelling(StageKind kind) {
  switch (kind) {
  case StageKind::Kernel:
    return "kernel";
  case StageKind::Copy:
    return "copy";
  case StageKind::Host:
    return "host";
  }
  return "?";
}

const char *pipec::program::spelling(CopyDirection dir) {
  switch (dir) {
  case CopyDirection::H2D:
    return "h2d";
  case CopyDirection::D2H:
    return "d2h";
  case CopyDirection::D2D:
    return "d2d";
  }
  return "?";
}

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
