//===- Report.h - What a recorded step says, and what pipec predicts ------===//
//
// From the trace: the step's span, how busy the GPU was, how long it sat
// idle waiting for the host to issue work, the host's dispatch, work and
// syncs, the stream waits the program issued. From the imported pipeline:
// the critical path and the lower bound, the fewest waits and syncs its
// orderings need, and the device model's run of it, host included, as
// stream launches and as CUDA graphs: the graph's verdict against the
// recorded host time (the imported dispatch) and against pipec's own
// launches (none). And the model's fidelity: its free run of the step
// against the recording, op by op, and (a secondary check) the step
// replayed with each launch returning when its recorded call did.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_REPORT_H
#define PIPEC_RUNTIME_IMPORT_REPORT_H

#include "compiler/schedule/Schedule.h"
#include "runtime/Backend.h"
#include "runtime/import/Step.h"

namespace llvm {
class raw_ostream;
}

namespace pipec::importer {

struct StepReport {
  /// Whether the model ran (not on a platform pipec does not model): the
  /// analysis, predicted and fidelity figures are there only then.
  bool modelled = false;
  // Recorded (GPU ops: the step's, and the backlog's part inside it).
  uint64_t ops = 0, streams = 0, backlogOps = 0;
  double spanUs = 0, busyUs = 0, hostWaitUs = 0;
  uint64_t waitsIssued = 0, hostSyncs = 0;
  double dispatchUs = 0; ///< the host's time before its launch calls returned
  double hostWorkUs = 0; ///< the host's work between calls (cpu stages)
  // The imported pipeline.
  double criticalPathUs = 0, lowerBoundUs = 0;
  std::string binding;
  uint64_t waitsFewest = 0, syncsFewest = 0;
  // Predicted by the device model, over the GPU ops' window.
  double streamsMakespanUs = 0, graphMakespanUs = 0;
  runtime::HostTime streamsHostUs; ///< per replay, as stream launches
  /// The step's period (ImportedStep::periodUs), and as the model has it
  /// for a loop of such steps: the host thread's time for one replay (its
  /// dispatch, calls, cpu stages and waits: it is never idle), or the
  /// device's busy time where that is longer (a loop's full launch queue
  /// then holds the host to the device's pace). 0: the whole trace.
  double periodUs = 0, predictedPeriodUs = 0;
  /// The graph against the recorded host time (the imported dispatch), and
  /// against pipec's own launches (the same program without issue=).
  GraphAdvice graph, graphOwnLaunches;
  uint64_t graphSegments = 0;
  /// Kernels written as their time alone, and the contention taken out of
  /// their recorded times (Contention.h).
  uint64_t contendedKernels = 0;
  double contentionUs = 0;
  /// Communication (program::isCommunicationKernel's list, by each op's
  /// recorded name) and the part of it other work of the device hid, as
  /// recorded and in the free run.
  struct Comm {
    double us = 0, hiddenUs = 0;
  };
  Comm recordedComm, predictedComm;
  /// The model against the recording: its span over the GPU ops' window,
  /// and |predicted - recorded| op ends (median and p95).
  struct Fidelity {
    double spanUs = 0, medianErrorUs = 0, p95ErrorUs = 0;
  };
  /// The headline: the free run, pipec's issue of the imported program,
  /// host included (the run streamsMakespanUs measures).
  Fidelity free;
  /// A secondary check: each launch returning no sooner than its recorded
  /// call did, each cpu stage beginning no sooner than the host began it.
  /// On a host-bound step it shows little: the recording sets the pace.
  Fidelity pinned;
};

StepReport reportStep(const ImportedStep &step, const Schedule &schedule,
                      const DeviceProfile &profile, unsigned replays);
/// The recorded half alone (span, busy, host waiting, dispatch and work,
/// waits, syncs, communication): all there is for a platform pipec does
/// not model (ImportedStep::foreignPlatform).
StepReport reportRecorded(const ImportedStep &step, const Schedule &schedule);

void printStepReport(const StepReport &r, const ImportedStep &step,
                     const DeviceProfile &profile, llvm::raw_ostream &os);
void writeStepReportJSON(const StepReport &r, const ImportedStep &step,
                         const DeviceProfile &profile, llvm::raw_ostream &os);

} // namespace pipec::importer

#endif // PIPEC_RUNTIME_IMPORT_REPORT_H
