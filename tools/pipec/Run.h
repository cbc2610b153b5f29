//===- Run.h - What run and advise share ----------------------------------===//
#ifndef PIPEC_TOOLS_RUN_H
#define PIPEC_TOOLS_RUN_H

#include "Tool.h"

#include "model/Objective.h"
#include "runtime/Backend.h"

#include <memory>
#include <optional>

namespace pipec::tool {

/// The backend --backend asks for; null (and a message) when none can run.
std::unique_ptr<runtime::Backend> chooseBackend(const model::Model &model);

/// --objective, parsed; none (and a message) when it is malformed.
std::optional<runtime::Objective> objectiveOption();
/// Whether every compiled pipeline has the stage `objective` names; if not,
/// says which does not.
bool objectiveApplies(const runtime::Objective &objective, const driver::Compiled &c);

} // namespace pipec::tool

#endif // PIPEC_TOOLS_RUN_H
