//===- Check.cpp - pipec check --------------------------------------------===//

#include "Tool.h"

#include "compiler/schedule/Meaning.h"
#include "model/Model.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace pipec;
using namespace pipec::tool;

namespace {

cl::list<std::string> checkInputs(cl::Positional, cl::OneOrMore,
                                  cl::desc("<file.pipe>... ('-' reads stdin)"),
                                  cl::sub(checkCommand()), cl::cat(category()));

cl::opt<bool>
    splitInputFile("split-input-file",
                   cl::desc("Check each part of a file between '// -----' lines on its own "
                            "(for tests; line numbers stay those of the whole file)"),
                   cl::sub(checkCommand()), cl::cat(category()));

cl::opt<std::string> againstPath(
    "against",
    cl::desc("Also check that each pipeline computes what the one of that name in "
             "<file> does: every ordering it states kept, every read seeing the same "
             "write, no race (as advise holds its suggestions to)"),
    cl::value_desc("file"), cl::sub(checkCommand()), cl::cat(category()), aPath("against"));

/// check --against: each pipeline of `path` against its namesake in
/// `original`, both compiled as compile would; a pipeline of either file
/// that the other lacks is a difference too.
int checkAgainst(StringRef path, const model::Model &model) {
  driver::Compiled changed, original;
  ScheduleOptions options;
  if (int status = compileFile(againstPath, model, options, {}, original))
    return status;
  if (int status = compileFile(path, model, options, {}, changed))
    return status;
  int status = Success;
  for (const Schedule *s : changed.views) {
    const Schedule *was = nullptr;
    for (const Schedule *o : original.views)
      if (o->pipeline.name == s->pipeline.name)
        was = o;
    if (!was) {
      toolError("pipeline '" + s->pipeline.name + "' is not in '" + original.src.name + "'");
      status = InputErrors;
      continue;
    }
    if (std::optional<std::string> why = changedMeaning(*was, *s)) {
      toolError("pipeline '" + s->pipeline.name + "' of '" + changed.src.name +
                "' does not compute what it does in '" + original.src.name + "': " + *why);
      status = InputErrors;
    }
  }
  for (const Schedule *o : original.views) {
    bool kept = false;
    for (const Schedule *s : changed.views)
      kept |= s->pipeline.name == o->pipeline.name;
    if (!kept) {
      toolError("pipeline '" + o->pipeline.name + "' of '" + original.src.name +
                "' is not in '" + changed.src.name +
                "': dropping it changes what the file "
                "computes");
      status = InputErrors;
    }
  }
  return status;
}

} // namespace

int tool::runCheck() {
  DeviceProfile profile;
  if (!loadProfile(profile))
    return UsageError;
  // sync declared: a stage without `on` is checked on the stream compile
  // would give it.
  const model::Model model(profile);
  ScheduleOptions assign;
  assign.assignEvaluator = &model.assignmentCost();
  if (!againstPath.empty()) {
    if (checkInputs.size() != 1 || splitInputFile) {
      toolError("--against takes one file to check (without --split-input-file)");
      return UsageError;
    }
    commandFiles().input(checkInputs.front(), "the input");
    commandFiles().input(againstPath, "--against");
    registerProfileInput();
    if (!checkFiles())
      return UsageError;
    return checkAgainst(checkInputs.front(), model);
  }
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
