//===- Timing.h - How a run's timeline is measured, and read back ---------===//
//
// On a GPU the timeline of the representative replay is measured as the
// profilers measure it: CUPTI's Activity API records each kernel and copy
// (and each graph node) with its start and end on one clock, and host
// stages read that clock themselves (cuptiGetTimestamp). Where CUPTI cannot
// be loaded, timing-enabled CUDA events are recorded on each stage's own
// stream around it. Neither adds a kernel, nor an ordering the schedule does
// not have. This file holds the decisions and the arithmetic, which need no
// GPU: which method a run uses, and which activity record belongs to which
// stage instance.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_TIMING_TIMING_H
#define PIPEC_RUNTIME_TIMING_TIMING_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pipec::runtime {

/// How a run's timeline was measured: the run result's `"timing"` (docs/scheduling.md).
enum class TimingMethod { Model, Cupti, Events };
const char *spelling(TimingMethod method);

/// What the user asked for (`--timing=`).
enum class TimingRequest { Auto, Cupti, Events };
/// "auto", "cupti" or "events"; false for anything else.
bool parseTimingRequest(llvm::StringRef text, TimingRequest &out);

/// What loading CUPTI gave: whether the library and its entry points were
/// found and activity recording could be enabled, and if not, why.
struct CuptiStatus {
  bool usable = false;
  std::string why;     ///< when not usable: "libcupti.so: cannot open ..."
  std::string library; ///< when usable: the file it was loaded from
};

/// The method a GPU run uses: CUPTI when it is usable (or asked for), timing
/// events otherwise. Asking for CUPTI where it is not usable is an error that
/// says why; `auto` falls back to events and leaves the reason in `note`.
llvm::Expected<TimingMethod> chooseTiming(TimingRequest request, const CuptiStatus &cupti,
                                          std::string &note);

/// CUPTI was chosen but its records could not be used (`why`): with
/// `--timing=cupti` that is the run's error (asked for CUPTI, it gets CUPTI
/// or nothing); with `auto` the timeline falls back to timing events, and
/// `note` says why. Returns the method the timeline uses then.
llvm::Expected<TimingMethod> afterCuptiFailed(TimingRequest request, llvm::Error why,
                                              std::string &note);

/// One activity record of a kernel or a copy: the CUPTI stream it ran on,
/// the graph node that launched it (0 outside graphs) and its interval, in
/// CUPTI's nanoseconds.
struct DeviceRecord {
  uint32_t streamId = 0;
  uint64_t graphNodeId = 0;
  uint64_t start = 0, end = 0;
};

/// Per stage instance, its interval in CUPTI nanoseconds (0, 0 where no
/// record belongs to it, e.g. host stages).
struct InstanceIntervals {
  std::vector<uint64_t> start, end;
};

/// The span a timeline replay ran in, on CUPTI's clock: a record outside it
/// is not of this replay.
struct RecordWindow {
  uint64_t begin = 0, end = UINT64_MAX;
};

/// Whether a record can be taken as it is: a start that is not 0, an end not
/// before it, both inside `window`. A record that fails is an error (the
/// run falls back to timing events), never a time in the timeline.
llvm::Error checkRecord(const DeviceRecord &record, const RecordWindow &window);

/// Stream lowering: `issued[i]` lists the device operations (kernels and
/// copies) issued to the stream whose CUPTI id is `streamIds[i]`, in issue
/// order. A stream executes its operations in that order, so its records,
/// sorted by start, belong to them one for one. Records of other streams
/// are ignored; a stream whose record count differs is an error, and so is
/// a record checkRecord refuses.
llvm::Error matchStreamRecords(const std::vector<uint32_t> &streamIds,
                               const std::vector<std::vector<uint32_t>> &issued,
                               std::vector<DeviceRecord> records, const RecordWindow &window,
                               InstanceIntervals &out);

/// CUPTI_CBID_RESOURCE_GRAPHNODE_CLONED, as CUPTI reports it while a graph
/// is instantiated: the id of a node of the template graph and the id of
/// its clone in the executable graph (which is what the records of that
/// executable graph's launches carry).
struct NodeClone {
  uint64_t original = 0, clone = 0;
};

/// Graph lowering: `nodeIds[v]` is the CUPTI id (cuptiGetGraphNodeId) of
/// instance v's node in the template graph (0 for a host node, which has no
/// record); `clones` are the clones reported while the launched executable
/// graph was instantiated. A record belongs to v when it carries v's clone's
/// id (or, where no clone was reported, v's own). Every such node must have
/// exactly one record, and every record must pass checkRecord.
llvm::Error matchGraphRecords(const std::vector<uint64_t> &nodeIds,
                              const std::vector<NodeClone> &clones,
                              const std::vector<DeviceRecord> &records,
                              const RecordWindow &window, InstanceIntervals &out);

/// Intervals in nanoseconds on one clock into microseconds after `origin`,
/// subtracted as 64-bit integers first: the clocks read ~1.8e18 ns, where a
/// double has steps of 256 ns.
void intervalsToMicros(const InstanceIntervals &iv, uint64_t origin,
                       std::vector<double> &start, std::vector<double> &end);

/// A host stage's interval when its stream brackets it with timing events:
/// the stream reached it at `reached` and went past it at `passed` (both on
/// the events' clock); its host function ran for `ranNs` (the host's clock)
/// and ended no later than `passed`. It started `ranNs` before `passed`, but
/// never before `reached`.
std::pair<uint64_t, uint64_t> hostStageFromEvents(uint64_t reached, uint64_t passed,
                                                  uint64_t ranNs);

/// The slack a run's dependency check allows for its clocks, microseconds:
/// the device timer's resolution (`timerResolutionNs`, 0 when not measured)
/// plus what the method adds -- cudaEventElapsedTime's resolution (0.5 us)
/// for timing events; for CUPTI, the conversion of the host's readings of
/// its clock to the device's timestamps (taken as 1 us). The model has none
/// but rounding (1 ns).
double violationSlackUs(TimingMethod method, double timerResolutionNs);

} // namespace pipec::runtime

#endif // PIPEC_RUNTIME_TIMING_TIMING_H
