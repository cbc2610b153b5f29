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
#include <vector>

namespace pipec::runtime {

/// How a run's timeline was measured: SCHEDULE.md's `"timing"`.
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
  std::string why; ///< when not usable: "libcupti.so: cannot open ..."
};

/// The method a GPU run uses: CUPTI when it is usable (or asked for), timing
/// events otherwise. Asking for CUPTI where it is not usable is an error that
/// says why; `auto` falls back to events and leaves the reason in `note`.
llvm::Expected<TimingMethod> chooseTiming(TimingRequest request,
                                          const CuptiStatus &cupti,
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

/// Stream lowering: `issued[i]` lists the device operations (kernels and
/// copies) issued to the stream whose CUPTI id is `streamIds[i]`, in issue
/// order. A stream executes its operations in that order, so its records,
/// sorted by start, belong to them one for one. Records of other streams
/// are ignored; a stream whose record count differs is an error.
llvm::Error matchStreamRecords(const std::vector<uint32_t> &streamIds,
                               const std::vector<std::vector<uint32_t>> &issued,
                               std::vector<DeviceRecord> records,
                               InstanceIntervals &out);

/// Graph lowering: `nodeIds[v]` is the CUPTI id of instance v's graph node
/// (0 for a host node, which has no record). Every such node must have
/// exactly one record.
llvm::Error matchGraphRecords(const std::vector<uint64_t> &nodeIds,
                              const std::vector<DeviceRecord> &records,
                              InstanceIntervals &out);

} // namespace pipec::runtime

#endif // PIPEC_RUNTIME_TIMING_TIMING_H
