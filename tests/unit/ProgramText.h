//===- ProgramText.h - Every field of a program that means something ------===//
//
// A program as text, field by field, numbers to the bit (hexadecimal
// floats), source ranges left out: two programs built different ways (the
// front end's reading of a file, and the importer's own) compare as
// strings, and a difference shows where it is.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_TESTS_PROGRAMTEXT_H
#define PIPEC_TESTS_PROGRAMTEXT_H

#include "compiler/program/Program.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace pipec::test {

inline std::string programText(const program::Program &program) {
  std::string out;
  llvm::raw_string_ostream os(out);
  auto number = [&](double d) { os << llvm::format("%a", d); };
  for (const program::Pipeline &p : program.pipelines) {
    os << "pipeline " << p.name << " iterations=" << p.iterations
       << " syncDeclared=" << p.syncDeclared << "\n";
    for (const program::Stream &s : p.streams)
      os << "  stream " << s.name << " class=" << program::spelling(s.priorityClass)
         << " raw=" << s.rawPriority << " cuda=" << s.cudaPriority << " auto=" << s.isAuto
         << "\n";
    for (const program::Buffer &b : p.buffers)
      os << "  buffer " << b.name << " slots=" << b.slots << " bytes=" << b.bytes
         << " host=" << b.host << " state=" << b.state << "/" << b.stateDeclared << "\n";
    for (const program::Stage &s : p.stages) {
      os << "  stage " << s.name << " stream=" << s.stream << " kind=" << spelling(s.kind)
         << " direction=" << spelling(s.direction) << " us=";
      number(s.durationUs);
      os << " bytes=" << (s.bytes ? std::to_string(*s.bytes) : "-") << " blocks=" << s.blocks
         << " threads=" << s.threads << " smem=" << s.smemBytes << " regs=" << s.regs
         << " dynamic=" << s.dynamic << " graph=" << s.graph << " issue=";
      number(s.issueUs);
      os << " runs=" << s.runs.first << s.runs.last << "/" << s.runs.every << "\n";
      for (const program::Access &a : s.accesses)
        os << "    " << (a.write ? "writes " : "reads ") << a.buffer << "@" << a.distance
           << "\n";
      for (const program::Dependency &d : s.deps)
        os << "    dep " << d.stage << "@" << d.distance << " from " << d.inferredFrom << "\n";
    }
  }
  return os.str();
}

} // namespace pipec::test

#endif // PIPEC_TESTS_PROGRAMTEXT_H
