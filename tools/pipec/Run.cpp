//===- Run.cpp - pipec run ------------------------------------------------===//

#include "Run.h"

#include "compiler/support/Printable.h"
#include "model/Model.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/report/Reports.h"
#include "runtime/timing/Timing.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace pipec;
using namespace pipec::tool;

namespace {

enum class BackendChoice { Auto, Sim, Cuda };
cl::opt<BackendChoice, false, ChoiceParser<BackendChoice>>
    backendChoice("backend", cl::desc("Where to run (default: auto)"),
                  cl::values(clEnumValN(BackendChoice::Auto, "auto",
                                        "the GPU when one answers, else the device model"),
                             clEnumValN(BackendChoice::Sim, "sim", "the device model"),
                             clEnumValN(BackendChoice::Cuda, "cuda", "the GPU")),
                  cl::init(BackendChoice::Auto), cl::sub(runCommand()),
                  cl::sub(adviseCommand()), cl::cat(category()));

enum class RunLowering { Streams, Graph, Both };
cl::opt<RunLowering, false, ChoiceParser<RunLowering>>
    runLowering("lower", cl::desc("Which lowering to run (default: streams)"),
                cl::values(clEnumValN(RunLowering::Streams, "streams", "stream launches"),
                           clEnumValN(RunLowering::Graph, "graph", "a CUDA graph"),
                           clEnumValN(RunLowering::Both, "both", "both, side by side")),
                cl::init(RunLowering::Streams), cl::sub(runCommand()), cl::cat(category()));

cl::opt<std::string> tracePath("trace",
                               cl::desc("Write a Chrome trace (Perfetto, chrome://tracing)"),
                               cl::value_desc("path"), cl::sub(runCommand()),
                               cl::cat(category()), aPath("trace"));

cl::opt<std::string> htmlPath(
    "html", cl::desc("Write a self-contained HTML report: the DAG, timelines, timings"),
    cl::value_desc("path"), cl::sub(runCommand()), cl::cat(category()), aPath("html"));

cl::opt<bool> showTimeline("timeline", cl::desc("Draw the streams' timeline in text"),
                           cl::sub(runCommand()), cl::cat(category()));

// `--compare=B.pipe`, or `--compare A.pipe B.pipe`: the value only after
// '=', so that the two-file form reads its files in the order written.
cl::opt<std::string> compareWith(
    "compare",
    cl::desc("Run this other .pipe file too (--compare=B.pipe, or --compare A.pipe "
             "B.pipe), and print the two side by side with the difference per figure"),
    cl::value_desc("path"), cl::ValueOptional, cl::sub(runCommand()), cl::cat(category()));

cl::opt<std::string> secondInput(cl::Positional, cl::Optional,
                                 cl::desc("[<B.pipe>] (with --compare)"),
                                 cl::sub(runCommand()), cl::cat(category()));

cl::opt<std::string> compareProfile(
    "compare-profile",
    cl::desc("Run on this device profile too (against --profile's, or the default), "
             "side by side"),
    cl::value_desc("path"), cl::sub(runCommand()), cl::cat(category()),
    aPath("compare-profile"));

cl::opt<unsigned> timelineWidth(
    "width",
    cl::desc("Columns of the text timeline, 20 to 1000 (default 72; implies --timeline)"),
    cl::value_desc("N"), cl::init(72), cl::sub(runCommand()), cl::cat(category()));

cl::opt<bool>
    ignorePriorities("ignore-priorities",
                     cl::desc("Run every stream at one priority, to see what priorities do"),
                     cl::sub(runCommand()), cl::cat(category()));

cl::opt<std::string>
    timingMethod("timing",
                 cl::desc("On a GPU, how the timeline is measured: auto (CUPTI, else events), "
                          "cupti, events"),
                 cl::value_desc("method"), cl::init("auto"), cl::sub(runCommand()),
                 cl::cat(category()));

} // namespace

std::unique_ptr<runtime::Backend> tool::chooseBackend(const model::Model &model) {
  const DeviceProfile &profile = model.profile();
  if (backendChoice == BackendChoice::Sim)
    return model.backend();
  Expected<std::unique_ptr<runtime::Backend>> cuda = runtime::makeCudaBackend(profile);
  if (cuda)
    return std::move(*cuda);
  std::string why = toString(cuda.takeError());
  if (backendChoice == BackendChoice::Cuda) {
    toolError(why);
    return nullptr;
  }
  WithColor::note(errs(), "pipec", !useColor())
      << why << "; running on the device model (" << profile.name << ")\n";
  return model.backend();
}

std::optional<runtime::Objective> tool::objectiveOption() {
  Expected<runtime::Objective> objective = runtime::parseObjective(invocation().objectiveText);
  if (!objective) {
    toolError(toString(objective.takeError()));
    return std::nullopt;
  }
  return *objective;
}

bool tool::objectiveApplies(const runtime::Objective &objective, const driver::Compiled &c) {
  for (const Schedule *s : c.views)
    if (Error e = runtime::checkObjective(objective, s->pipeline)) {
      toolError(toString(std::move(e)));
      return false;
    }
  return true;
}

int tool::runRun() {
  runtime::RunOptions runOptions;
  if (!runtime::parseTimingRequest(timingMethod, runOptions.timing)) {
    toolError("--timing must be auto, cupti or events");
    return UsageError;
  }
  if (timelineWidth < 20 || timelineWidth > 1000) {
    toolError("--width must be 20 to 1000 columns");
    return UsageError;
  }
  const bool timeline = showTimeline || timelineWidth.getNumOccurrences();
  if (compareWith.getNumOccurrences() && compareWith.empty()) {
    // `--compare A.pipe B.pipe`: the second file is B.
    if (secondInput.empty()) {
      toolError("--compare needs a second file: --compare A.pipe B.pipe, or "
                "A.pipe --compare=B.pipe");
      return UsageError;
    }
    compareWith = std::string(secondInput);
  } else if (!secondInput.empty()) {
    toolError(compareWith.empty()
                  ? "run takes one file; to compare two, write --compare A.pipe B.pipe"
                  : "two files to compare with: give --compare=B.pipe or a second file, "
                    "not both");
    return UsageError;
  }
  const bool comparing = !compareWith.empty() || !compareProfile.empty();
  if (comparing &&
      (invocation().jsonOutput || timeline || !tracePath.empty() || !htmlPath.empty())) {
    toolError("--compare prints a table of the two runs: leave out --json, --timeline, "
              "--trace and --html (run each on its own for those)");
    return UsageError;
  }
  DeviceProfile profile;
  if (int status = openCommand(invocation().runInput, profile, [&] {
        if (!tracePath.empty())
          commandFiles().output(tracePath, "--trace");
        if (!htmlPath.empty())
          commandFiles().output(htmlPath, "--html");
        if (!compareWith.empty())
          commandFiles().input(compareWith, "--compare");
        if (!compareProfile.empty())
          commandFiles().input(compareProfile, "--compare-profile");
      }))
    return status;
  const model::Model model(profile);
  std::optional<runtime::Objective> objective = objectiveOption();
  if (!objective)
    return UsageError;
  // The stream lowering's host calls are what capture records, so the
  // schedule is always planned as streams; each lowering then runs from it.
  ScheduleOptions options;
  options.maxStreams = invocation().maxStreams;
  options.replays = invocation().replays;
  driver::Compiled c;
  // How the file is written is check and compile's to say.
  const CompileGoal goal{driver::Phase::Schedule, false, /*writingLints=*/false};
  if (int status = compileFile(invocation().runInput, model, options, goal, c))
    return status;
  noteRecordedDevice(c, profile);

  if (!objectiveApplies(*objective, c))
    return UsageError;
  // Several devices run as streams: a graph would be one per device.
  // --lower=graph is refused; --lower=both runs their streams and says so.
  for (const Schedule *s : c.views)
    if (s->pipeline.deviceCount() > 1 && runLowering == RunLowering::Graph) {
      toolError(formatv("pipeline '{0}' declares {1} devices; 'pipec run' runs such "
                        "pipelines as streams (--lower=streams)",
                        s->pipeline.name, s->pipeline.deviceCount())
                    .str());
      return UsageError;
    } else if (s->pipeline.deviceCount() > 1 && runLowering == RunLowering::Both) {
      WithColor::note(errs(), "pipec", !useColor())
          << formatv("pipeline '{0}' declares {1} devices: --lower=both runs its streams "
                     "only (pipec lowers a graph to one device)\n",
                     printable(s->pipeline.name), s->pipeline.deviceCount());
    }
  std::unique_ptr<runtime::Backend> backend = chooseBackend(model);
  if (!backend)
    return RunFailed;
  runOptions.replays = invocation().replays;
  runOptions.priorities = !ignorePriorities;
  runOptions.recordHost = !tracePath.empty() || !htmlPath.empty();
  std::vector<Lowering> lowerings;
  if (runLowering != RunLowering::Graph)
    lowerings.push_back(Lowering::Streams);
  if (runLowering != RunLowering::Streams)
    lowerings.push_back(Lowering::Graph);
  // Every lowering of every pipeline of `compiled`, on `on`.
  auto runEach = [&](const driver::Compiled &compiled, runtime::Backend &on,
                     const model::Model &device,
                     std::vector<runtime::LoweringRun> &runs) -> bool {
    for (const Schedule *s : compiled.views) {
      const std::vector<Lowering> streamsOnly = {Lowering::Streams};
      Expected<std::vector<runtime::LoweringRun>> r =
          on.runAll(*s, s->pipeline.deviceCount() > 1 ? streamsOnly : lowerings, runOptions);
      if (!r) {
        toolError("run failed: " + toString(r.takeError()));
        return false;
      }
      if (invocation().stats)
        for (const runtime::LoweringRun &one : *r)
          errs() << formatv("pipec: '{0}' ({1}): {2} instances, {3} simulated "
                            "events in {4:f3} s, {5:f0} events per second\n",
                            s->pipeline.name, spelling(one.lowering), s->instances.size(),
                            one.simulatedEvents, one.runSeconds,
                            one.runSeconds > 0 ? one.simulatedEvents / one.runSeconds : 0.0);
      for (runtime::LoweringRun &one : *r) {
        // Why the stream lowering takes longer than its bound, on the model
        // (none for the largest programs: Model::explainGap).
        if (one.lowering == Lowering::Streams)
          one.gap = device.explainGap(*s);
        if (objective->kind != runtime::Objective::Makespan) {
          one.objectiveWords = objective->words();
          one.objectiveUs =
              runtime::objectiveValue(*objective, *s, one.start, one.end, one.makespanUs);
        }
        runs.push_back(std::move(one));
      }
    }
    return true;
  };
  std::vector<runtime::LoweringRun> runs;
  if (!runEach(c, *backend, model, runs))
    return RunFailed;
  if (comparing) {
    // B: the other file, or this one, on the other profile or this one's
    // (compiled again: streams and the verdict depend on the device).
    DeviceProfile profileB = profile;
    if (!compareProfile.empty() && !loadProfileFrom(compareProfile, profileB))
      return UsageError;
    const model::Model modelB(profileB);
    driver::Compiled cb;
    if (int status = compileFile(compareWith.empty() ? StringRef(invocation().runInput)
                                                     : StringRef(compareWith),
                                 modelB, options, goal, cb))
      return status;
    if (!objectiveApplies(*objective, cb))
      return UsageError;
    std::unique_ptr<runtime::Backend> backendB =
        compareProfile.empty() ? nullptr : chooseBackend(modelB);
    if (!compareProfile.empty() && !backendB)
      return RunFailed;
    runtime::Backend &onB = backendB ? *backendB : *backend;
    std::vector<runtime::LoweringRun> runsB;
    if (!runEach(cb, onB, modelB, runsB))
      return RunFailed;
    auto named = [&](StringRef file, StringRef profileFile) {
      std::string words = printable(file);
      if (!profileFile.empty())
        words += " (profile " + printable(profileFile) + ")";
      return words;
    };
    const std::string nameA =
        named(invocation().runInput,
              compareProfile.empty() ? StringRef() : StringRef(invocation().profilePath));
    const std::string nameB =
        named(compareWith.empty() ? StringRef(invocation().runInput) : StringRef(compareWith),
              compareProfile);
    if (!emitTo(invocation().outputPath, [&](raw_ostream &os) {
          runtime::printComparison(runs, runsB, *backend, onB, nameA, nameB, os);
        }))
      return WriteFailed;
    for (const std::vector<runtime::LoweringRun> *set : {&runs, &runsB})
      for (const runtime::LoweringRun &r : *set)
        if (r.violations)
          return RunFailed;
    return Success;
  }

  if (!tracePath.empty() &&
      !emitTo(tracePath, [&](raw_ostream &os) { runtime::writeTrace(runs, os); }))
    return WriteFailed;
  if (!htmlPath.empty() && !emitTo(htmlPath, [&](raw_ostream &os) {
        runtime::writeHtml(runs, *backend, c.src.path, os);
      }))
    return WriteFailed;
  bool written = emitTo(invocation().outputPath, [&](raw_ostream &os) {
    if (invocation().jsonOutput) {
      runtime::writeRunJSON(runs, *backend, os);
      return;
    }
    runtime::printRunTable(runs, *backend, os);
    if (timeline)
      for (const runtime::LoweringRun &r : runs) {
        os << '\n';
        runtime::printTimeline(r, os, timelineWidth);
      }
  });
  if (!written)
    return WriteFailed;
  for (const runtime::LoweringRun &r : runs)
    if (r.violations)
      return RunFailed;
  return Success;
}
