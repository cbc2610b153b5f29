//===- Advise.cpp - pipec advise ------------------------------------------===//

#include "Run.h"

#include "compiler/parse/Parser.h"
#include "compiler/support/Printable.h"
#include "model/Model.h"
#include "runtime/advise/Advisor.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace pipec;
using namespace pipec::tool;

namespace {

// A string, read here: LLVM's parser would echo a bad value raw and take
// --apply=0 for "not given".
cl::opt<std::string> applyText(
    "apply",
    cl::desc("Write the file with suggestion N applied (formatted; it checks clean), "
             "instead of the advice"),
    cl::value_desc("N"), cl::sub(adviseCommand()), cl::cat(category()));
cl::opt<double> minGainPercent(
    "min-gain",
    cl::desc("The least gain suggested or noted, in percent of the objective (default 2)"),
    cl::value_desc("percent"), cl::init(100 * kMinGainFraction), cl::sub(adviseCommand()),
    cl::cat(category()));
cl::opt<double> minGainUs("min-gain-us",
                          cl::desc("The least gain suggested or noted, in microseconds "
                                   "(default 1)"),
                          cl::value_desc("us"), cl::init(kMinGainUs), cl::sub(adviseCommand()),
                          cl::cat(category()));

} // namespace

int tool::runAdvise() {
  DeviceProfile profile;
  if (int status = openCommand(invocation().runInput, profile))
    return status;
  // --apply=N: a suggestion's number as printed, from 1.
  unsigned applyNumber = 0;
  if (applyText.getNumOccurrences()) {
    unsigned long long n = 0;
    if (StringRef(applyText).getAsInteger(10, n) || n == 0 || n > 1000000) {
      toolError("--apply='" + printable(applyText) +
                "': takes a suggestion's number as advise prints it (1, 2, ...)");
      return UsageError;
    }
    applyNumber = unsigned(n);
  }
  if (!(minGainPercent >= 0 && minGainPercent <= 100) || !(minGainUs >= 0)) {
    toolError("--min-gain must be a percentage from 0 to 100 and --min-gain-us at least 0");
    return UsageError;
  }
  std::optional<runtime::Objective> objective = objectiveOption();
  if (!objective)
    return UsageError;
  // The same schedule compile emits: its options, its cost models.
  const model::Model model(profile);
  runtime::AdviseOptions options;
  options.replays = invocation().replays;
  options.objective = *objective;
  options.minGainFraction = minGainPercent / 100;
  options.minGainUs = minGainUs;
  options.schedule.maxStreams = invocation().maxStreams;
  options.schedule.replays = invocation().replays;
  model.answerFor(options.schedule);
  options.schedule.assign = invocation().assignMethod;
  driver::Compiled c;
  CompileGoal goal;
  goal.keepSyntax = true;
  goal.writingLints = false;
  if (int status = compileFile(invocation().runInput, model, options.schedule, goal, c))
    return status;
  noteRecordedDevice(c, model.profile());
  if (!objectiveApplies(*objective, c))
    return UsageError;
  // The syntax, kept by the compile, for the edits.
  runtime::AdviseSource source{&c.file, c.src.text()};

  std::unique_ptr<runtime::Backend> backend = chooseBackend(model);
  if (!backend)
    return RunFailed;
  std::vector<runtime::PipelineAdvice> advice;
  for (const Schedule *s : c.views) {
    Expected<runtime::PipelineAdvice> a =
        runtime::advise(source, *s, model, *backend, options);
    if (!a) {
      toolError("advise failed: " + toString(a.takeError()));
      return RunFailed;
    }
    advice.push_back(std::move(*a));
  }
  if (applyNumber) {
    // Numbered from 1 across the pipelines, as printed.
    size_t n = applyNumber;
    for (const runtime::PipelineAdvice &a : advice) {
      if (n > a.suggestions.size()) {
        n -= a.suggestions.size();
        continue;
      }
      const runtime::Suggestion &s = a.suggestions[n - 1];
      if (!s.environment.empty()) {
        toolError(formatv("suggestion {0} is an environment setting, not a change to the "
                          "file: start the program with {1} in its environment (`export "
                          "{1}`, or `{1} python train.py`); 'hardware_queues' in a "
                          "profile (--profile) models it",
                          applyNumber, s.environment));
        return UsageError;
      }
      if (s.graph) {
        toolError(formatv("suggestion {0} is a lowering, not a change to the file: compile "
                          "or run it with --lower=graph",
                          applyNumber));
        return UsageError;
      }
      return emitTo(invocation().outputPath, [&](raw_ostream &out) { out << s.text; })
                 ? Success
                 : WriteFailed;
    }
    size_t total = 0;
    for (const runtime::PipelineAdvice &a : advice)
      total += a.suggestions.size();
    toolError(formatv("--apply={0}: there {1} {2} suggestion(s)", applyNumber,
                      total == 1 ? "is" : "are", total));
    return UsageError;
  }
  return emitTo(invocation().outputPath,
                [&](raw_ostream &out) {
                  if (invocation().jsonOutput) {
                    runtime::writeAdviceJSON(advice, out);
                    return;
                  }
                  size_t first = 1;
                  for (size_t i = 0; i < advice.size(); ++i) {
                    if (i)
                      out << '\n';
                    runtime::printAdvice(advice[i], backend->device(), options, first, out);
                    first += advice[i].suggestions.size();
                  }
                })
             ? Success
             : WriteFailed;
}
