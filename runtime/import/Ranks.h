//===- Ranks.h - The traces of several ranks, as one program --------------===//
//
// A distributed job's profiler writes one trace per rank. Imported
// together they are one pipeline of several devices (language version 4):
// each rank a device, with its streams and its own host thread (its cpu
// stages `on` it, its launches' dispatch as recorded), and the NCCL kernels
// that are one collective matched across ranks: the k-th all-reduce (all-
// gather, reduce-scatter, broadcast) of every rank is one collective stage
// with a part on each rank's stream, taking the time the last rank to join
// it measured (the others waited for it inside the kernel). What the ranks
// do not agree on stays each rank's own kernel, and the file says so.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_RANKS_H
#define PIPEC_RUNTIME_IMPORT_RANKS_H

#include "compiler/format/Columns.h"
#include "compiler/program/DeviceProfile.h"
#include "compiler/program/Program.h"
#include "runtime/import/Step.h"

#include "llvm/Support/Allocator.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace pipec::importer {

/// One rank's step, and the trace it came from.
struct Rank {
  std::string source;
  ImportedStep step;
};

/// The collective an NCCL kernel runs, from its name (ncclKernel_AllReduce_…,
/// ncclDevKernel_AllGather_…); none for anything else (send/recv included).
std::optional<program::CollectiveOp> ncclCollective(llvm::StringRef kernelName);

/// What the import of several ranks matched, and what it could not.
struct RanksSummary {
  size_t collectives = 0; ///< matched across every rank
  size_t unmatched = 0;   ///< NCCL collective kernels left as kernels
  size_t gpuOps = 0, cpuStages = 0;
  /// Whether the traces share one clock (their steps overlap on it, as on
  /// one machine): each rank's host then starts the step when it did,
  /// after the earliest (a `start` cpu stage of that delay), and
  /// recordedSpanUs covers every rank on that clock.
  bool aligned = false;
  std::vector<double> startDelayUs; ///< per rank (0 when not aligned)
  double recordedSpanUs = 0;        ///< the longest rank's on its own clock when not aligned
  std::vector<std::string> notes;   ///< for the reader (stderr and the file)
};

/// The ranks' steps as one .pipe file (version 4), already laid out as
/// `fmt` lays it out, and the program that file checks to, built beside it
/// without a parse (at 8 ranks of 100,000 ops the parse and check of the
/// file took half of the import's time and most of its memory). Tests hold
/// the two to each other.
class RanksFile {
public:
  /// Its streams (always) and stages (withProgram), without source ranges.
  program::Program program;
  /// Per stage of the program (withProgram): whether it is communication,
  /// as the import of one rank counts it (program::isCommunication, a
  /// kernel by its recorded name: the program's names are the ranks'
  /// short ones).
  std::vector<bool> communicates;
  /// Where each stream's name is in the text (a byte offset): a diagnostic
  /// about a stream points at the line the file has it on.
  std::vector<size_t> streamNameAt;

  /// The file, written a line at a time (a million stages are a few hundred
  /// megabytes: not held whole).
  void write(llvm::raw_ostream &os) const;
  /// The file as one string (for a diagnostic that points into it, and
  /// tests).
  std::string text() const;

private:
  friend llvm::Expected<RanksFile> writeRanks(const std::vector<Rank> &, const DeviceProfile &,
                                              RanksSummary &, bool);
  /// A stage's cells, one after another in rowText, and where each ends.
  struct Row {
    const char *text;
    std::array<uint32_t, 6> end;
    llvm::StringRef cell(size_t i) const {
      const uint32_t begin = i ? end[i - 1] : 0;
      return llvm::StringRef(text + begin, end[i] - begin);
    }
    std::array<llvm::StringRef, 6> cells() const {
      return {cell(0), cell(1), cell(2), cell(3), "", cell(4)};
    }
  };
  std::string head; ///< up to the stages: comments, devices, streams
  std::vector<Row> rows;
  /// The rows' text, in slabs of many rows: a string of its own per row
  /// would cost its object and the allocator's header, a million times.
  llvm::BumpPtrAllocator rowText;
  Columns stageColumns{6};
};

/// The NCCL channels the ranks' collectives ran with: the grid of their
/// kernels (a block per channel), the most common; 0 where none says.
unsigned ncclChannelsOf(const std::vector<Rank> &ranks);

/// The ranks' steps as a file and its program (its stages only
/// `withProgram`). The same errors as one rank's.
llvm::Expected<RanksFile> writeRanks(const std::vector<Rank> &ranks,
                                     const DeviceProfile &profile, RanksSummary &summary,
                                     bool withProgram = true);

} // namespace pipec::importer

#endif // PIPEC_RUNTIME_IMPORT_RANKS_H
