//===- Import.cpp - pipec import ------------------------------------------===//

#include "Tool.h"

#include "compiler/format/Formatter.h"
#include "compiler/parse/Parser.h"
#include "compiler/sema/Sema.h"
#include "runtime/cost/GraphCost.h"
#include "runtime/import/Report.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace pipec;
using namespace pipec::tool;

namespace {

cl::opt<std::string> traceInput(cl::Positional, cl::Required,
                                cl::desc("<trace.json or trace.json.gz> ('-' reads stdin)"),
                                cl::sub(importCommand()), cl::cat(category()));
cl::opt<long long> importStep(
    "step", cl::desc("The ProfilerStep#N to import (default: the last with GPU ops)"),
    cl::value_desc("N"), cl::sub(importCommand()), cl::cat(category()));
cl::opt<bool> importReport(
    "report", cl::desc("Print what the step says, and what pipec predicts for it"),
    cl::sub(importCommand()), cl::cat(category()));
cl::opt<std::string> profileOut(
    "profile-out",
    cl::desc("Write the device profile made from the trace's GPU (for run --profile)"),
    cl::value_desc("path"), cl::sub(importCommand()), cl::cat(category()));

} // namespace

/// pipec import: the trace's step as a formatted .pipe file (checked clean
/// before it is written), and with --report what it says.
int tool::runImport() {
  commandFiles().input(traceInput, "the trace");
  registerProfileInput();
  commandFiles().output(outputPath, "-o");
  if (!profileOut.empty())
    commandFiles().output(profileOut, "--profile-out");
  if (!checkFiles())
    return UsageError;
  // The trace is read, its step taken, and let go: the step keeps what it
  // needs (a trace of millions of events is most of the memory).
  std::optional<int64_t> step;
  if (importStep.getNumOccurrences())
    step = int64_t(importStep);
  Expected<importer::ImportedStep> imported = [&]() -> Expected<importer::ImportedStep> {
    Expected<importer::Trace> trace = importer::readTrace(traceInput);
    if (!trace)
      return trace.takeError();
    return importer::selectStep(*trace, step);
  }();
  if (!imported) {
    toolError(toString(imported.takeError()));
    return InputErrors;
  }
  // What the import could not know is said once, whatever is written.
  for (const std::string &note : imported->notes)
    WithColor::note(errs(), "pipec", !useColor()) << note << '\n';
  DeviceProfile profile = importer::profileFor(imported->device);
  if (!profilePath.empty() && !loadProfile(profile))
    return UsageError;
  Expected<std::string> text = importer::writePipe(*imported, traceInput, profile);
  if (!text) {
    toolError(toString(text.takeError()));
    return InputErrors;
  }
  // Only the report reads the step again: without one it is let go before
  // the text is parsed (at 800,000 ops, 417 MB the front end can use).
  const bool reporting = importReport || jsonOutput;
  if (!reporting)
    *imported = importer::ImportedStep();

  // Through the front end, as any .pipe file: it must check clean. The
  // text is parsed where it is (no copy), formatted, and its syntax freed
  // as the program is built from it.
  SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(
      MemoryBuffer::getMemBuffer(*text, "imported.pipe", /*RequiresNullTerminator=*/false),
      SMLoc());
  DiagnosticEngine diags(printingHandler(sm, errs(), "imported.pipe", useColor()), 20);
  ast::File file = parseFile(sm, id, "imported.pipe", diags);
  std::string formatted;
  program::Program program;
  if (!diags.hadError()) {
    formatted = formatFile(file, *text);
    program = analyze(std::move(file), profile, diags);
  }
  diags.finish();
  if (diags.hadError() || program.pipelines.empty()) {
    toolError("internal error: the imported pipeline does not check clean");
    return RunFailed;
  }

  if (!profileOut.empty() &&
      !emitTo(profileOut, [&](raw_ostream &os) { writeDeviceProfile(profile, os); }))
    return WriteFailed;
  if (!reporting)
    return emitTo(outputPath, [&](raw_ostream &os) { os << formatted; }) ? Success
                                                                         : WriteFailed;
  if (outputPath != "-" && !emitTo(outputPath, [&](raw_ostream &os) { os << formatted; }))
    return WriteFailed;
  runtime::SimGraphCost cost(profile);
  ScheduleOptions options;
  options.graphCost = &cost;
  options.replays = replays;
  Schedule schedule(program.pipelines.front(), profile, options);
  importer::StepReport report = importer::reportStep(*imported, schedule, profile, replays);
  if (jsonOutput)
    importer::writeStepReportJSON(report, *imported, profile, outs());
  else
    importer::printStepReport(report, *imported, profile, outs());
  return Success;
}
