//===- InputsFuzzer.cpp - libFuzzer over pipec's other inputs -------------===//
//
// The JSON that pipec reads besides .pipe files: device profiles
// (`--profile`) and PyTorch profiler traces (`pipec import`). The first
// byte picks which. A profile that parses must write out and read back the
// same; a trace that parses is imported, written as a .pipe file, and that
// file must check clean, be laid out as fmt lays it out, and read back to
// the program the importer builds itself. With bit 2 of the first byte set
// too, the trace is imported as two ranks (itself twice, its collectives
// matched with themselves), and that file must check clean and be laid
// out as fmt lays it out. With bit 3 (4), the rest is an Nsight Systems
// SQLite export, written to a file and read as `pipec import` reads one:
// each process's step must give a file that checks clean, to the program
// the importer builds. With bit 4 (8), the rest is a PyTorch execution
// trace: one that reads is linked, every way, to framework ops named as
// its own ops (each link must join two ops of one name), and gives a
// small step its data: that file must check clean, to the program the
// importer builds. Crashes, sanitizer reports, leaks, hangs and
// inputs over the time or memory budget (scripts/fuzz's -timeout and
// -rss_limit_mb) are findings; errors are the expected answer to bad input.
//
//===----------------------------------------------------------------------===//

#include "../unit/ProgramText.h"
#include "compiler/diag/Diagnostics.h"
#include "compiler/format/Formatter.h"
#include "compiler/parse/Parser.h"
#include "compiler/program/DeviceProfile.h"
#include "compiler/sema/Sema.h"
#include "runtime/import/ExecutionTrace.h"
#include "runtime/import/PipeFile.h"
#include "runtime/import/Ranks.h"
#include "runtime/import/StepData.h"
#include "runtime/import/Trace.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <unistd.h>

using namespace pipec;

namespace {

void fuzzProfile(llvm::StringRef json) {
  llvm::Expected<DeviceProfile> profile = parseDeviceProfile(json);
  if (!profile) {
    llvm::consumeError(profile.takeError());
    return;
  }
  std::string written, again;
  llvm::raw_string_ostream os(written);
  writeDeviceProfile(*profile, os);
  llvm::Expected<DeviceProfile> reread = parseDeviceProfile(os.str());
  if (!reread) // what pipec writes, it reads
    __builtin_trap();
  llvm::raw_string_ostream os2(again);
  writeDeviceProfile(*reread, os2);
  if (os2.str() != os.str())
    __builtin_trap();
}

/// An imported file checks clean, without an error or a warning (but that
/// its streams outnumber the hardware queues, as the recording's did), and
/// is laid out as fmt lays it out: anything else is a finding (the import
/// would end in "internal error", or write a file every command warns of).
/// Its program.
program::Program checkedAndLaidOut(const std::string &pipe, const DeviceProfile &profile) {
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(pipe, "import.pipe"), llvm::SMLoc());
  std::string printed;
  llvm::raw_string_ostream os(printed);
  DiagnosticEngine diags(printingHandler(sm, os, "import.pipe", false), 20);
  ast::File file = parseFile(sm, id, "import.pipe", diags);
  program::Program program;
  if (!diags.hadError())
    program = analyze(file, profile, diags);
  if (diags.hadError() || program.pipelines.empty())
    __builtin_trap();
  for (llvm::StringRef rest = os.str(); !rest.empty();) {
    auto [line, next] = rest.split('\n');
    if (line.contains(": warning: ") && !line.contains("hardware queues"))
      __builtin_trap();
    rest = next;
  }
  if (formatFile(file, sm.getMemoryBuffer(id)->getBuffer()) != pipe)
    __builtin_trap();
  return program;
}

/// The trace's default step, when it is a trace that has one.
std::optional<importer::ImportedStep> stepOf(llvm::StringRef json) {
  llvm::Expected<importer::Trace> trace = importer::parseTrace(json);
  if (!trace) {
    llvm::consumeError(trace.takeError());
    return std::nullopt;
  }
  llvm::Expected<importer::ImportedStep> step =
      importer::selectStep(std::move(*trace), std::nullopt);
  if (!step) {
    llvm::consumeError(step.takeError());
    return std::nullopt;
  }
  return std::move(*step);
}

/// A step's file checks clean, is laid out as fmt lays it out, and reads
/// back to the importer's own program.
void checkStep(const importer::ImportedStep &step);

void fuzzTrace(llvm::StringRef json) {
  std::optional<importer::ImportedStep> step = stepOf(json);
  if (!step)
    return;
  checkStep(*step);
}

void fuzzExport(llvm::StringRef bytes) {
  // SQLite reads a file: one per fuzzing process, rewritten each input.
  static const std::string path =
      (std::getenv("TMPDIR") ? std::string(std::getenv("TMPDIR")) : std::string("/tmp")) +
      "/pipec-fuzz-" + std::to_string(::getpid()) + ".sqlite";
  {
    std::FILE *f = std::fopen(path.c_str(), "wb");
    if (!f)
      return;
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
  }
  llvm::Expected<std::vector<importer::Trace>> processes = importer::readRecording(path);
  if (!processes) {
    llvm::consumeError(processes.takeError());
    return;
  }
  for (importer::Trace &trace : *processes) {
    llvm::Expected<importer::ImportedStep> step =
        importer::selectStep(std::move(trace), std::nullopt);
    if (!step) {
      llvm::consumeError(step.takeError());
      continue;
    }
    checkStep(*step);
  }
}

void checkStep(const importer::ImportedStep &step) {
  DeviceProfile profile = importer::profileFor(step.device);
  llvm::Expected<std::string> pipe = importer::writePipe(step, "fuzz.json", profile);
  if (!pipe) {
    llvm::consumeError(pipe.takeError());
    return;
  }
  // An accepted trace gives a file that checks clean, laid out as fmt
  // lays it out, and read back to the importer's program.
  program::Program program = checkedAndLaidOut(*pipe, profile);
  llvm::Expected<program::Program> built = importer::programOf(step, profile);
  if (!built)
    __builtin_trap();
  program.source = built->source;
  if (test::programText(*built) != test::programText(program))
    __builtin_trap();
}

void fuzzRanks(llvm::StringRef json) {
  std::vector<importer::Rank> ranks;
  for (const char *name : {"rank0.json", "rank1.json"}) {
    std::optional<importer::ImportedStep> step = stepOf(json);
    if (!step)
      return;
    ranks.push_back({name, std::move(*step)});
  }
  DeviceProfile profile = importer::profileFor(ranks[0].step.device);
  importer::RanksSummary summary;
  llvm::Expected<importer::RanksFile> file = importer::writeRanks(ranks, profile, summary);
  if (!file) {
    llvm::consumeError(file.takeError());
    return;
  }
  // The ranks are one: every collective of one matches the other's.
  if (summary.unmatched)
    __builtin_trap();
  // The file checks clean, laid out as fmt lays it out, to the program
  // built beside it.
  program::Program program = checkedAndLaidOut(file->text(), profile);
  program.source = file->program.source;
  if (test::programText(file->program) != test::programText(program))
    __builtin_trap();
}

/// A step of three kernels on two streams, each launched inside a
/// framework op (record-function ids 1 to 3); the Kineto trace's framework
/// ops (made here: parseTrace keeps none).
const char *kStepTrace = R"J({"traceEvents": [
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10, "dur": 4, "tid": 1, "args": {"correlation": 1}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 20, "dur": 4, "tid": 1, "args": {"correlation": 2}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 30, "dur": 4, "tid": 1, "args": {"correlation": 3}},
  {"ph": "X", "cat": "kernel", "name": "a", "ts": 40, "dur": 50, "args": {"stream": 7, "correlation": 1}},
  {"ph": "X", "cat": "kernel", "name": "b", "ts": 60, "dur": 50, "args": {"stream": 8, "correlation": 2}},
  {"ph": "X", "cat": "kernel", "name": "c", "ts": 110, "dur": 50, "args": {"stream": 7, "correlation": 3}}]})J";

void fuzzExecutionTrace(llvm::StringRef json) {
  llvm::Expected<importer::ExecutionTrace> et = importer::parseExecutionTrace(json);
  if (!et) {
    llvm::consumeError(et.takeError());
    return;
  }
  // Framework ops named as the execution trace's ops, two iterations.
  importer::CpuOps cpuOps;
  for (int iteration = 0; iteration < 2; ++iteration)
    for (const importer::EtOp &op : et->ops) {
      auto [it, added] =
          cpuOps.nameIndex.try_emplace(et->names[op.name], uint32_t(cpuOps.names.size()));
      if (added)
        cpuOps.names.push_back(et->names[op.name]);
      importer::CpuOp c;
      c.name = it->second;
      c.ts = double(cpuOps.ops.size());
      c.dur = 0.5;
      c.externalId = op.rfId;
      c.recordFunctionId = iteration ? -1 : op.rfId;
      cpuOps.ops.push_back(c);
    }
  for (importer::DataLink::By by :
       {importer::DataLink::By::RecordFunctionId, importer::DataLink::By::ExternalId,
        importer::DataLink::By::Alignment}) {
    uint64_t linked = 0;
    std::vector<int32_t> link = importer::linkCpuOps(cpuOps, *et, by, linked);
    if (link.size() != cpuOps.ops.size())
      __builtin_trap();
    for (size_t i = 0; i < link.size(); ++i)
      if (link[i] >= 0 &&
          et->names[et->ops[size_t(link[i])].name] != cpuOps.names[cpuOps.ops[i].name])
        __builtin_trap();
  }
  // The step's three launches, inside its first three ops.
  std::optional<importer::ImportedStep> step = stepOf(kStepTrace);
  if (!step)
    __builtin_trap();
  importer::CpuOps around;
  for (size_t i = 0; i < 3 && i < et->ops.size(); ++i) {
    importer::CpuOp c;
    c.name = uint32_t(around.names.size());
    around.names.push_back(et->names[et->ops[i].name]);
    c.ts = 9.5 + 10 * double(i);
    c.dur = 5;
    c.thread = 1;
    c.recordFunctionId = et->ops[i].rfId;
    around.ops.push_back(c);
  }
  llvm::Expected<importer::DataLink> data = importer::addData(*step, around, *et, 0.01);
  if (!data) {
    llvm::consumeError(data.takeError());
    return;
  }
  checkStep(*step);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  llvm::StringRef json(reinterpret_cast<const char *>(data) + 1, size - 1);
  if (data[0] & 8)
    fuzzExecutionTrace(json);
  else if (data[0] & 4)
    fuzzExport(json);
  else if ((data[0] & 3) == 3)
    fuzzRanks(json);
  else if (data[0] & 1)
    fuzzTrace(json);
  else
    fuzzProfile(json);
  return 0;
}
