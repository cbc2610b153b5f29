//===- ProgramText.h - A program as text, for tests that compare two -----===//
#ifndef PIPEC_TESTS_PROGRAMTEXT_H
#define PIPEC_TESTS_PROGRAMTEXT_H

#include "compiler/program/ProgramDump.h"

namespace pipec::test {

/// program::dumpText (compiler/program/ProgramDump.h).
inline std::string programText(const program::Program &program) {
  return program::dumpText(program);
}

} // namespace pipec::test

#endif // PIPEC_TESTS_PROGRAMTEXT_H
