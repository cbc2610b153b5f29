//===- Run.h - What run and advise share ----------------------------------===//
#ifndef PIPEC_TOOLS_RUN_H
#define PIPEC_TOOLS_RUN_H

#include "Tool.h"

#include "runtime/Backend.h"

#include <memory>

namespace pipec::tool {

/// The backend --backend asks for; null (and a message) when none can run.
std::unique_ptr<runtime::Backend> chooseBackend(const DeviceProfile &profile);

} // namespace pipec::tool

#endif // PIPEC_TOOLS_RUN_H
