//===- Check.cpp - pipec check --------------------------------------------===//

#include "Tool.h"

#include "runtime/cost/AssignmentCost.h"

using namespace llvm;
using namespace pipec;
using namespace pipec::tool;

namespace {

cl::list<std::string> checkInputs(cl::Positional, cl::OneOrMore,
                                  cl::desc("<file.pipe>... ('-' reads stdin)"),
                                  cl::sub(checkCommand()), cl::cat(category()));

cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Check each part of a file between '// -----' lines on its own "
             "(for tests; line numbers stay those of the whole file)"),
    cl::sub(checkCommand()), cl::cat(category()));

} // namespace

int tool::runCheck() {
  DeviceProfile profile;
  if (!loadProfile(profile))
    return UsageError;
  // sync declared: a stage without `on` is checked on the stream compile
  // would give it.
  runtime::SimAssignmentCost assignCost(profile);
  ScheduleOptions assign;
  assign.assignEvaluator = &assignCost;
  int status = Success;
  for (const std::string &path : checkInputs) {
    driver::Source src;
    if (Error e = driver::loadSource(path, src)) {
      toolError(toString(std::move(e)));
      status = InputErrors;
      continue;
    }
    if (!splitInputFile) {
      if (!driver::checkSource(src, profile, diagnosticOptions(), assign))
        status = InputErrors;
      continue;
    }
    for (StringRef part : driver::splitParts(src.text()))
      if (!driver::checkSource(src, profile, diagnosticOptions(), assign, part))
        status = InputErrors;
  }
  return status;
}
