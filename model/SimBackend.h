//===- SimBackend.h - The device model behind the Backend interface -------===//
//
// model/'s own: outside model/, a run of the model is asked of
// model::Model (backend(), contendedBackend(), ...), which builds these.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_MODEL_SIMBACKEND_H
#define PIPEC_MODEL_SIMBACKEND_H

#include "runtime/Backend.h"

#include <memory>

namespace pipec::runtime {

/// The deterministic device model, parameterised by `profile`. Without
/// `dispatch`, launches pay no `issue=` time: the what-if of pipec issuing
/// an imported step's launches itself (the framework's dispatch gone).
/// With `contendUnsaid`, work whose file says nothing of what bounds it
/// needs the whole device's memory bandwidth and issue throughput (the far
/// end of a what-if's range: sim::ModelOptions::contendUnsaid).
std::unique_ptr<Backend> makeSimBackend(const DeviceProfile &profile, bool dispatch = true,
                                        bool contendUnsaid = false);

} // namespace pipec::runtime

#endif // PIPEC_MODEL_SIMBACKEND_H
