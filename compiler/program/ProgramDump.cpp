//===- ProgramDump.cpp ----------------------------------------------------===//

#include "compiler/program/ProgramDump.h"
#include "compiler/support/Overloaded.h"

#include "llvm/Support/Format.h"

using namespace pipec;

void program::dump(const Program &program, llvm::raw_ostream &os) {
  auto number = [&](double d) { os << llvm::format("%a", d); };
  for (const Pipeline &p : program.pipelines) {
    os << "pipeline " << p.name << " iterations=" << p.iterations
       << " syncDeclared=" << p.syncDeclared << "\n";
    for (const Device &d : p.devices)
      os << "  device " << d.name << "\n";
    for (const Stream &s : p.streams)
      os << "  stream " << s.name << " class=" << spelling(s.priorityClass)
         << " raw=" << s.rawPriority << " cuda=" << s.cudaPriority << " auto=" << s.isAuto
         << " device=" << s.device << "\n";
    for (const Buffer &b : p.buffers)
      os << "  buffer " << b.name << " slots=" << b.slots << " bytes=" << b.bytes
         << " host=" << b.host << " state=" << b.state << "/" << b.stateDeclared
         << " device=" << b.device << "\n";
    for (const Stage &s : p.stages) {
      os << "  stage " << s.name << " stream=" << s.stream << " kind=" << spelling(s.kind());
      std::visit(Overloaded{
                     [&](const KernelWork &k) {
                       os << " blocks=" << k.blocks << " threads=" << k.threads
                          << " smem=" << k.smemBytes << " regs=" << k.regs;
                     },
                     [&](const CopyWork &c) {
                       os << " direction=" << spelling(c.direction)
                          << " peer=" << c.peerDevice;
                       if (c.pageable)
                         os << " pageable";
                     },
                     [&](const HostWork &) {},
                     [&](const MemsetWork &) {},
                     [&](const CpuWork &c) {
                       os << " hostDevice=" << c.hostDevice;
                       if (c.pageableWait)
                         os << " pageableWait";
                     },
                     [&](const CollectiveWork &c) {
                       os << " collective=" << spelling(c.op) << " group=" << c.group
                          << " parts=" << c.parts;
                     },
                 },
                 s.work);
      os << " us=";
      number(s.durationUs);
      os << " bytes=" << (s.bytes ? std::to_string(*s.bytes) : "-") << " dynamic=" << s.dynamic
         << " graph=" << s.graph << " issue=";
      number(s.issueUs);
      os << " runs=" << s.runs.first << s.runs.last << "/" << s.runs.every << "\n";
      for (const Access &a : s.accesses)
        os << "    " << (a.write ? "writes " : "reads ") << a.buffer << "@" << a.distance
           << "\n";
      for (const Dependency &d : s.deps)
        os << "    dep " << d.stage << "@" << d.distance << " from " << d.inferredFrom << "\n";
    }
  }
}

std::string program::dumpText(const Program &program) {
  std::string out;
  llvm::raw_string_ostream os(out);
  dump(program, os);
  return os.str();
}
