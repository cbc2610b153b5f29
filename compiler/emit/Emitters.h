//===- Emitters.h - Schedules as text, JSON and Graphviz DOT --------------===//
#ifndef PIPEC_EMIT_EMITTERS_H
#define PIPEC_EMIT_EMITTERS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace llvm {
class raw_ostream;
namespace json {
class OStream;
}
} // namespace llvm

#include <string>

namespace pipec {
struct GraphAdvice;
struct DeviceUse;

struct Schedule;
struct DeviceProfile;

/// A readable schedule: streams, one line per host call (or the graph's
/// nodes and edges), and the analysis.
void emitText(const Schedule &schedule, llvm::raw_ostream &os);

/// The schedule document (docs/scheduling.md), for every pipeline of one
/// source file.
void emitJSON(llvm::ArrayRef<const Schedule *> schedules, llvm::StringRef source,
              llvm::raw_ostream &os);

/// Graphviz: streams as clusters, event waits as highlighted edges.
/// Graphviz: one graph; each pipeline a cluster of stream clusters.
void emitDot(llvm::ArrayRef<const Schedule *> schedules, llvm::raw_ostream &os);

/// Why emitCuda cannot write these schedules, if it cannot: a pipeline of
/// several devices, or with collectives (NCCL calls on streams), lowered to
/// a graph. The tool asks before it opens the output.
llvm::Error cudaCannotEmit(llvm::ArrayRef<const Schedule *> schedules);

/// A standalone CUDA C++ program that performs and times every schedule
/// (`nvcc` alone builds it); `profile` gives copies given as a time their
/// bytes. cudaCannotEmit's error, with nothing written, where it has one.
/// Past `callTableFrom` host calls, a stream lowering's calls are a table
/// walked by a loop (nvcc builds a long one in seconds), else statements.
/// `fileName`: the file it is written to, as its build line names it.
llvm::Error emitCuda(llvm::ArrayRef<const Schedule *> schedules, llvm::StringRef source,
                     const DeviceProfile &profile, llvm::raw_ostream &os,
                     size_t callTableFrom = 4096, llvm::StringRef fileName = "pipeline.cu");

/// Shortest text that reads back as the same double, with a ".0" on whole
/// numbers: 12.0, 0.25, 1e-05.
void writeNumber(llvm::raw_ostream &os, double value);
/// The costs behind "does a graph pay?" -- streams_replay_us,
/// graph_replay_us, one_time_us, break_even_replays (null: never) -- as
/// compile's graph_advice and run's comparison both write them.
void writeGraphCosts(llvm::json::OStream &j, const GraphAdvice &g);
/// `"devices": [{"name", "busy_us", "bubble_fraction", "comm_us",
/// "comm_hidden_fraction"}]`, as compile's analysis and run both write it.
void writeDeviceUses(llvm::json::OStream &j, llvm::ArrayRef<DeviceUse> devices);
/// "busy 1.2 ms, bubble 12.5% of SPAN; communication 80 us, 50.0% hidden".
std::string describeDeviceUse(const DeviceUse &use, llvm::StringRef span);
/// `"key": value` in `j`, the value written by writeNumber.
void writeNumberAttribute(llvm::json::OStream &j, llvm::StringRef key, double value);

} // namespace pipec

#endif // PIPEC_EMIT_EMITTERS_H
