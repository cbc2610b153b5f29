//===- Report.h - What a recorded step says, and what pipec predicts ------===//
//
// From the trace: the step's span, how busy the GPU was, how long it sat
// idle waiting for the host to issue work, how many stream waits the
// program issued. From the imported pipeline: the critical path and the
// resource lower bound, the fewest waits its orderings need, and the device
// model's prediction for the same work issued by pipec as stream launches
// and as a CUDA graph. And the model's fidelity: the step replayed on the
// model with each op issued at its recorded launch time, against the
// recorded timeline.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_REPORT_H
#define PIPEC_RUNTIME_IMPORT_REPORT_H

#include "compiler/schedule/Schedule.h"
#include "runtime/import/Step.h"

namespace llvm {
class raw_ostream;
}

namespace pipec::importer {

struct StepReport {
  // Recorded.
  uint64_t ops = 0, streams = 0;
  double spanUs = 0, busyUs = 0, hostWaitUs = 0;
  uint64_t waitsIssued = 0, hostSyncs = 0;
  // The imported pipeline.
  double criticalPathUs = 0, lowerBoundUs = 0;
  std::string binding;
  uint64_t waitsFewest = 0;
  // Predicted by the device model.
  double streamsMakespanUs = 0, graphMakespanUs = 0;
  GraphAdvice graph;
  double replayedSpanUs = 0; ///< with the recorded launch times
  double medianErrorUs = 0, p95ErrorUs = 0; ///< |predicted - recorded| op ends
};

StepReport reportStep(const ImportedStep &step, const Schedule &schedule,
                      const DeviceProfile &profile, unsigned replays);

void printStepReport(const StepReport &r, const ImportedStep &step,
                     const DeviceProfile &profile, llvm::raw_ostream &os);
void writeStepReportJSON(const StepReport &r, const ImportedStep &step,
                         const DeviceProfile &profile, llvm::raw_ostream &os);

} // namespace pipec::importer

#endif // PIPEC_RUNTIME_IMPORT_REPORT_H
