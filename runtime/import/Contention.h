//===- Contention.h - A recorded kernel's time alone ------------*- C++ -*-===//
//
// A kernel recorded while others ran beside it took longer than it would
// have alone: its recorded time already carries the contention. `kernel T`
// means the time alone, so the import writes that: the time which, run by
// the device model's own sharing rules beside what ran beside it in the
// recording, gives the recorded time. The model's run of the imported
// program then reproduces the recording, and a what-if that changes the
// overlap changes the slow-down.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_CONTENTION_H
#define PIPEC_RUNTIME_IMPORT_CONTENTION_H

#include "compiler/program/DeviceProfile.h"
#include "runtime/import/Step.h"

namespace pipec::importer {

/// What was taken out: the kernels written shorter than recorded, their
/// recorded and alone times summed, and the model runs it took.
struct Uncontended {
  uint64_t kernels = 0;
  double recordedUs = 0, aloneUs = 0;
  unsigned runs = 0;
};

/// Sets each recorded kernel's `durUs` to its time alone (its recorded time
/// kept in `recordedUs`), by running the imported program on the model and
/// taking out of each kernel the time the model added to it beside others
/// (its blocks waiting for room on the SMs), a few rounds, until every
/// kernel runs within 0.5% of its recorded time (or the rounds run out). A
/// step whose kernels never asked for more of the SMs at once than the
/// device holds is left as it is, with no run.
Uncontended uncontend(ImportedStep &step, const DeviceProfile &profile);

} // namespace pipec::importer

#endif // PIPEC_RUNTIME_IMPORT_CONTENTION_H
