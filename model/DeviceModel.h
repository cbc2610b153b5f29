//===- DeviceModel.h - A deterministic discrete-event model of a GPU ------===//
//
// What it models (docs/device-model.md says more, and where each number
// comes from):
//  - the host thread running the schedule's calls in order: `issue=`
//    dispatch and each API call's cost, `cpu` stages, synchronisations
//    (blocked until the event completes, then a wake-up latency), blocked
//    too when the driver's launch queue is full;
//  - streams mapped round-robin onto a bounded number of hardware queues,
//    each a FIFO whose head blocks the items behind it (false serialisation
//    when streams share a queue);
//  - SMs with block slots by threads per block, at most N resident kernels,
//    and a block dispatcher that gives free slots to the most urgent pending
//    blocks and never preempts a running one;
//  - one copy engine per direction (h2d, d2h, d2d), FIFO, with latency;
//  - one host-function executor, FIFO, with latency;
//  - event records, cross-stream wait latency, the gap between back-to-back
//    items of a stream or dependent nodes of a graph, graph launch costs.
// Ties are broken by a sequence number: the same input gives the same times.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_MODEL_DEVICEMODEL_H
#define PIPEC_MODEL_DEVICEMODEL_H

#include "compiler/program/DeviceProfile.h"
#include "compiler/schedule/Schedule.h"
#include "runtime/Backend.h"

#include <vector>

namespace pipec::sim {

/// One checkpoint of the skip-ahead (for tests): the block of iterations
/// whose first host op the host thread had reached, the clock then, the
/// block's first instance, the state written down (relative to them), and
/// the host's time and the events counted so far (which a jump adds up
/// from the last block's).
struct Checkpoint {
  uint32_t block = 0;
  double clock = 0;
  uint64_t firstInstance = 0;
  std::vector<double> state;
  runtime::HostTime hostTime;
  uint64_t events = 0;
};

struct ModelOptions {
  bool priorities = true; ///< false: every stream at the same priority
  bool recordHost = true; ///< keep each host call's span (for traces)
  bool dispatch = true;   ///< false: launches pay no `issue=` (advise's gap)
  /// Stream lowering: per instance, the earliest host time its launch call
  /// may return, or its cpu stage begin (a recorded program's times, `pipec
  /// import`); the host still pays each call's cost, in order.
  const std::vector<double> *issueAt = nullptr;
  /// For tests: every pump looks at every hardware queue and every resident
  /// kernel, as a model without incremental bookkeeping would; the traces
  /// must be the same.
  bool lookEverywhere = false;
  /// For tests: every wave of a grid is a batch of its own, as a model
  /// without closed-form waves would run it; the traces must be the same.
  bool wavesOneByOne = false;
  /// Where the schedule repeats and the model's state has settled, skip
  /// ahead: the skipped iterations' times are the last simulated one's,
  /// shifted (equal to simulating them up to rounding; Periodic.h).
  /// Only without recordHost and issueAt.
  bool extrapolate = false;
  /// For tests, with extrapolate: every block's checkpoint is kept here
  /// and the model never skips, so that a test can hold what followed two
  /// equal states to each other (the extrapolation's premise).
  std::vector<Checkpoint> *checkpoints = nullptr;
  /// false: no starts are kept (ReplayTrace::start stays empty), for a
  /// caller that needs only when things end.
  bool starts = true;
  /// A what-if (the gap's): no two streams share a hardware queue, whatever
  /// the profile's hardware_queues.
  bool queuePerStream = false;
  /// A what-if (the gap's): no two kernels share the SMs: each has all of
  /// its device's to itself, and any number may be resident at once.
  bool smsPerKernel = false;
  /// A what-if (the far end of advise's range): a kernel whose file says
  /// nothing of what bounds it (`bytes=`, `bound=`; program::boundUnsaid)
  /// needs the whole device's memory bandwidth and issue throughput while it
  /// runs, a memset the whole bandwidth, so that work running together
  /// shares them. Otherwise such work competes only for its SMs' slots.
  bool contendUnsaid = false;
};

/// One replay, from the host's first call at time 0.
struct ReplayTrace {
  std::vector<double> start, end; ///< per instance, microseconds (start:
                                  ///< empty without ModelOptions::starts)
  double submitUs = 0;            ///< host time spent issuing the replay
  double doneUs = 0;              ///< when the last stage ended
  /// Host calls as [start, end) spans: one per call of the stream lowering,
  /// or the graph launch.
  std::vector<runtime::HostCall> host;
  runtime::HostTime hostTime; ///< where the host's time went
  /// Several devices: each device's host thread's (hostTime adds them up).
  std::vector<runtime::HostTime> threadTime;
  uint64_t simulatedEvents = 0;        ///< the skipped iterations' counted too
  uint64_t extrapolatedIterations = 0; ///< how many were not simulated
  /// Instances that never ended: the model ran out of events with work
  /// left (a deadlock: parts of collectives that hold their devices while
  /// each waits for one behind the other). 0 in a run that finished.
  uint64_t unfinished = 0;
  uint32_t firstUnfinished = 0; ///< the earliest such instance, if any
};

/// Runs one replay of `schedule` in the given lowering on the model.
ReplayTrace simulate(const Schedule &schedule, Lowering lowering, const DeviceProfile &profile,
                     const ModelOptions &options);

} // namespace pipec::sim

#endif // PIPEC_MODEL_DEVICEMODEL_H
