//===- Objective.cpp ------------------------------------------------------===//

#include "model/Objective.h"

#include "compiler/support/Printable.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cctype>
#include <limits>

using namespace pipec;
using namespace pipec::runtime;

std::string Objective::spelling() const {
  if (kind == Makespan)
    return "makespan";
  return "end:" + stage + (median ? ":median" : ":worst");
}

std::string Objective::words() const {
  if (kind == Makespan)
    return "the makespan";
  return llvm::formatv("the end of '{0}' ({1} over iterations)", stage,
                       median ? "median" : "worst")
      .str();
}

llvm::Expected<Objective> runtime::parseObjective(llvm::StringRef text) {
  Objective o;
  if (text == "makespan")
    return o;
  if (text.consume_front("end:") && !text.empty()) {
    o.kind = Objective::StageEnd;
    auto [stage, which] = text.split(':');
    o.stage = stage.str();
    if (which == "median")
      o.median = true;
    else if (!which.empty() && which != "worst")
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--objective=end:STAGE takes ':worst' or ':median' "
                                     "after the stage, not ':" +
                                         printable(which) + "'");
    // A stage's name is an identifier: anything else names none (and is
    // never echoed raw).
    const bool identifier = !stage.empty() &&
                            !std::isdigit(static_cast<unsigned char>(stage.front())) &&
                            llvm::all_of(stage, [](char c) {
                              return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                            });
    if (!stage.empty() && !identifier)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "--objective=end:STAGE: '" + printable(stage) +
                                         "' is not a stage name (letters, digits and '_')");
    if (!o.stage.empty())
      return o;
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "--objective takes 'makespan' or 'end:STAGE' (with "
                                 "':worst', the default, or ':median')");
}

llvm::Error runtime::checkObjective(const Objective &o, const program::Pipeline &p) {
  if (o.kind == Objective::Makespan)
    return llvm::Error::success();
  // (And the stage nearest the name, a typo's edits away, for the message.)
  const program::Stage *nearest = nullptr;
  unsigned closest = 3;
  bool tie = false;
  for (const program::Stage &st : p.stages) {
    if (st.name == o.stage)
      return llvm::Error::success();
    const unsigned d = llvm::StringRef(o.stage).edit_distance(st.name, true, closest);
    if (d < closest)
      closest = d, nearest = &st, tie = false;
    else if (d == closest && nearest)
      tie = true;
  }
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "--objective: pipeline '" + p.name + "' has no stage '" + printable(o.stage) + "'" +
          (nearest && !tie ? "; did you mean '" + nearest->name + "'?" : std::string()));
}

std::vector<double> runtime::stageLatencies(const Schedule &s, uint32_t stage,
                                            const std::vector<double> &start,
                                            const std::vector<double> &end) {
  const Instances &inst = s.instances;
  // Each iteration's first start; the iterations STAGE does not run in
  // (`[every=K]`, `[first]`, `[last]`) have no latency.
  std::vector<double> first(inst.iterations(), std::numeric_limits<double>::infinity());
  for (uint32_t v = 0; v < inst.size(); ++v) {
    double &f = first[inst.iterationOf(v)];
    f = std::min(f, start[v]);
  }
  std::vector<double> out;
  for (uint32_t it = 0; it < inst.iterations(); ++it)
    if (inst.runsIn(stage, it))
      out.push_back(end[inst.idOf(stage, it)] - first[it]);
  return out;
}

double runtime::objectiveValue(const Objective &o, const Schedule &s,
                               const std::vector<double> &start,
                               const std::vector<double> &end, double makespanUs) {
  if (o.kind == Objective::Makespan)
    return makespanUs;
  uint32_t stage = 0;
  while (stage < s.pipeline.stages.size() && s.pipeline.stages[stage].name != o.stage)
    ++stage;
  if (stage == s.pipeline.stages.size())
    return makespanUs;
  std::vector<double> latencies = stageLatencies(s, stage, start, end);
  if (latencies.empty())
    return 0;
  std::sort(latencies.begin(), latencies.end());
  return o.median ? latencies[(latencies.size() - 1) / 2] : latencies.back();
}
