//===- Import.cpp - pipec import ------------------------------------------===//

#include "Tool.h"

#include "model/Model.h"
#include "runtime/import/Contention.h"
#include "runtime/import/PipeFile.h"
#include "runtime/import/Report.h"
#include "runtime/import/StepData.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace pipec;
using namespace pipec::tool;

namespace {

cl::list<std::string> traceInputs(
    cl::Positional, cl::OneOrMore,
    cl::desc("<trace.json, trace.json.gz or an Nsight Systems export.sqlite> ('-' reads "
             "a trace from stdin); several: one per rank, imported as one program of several "
             "devices"),
    cl::sub(importCommand()), cl::cat(category()));
cl::opt<std::string>
    importStep("step",
               cl::desc("The step to import: ProfilerStep#N (N), or the K-th range of a name, "
                        "an NVTX range or record_function (NAME, NAME#K; the last when K is "
                        "left out); default: the last ProfilerStep with GPU ops, or the "
                        "whole trace"),
               cl::value_desc("N|NAME[#K]"), cl::sub(importCommand()), cl::cat(category()));
cl::opt<bool>
    importReport("report",
                 cl::desc("Print what the step says, and what pipec predicts for it"),
                 cl::sub(importCommand()), cl::cat(category()));
cl::opt<std::string> executionTrace(
    "et",
    cl::desc("A PyTorch execution trace of the same program (its JSON, or .json.gz): each "
             "GPU op reads and writes what the framework op that launched it did, and "
             "same-stream order the data covers is left to the data"),
    cl::value_desc("path"), cl::sub(importCommand()), cl::cat(category()), aPath("et"));
cl::opt<double> leastLinked(
    "et-least-linked",
    cl::desc("The least share of the step's GPU ops, in percent, the execution trace must "
             "link (default 80): below it, the import refuses rather than guess; ops it "
             "does not link keep every ordering"),
    cl::value_desc("percent"), cl::init(100 * importer::kLeastLinkedShare),
    cl::sub(importCommand()), cl::cat(category()));
cl::opt<std::string> profileOut(
    "profile-out",
    cl::desc("Write the device profile made from the trace's GPU (for run --profile)"),
    cl::value_desc("path"), cl::sub(importCommand()), cl::cat(category()),
    aPath("profile-out"));

} // namespace

/// pipec import: the trace's step as a formatted .pipe file, and with
/// --report what it says.
int tool::runImport() {
  for (const std::string &trace : traceInputs)
    commandFiles().input(trace, traceInputs.size() > 1 ? "a trace" : "the trace");
  if (!executionTrace.empty())
    commandFiles().input(executionTrace, "--et");
  registerProfileInput();
  commandFiles().output(invocation().outputPath, "-o");
  if (!profileOut.empty())
    commandFiles().output(profileOut, "--profile-out");
  if (!checkFiles())
    return UsageError;
  // The trace is read, its step taken, and let go: the step keeps what it
  // needs (a trace of millions of events is most of the memory).
  importer::StepChoice step;
  if (importStep.getNumOccurrences()) {
    if (importStep.empty()) {
      toolError("--step needs a step number or a range's name");
      return UsageError;
    }
    llvm::Expected<importer::StepChoice> parsed = importer::parseStepChoice(importStep);
    if (!parsed) {
      toolError(llvm::toString(parsed.takeError()));
      return UsageError;
    }
    step = std::move(*parsed);
  }
  // (An empty --et= is refused with every empty path: pipec.cpp.)
  const bool withData = executionTrace.getNumOccurrences() > 0;
  if (leastLinked.getNumOccurrences() &&
      (!withData || !(leastLinked >= 1 && leastLinked <= 100))) {
    toolError(withData ? "--et-least-linked takes a percentage from 1 to 100"
                       : "--et-least-linked goes with --et");
    return UsageError;
  }
  if (withData && traceInputs.size() > 1) {
    toolError("--et takes one Kineto trace, the one recorded beside it: give the ranks' "
              "traces without it");
    return UsageError;
  }
  if (traceInputs.size() > 1)
    return runImportRanks(
        traceInputs, [&](size_t r) { return importer::readTrace(traceInputs[r]); }, step,
        importReport, profileOut);
  const std::string &traceInput = traceInputs.front();
  // One recording of several processes (an Nsight Systems export of an MPI
  // program): its processes are the ranks of one program.
  std::vector<importer::Trace> processes;
  {
    Expected<std::vector<importer::Trace>> read =
        importer::readRecording(traceInput, /*cpuOps=*/withData);
    if (!read) {
      toolError(toString(read.takeError()));
      return InputErrors;
    }
    processes = std::move(*read);
  }
  // The execution trace links to a Kineto trace's framework ops: one
  // process's, recorded beside it.
  if (withData && (processes.size() > 1 || processes.front().cpuOps.ops.empty())) {
    toolError(formatv("'{0}' holds no framework op (Kineto's cpu_op events) to link the "
                      "execution trace to{1}",
                      traceInput,
                      processes.front().process >= 0
                          ? ": --et takes a PyTorch profiler (Kineto) trace, not an Nsight "
                            "Systems export"
                          : ""));
    return InputErrors;
  }
  if (processes.size() > 1) {
    std::vector<std::string> sources;
    for (const importer::Trace &t : processes)
      sources.push_back(formatv("{0}, process {1}", traceInput, t.process).str());
    return runImportRanks(
        sources,
        [&](size_t r) -> Expected<importer::Trace> { return std::move(processes[r]); }, step,
        importReport, profileOut);
  }
  importer::CpuOps cpuOps = std::move(processes.front().cpuOps);
  Expected<importer::ImportedStep> imported =
      importer::selectStep(std::move(processes.front()), step);
  if (!imported) {
    toolError(toString(imported.takeError()));
    return InputErrors;
  }
  if (withData) {
    Expected<importer::ExecutionTrace> et = importer::readExecutionTrace(executionTrace);
    if (!et) {
      toolError(toString(et.takeError()));
      return InputErrors;
    }
    Expected<importer::DataLink> link =
        importer::addData(*imported, cpuOps, *et, leastLinked / 100);
    if (!link) {
      toolError(formatv("'{0}' with '{1}': {2}", traceInput, executionTrace,
                        toString(link.takeError())));
      return InputErrors;
    }
    imported->notes.push_back(importer::describeDataLink(*link));
  }
  cpuOps = importer::CpuOps();
  const bool reporting = importReport || invocation().jsonOutput;
  // What the import could not know is said once, whatever is written.
  auto sayNotes = [&] {
    for (const std::string &note : imported->notes)
      WithColor::note(errs(), "pipec", !useColor()) << note << '\n';
  };
  if (!imported->foreignPlatform.empty()) {
    // pipec models CUDA devices: of another platform's trace, only what it
    // recorded (and no file: its program would be a CUDA device's).
    if (!reporting || invocation().outputPath != "-") {
      toolError(formatv("'{0}' is a {1} trace: pipec models CUDA devices only, and writes "
                        "no .pipe file for it{2}; 'pipec import --report' without -o gives "
                        "what it recorded",
                        traceInput, imported->foreignPlatform,
                        invocation().outputPath != "-"
                            ? formatv(" ('-o {0}')", invocation().outputPath).str()
                            : std::string()));
      return InputErrors;
    }
    sayNotes();
    DeviceProfile cuda; // the program is only scheduled, never run
    Expected<program::Program> program = importer::programOf(*imported, cuda);
    if (!program) {
      toolError(toString(program.takeError()));
      return InputErrors;
    }
    Schedule schedule(program->pipelines.front(), cuda, ScheduleOptions());
    importer::StepReport report = importer::reportRecorded(*imported, schedule);
    if (invocation().jsonOutput)
      importer::writeStepReportJSON(report, *imported, cuda, outs());
    else
      importer::printStepReport(report, *imported, cuda, outs());
    return Success;
  }
  DeviceProfile profile = importer::profileFor(imported->device);
  if (!invocation().profilePath.empty() && !loadProfile(profile))
    return UsageError;
  // Each kernel's time alone, on the profile the file is written for.
  importer::uncontend(*imported, profile);
  sayNotes();
  // The file is laid out (every stage checked, the columns measured)
  // before a byte of it is written.
  Expected<importer::PipeFile> file = importer::PipeFile::lay(*imported, traceInput, profile);
  if (!file) {
    toolError(toString(file.takeError()));
    return InputErrors;
  }
  if (!profileOut.empty() &&
      !emitTo(profileOut, [&](raw_ostream &os) { writeDeviceProfile(profile, os); }))
    return WriteFailed;
  if ((!reporting || invocation().outputPath != "-") &&
      !emitTo(invocation().outputPath, [&](raw_ostream &os) { file->write(os); }))
    return WriteFailed;
  if (!reporting)
    return Success;

  // The report schedules the program the file checks to, built from the
  // step (tests hold it to the front end's reading of the file).
  Expected<program::Program> program = importer::programOf(*imported, profile);
  if (!program) {
    toolError(toString(program.takeError()));
    return InputErrors;
  }
  const model::Model model(profile);
  ScheduleOptions options;
  options.graphCost = &model.graphCost();
  options.replays = invocation().replays;
  Schedule schedule(program->pipelines.front(), profile, options);
  importer::StepReport report =
      importer::reportStep(*imported, schedule, profile, invocation().replays);
  if (invocation().jsonOutput)
    importer::writeStepReportJSON(report, *imported, profile, outs());
  else
    importer::printStepReport(report, *imported, profile, outs());
  return Success;
}
