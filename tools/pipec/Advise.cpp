//===- Advise.cpp - pipec advise ------------------------------------------===//

#include "Run.h"

#include "runtime/advise/Advisor.h"
#include "runtime/cost/GraphCost.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace pipec;
using namespace pipec::tool;

int tool::runAdvise() {
  commandFiles().input(runInput, "the input");
  registerProfileInput();
  commandFiles().output(outputPath, "-o");
  if (!checkFiles())
    return UsageError;
  DeviceProfile profile;
  if (int status = prepare(profile))
    return status;
  driver::Compiled c;
  if (int status = compileFile(runInput, profile, ScheduleOptions(), false, c))
    return status;
  std::unique_ptr<runtime::Backend> backend = chooseBackend(profile);
  if (!backend)
    return RunFailed;
  runtime::SimGraphCost cost(profile);
  std::vector<runtime::PipelineAdvice> advice;
  for (const Schedule *s : c.views) {
    Expected<runtime::PipelineAdvice> a =
        runtime::advise(s->pipeline, profile, *backend, replays, cost);
    if (!a) {
      toolError("advise failed: " + toString(a.takeError()));
      return RunFailed;
    }
    advice.push_back(std::move(*a));
  }
  return emitTo(outputPath,
                [&](raw_ostream &out) {
                  if (jsonOutput) {
                    runtime::writeAdviceJSON(advice, out);
                    return;
                  }
                  for (size_t i = 0; i < advice.size(); ++i) {
                    if (i)
                      out << '\n';
                    runtime::printAdvice(advice[i], backend->device(), replays, out);
                  }
                })
             ? Success
             : WriteFailed;
}
