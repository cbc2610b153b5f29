//===- ProgramDump.h - Every field of a program that means something ------===//
//
// A checked program as text, field by field, numbers to the bit
// (hexadecimal floats), source ranges left out: what `compile
// --print-after=check` shows a developer, and what tests compare when two
// programs are built different ways (the front end's reading of a file,
// and the importer's own): a difference shows where it is.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_COMPILER_PROGRAM_PROGRAMDUMP_H
#define PIPEC_COMPILER_PROGRAM_PROGRAMDUMP_H

#include "compiler/program/Program.h"

#include "llvm/Support/raw_ostream.h"

#include <string>

namespace pipec::program {

void dump(const Program &program, llvm::raw_ostream &os);
std::string dumpText(const Program &program);

} // namespace pipec::program

#endif // PIPEC_COMPILER_PROGRAM_PROGRAMDUMP_H
