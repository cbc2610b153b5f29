//===- Reports.h - Run results as a table, JSON, a trace and a timeline ---===//
#ifndef PIPEC_RUNTIME_REPORT_REPORTS_H
#define PIPEC_RUNTIME_REPORT_REPORTS_H

#include "runtime/Backend.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

namespace llvm {
class raw_ostream;
}

namespace pipec::runtime {

/// The short table per pipeline and lowering, and the comparison of the two
/// lowerings when both ran.
void printRunTable(llvm::ArrayRef<LoweringRun> runs, const Backend &backend,
                   llvm::raw_ostream &os);

/// The run result ("pipec-run", docs/scheduling.md).
void writeRunJSON(llvm::ArrayRef<LoweringRun> runs, const Backend &backend,
                  llvm::raw_ostream &os);

/// Chrome trace-event JSON: one process per pipeline and lowering, one
/// thread per stream (and one for the host's calls).
void writeTrace(llvm::ArrayRef<LoweringRun> runs, llvm::raw_ostream &os);

/// The most stage instances (and host calls) a trace shows per run, and a
/// page's timeline: the first ones in issue order, and the file says how
/// many of how many. Ten million make a 2.6 GB trace nobody can open.
constexpr uint32_t kMaxTraceInstances = 200'000;
constexpr uint32_t kMaxPageInstances = 20'000;

/// One self-contained HTML page (no network): the DAG, an SVG timeline per
/// lowering with the waits as arrows, and the timing table.
void writeHtml(llvm::ArrayRef<LoweringRun> runs, const Backend &backend,
               llvm::StringRef source, llvm::raw_ostream &os);

/// Two sets of runs side by side (`run --compare`): each figure for A and B
/// and B - A, the runs paired in order.
void printComparison(llvm::ArrayRef<LoweringRun> a, llvm::ArrayRef<LoweringRun> b,
                     const Backend &backendA, const Backend &backendB, llvm::StringRef nameA,
                     llvm::StringRef nameB, llvm::raw_ostream &os);

/// A Gantt chart of the streams, drawn in `width` columns of text.
void printTimeline(const LoweringRun &run, llvm::raw_ostream &os, unsigned width = 72);

} // namespace pipec::runtime

#endif // PIPEC_RUNTIME_REPORT_REPORTS_H
