//===- Advisor.h - `pipec advise`: the seed notebook's questions, measured -===//
//
// For each pipeline, numbered answers with the evidence behind each, run on
// a backend (the device model, or the GPU): is splitting into streams worth
// it and which split, which stream-order edges on the critical path cost
// how much, whether a graph beats stream launches and after how many
// replays, what priorities change for the urgent streams' stages, and which
// dependencies are redundant.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_ADVISE_ADVISOR_H
#define PIPEC_RUNTIME_ADVISE_ADVISOR_H

#include "compiler/program/Program.h"
#include "runtime/Backend.h"

#include "llvm/Support/Error.h"

namespace llvm {
class raw_ostream;
}

namespace pipec::runtime {

llvm::Error advise(const program::Pipeline &pipeline,
                   const DeviceProfile &profile, Backend &backend,
                   unsigned replays, llvm::raw_ostream &os);

} // namespace pipec::runtime

#endif // PIPEC_RUNTIME_ADVISE_ADVISOR_H
