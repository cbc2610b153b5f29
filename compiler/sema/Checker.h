//===- Checker.h - Sema's checker, shared by its files --------*- C++ -*-===//
//
// Private to compiler/sema/: the one checker, written over several files by
// what they check: Sema.cpp the names and the stages (the scope),
// Attributes.cpp a stage's attributes (one table), Verify.cpp what holds of
// a whole pipeline once its stages are read (cycles, recorded graphs,
// state, size).
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SEMA_CHECKER_H
#define PIPEC_SEMA_CHECKER_H

#include "compiler/sema/Sema.h"

#include "compiler/program/TimeFormat.h"

#include "compiler/sema/Constants.h"
#include "compiler/sema/Cycles.h"
#include "compiler/sema/Suggest.h"
#include "compiler/sema/Units.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace pipec::sema {

using namespace pipec::program;
using llvm::formatv;

/// A buffer's device that was not declared (reported once, at the buffer).
constexpr uint32_t kUnknownDevice = UINT32_MAX;
/// A `copy p2p` whose peer device is not known yet.
constexpr uint32_t kNoPeer = UINT32_MAX - 1;

class Sema {
public:
  Sema(const DeviceProfile &profile, const SemaOptions &options)
      : profile(profile), options(options),
        diags([this](const Diagnostic &d) { buffer.push_back(d); }, 0,
              /*foldWarnings=*/false) {}

  /// `quietIfEmpty`: earlier errors may explain an empty file.
  /// `release`: the same file, whose stages may be freed once converted
  /// (null to keep them).
  Program run(const ast::File &file, bool quietIfEmpty, ast::File *release);
  /// Sends what was found, in source order, to `out`.
  void flush(DiagnosticEngine &out);

private:
  std::optional<Pipeline> checkPipeline(const ast::Pipeline &p, ast::Pipeline *release);
  uint32_t checkIterations(const ast::Pipeline &p, llvm::SMRange &where);
  bool checkSync(const ast::Pipeline &p);
  void checkBuffers(const ast::Pipeline &p, Pipeline &out,
                    const llvm::StringMap<uint32_t> &devices,
                    llvm::StringMap<uint32_t> &index);
  void checkAccesses(const ast::StageDecl &s, Pipeline &out,
                     const llvm::StringMap<uint32_t> &buffers, const ast::Pipeline &p,
                     std::vector<bool> &bufferUsed, Stage &into);
  void checkDevices(const ast::Pipeline &p, Pipeline &out, llvm::StringMap<uint32_t> &index);
  void checkStreams(const ast::Pipeline &p, Pipeline &out,
                    const llvm::StringMap<uint32_t> &devices,
                    llvm::StringMap<uint32_t> &index);
  void checkStage(const ast::StageDecl &s, uint32_t self, Pipeline &out,
                  const llvm::StringMap<uint32_t> &streams,
                  const llvm::StringMap<uint32_t> &stages,
                  const llvm::StringMap<uint32_t> &buffers, const ast::Pipeline &p,
                  std::vector<bool> &streamUsed, std::vector<bool> &bufferUsed, Stage &into);
  void checkWork(const ast::StageDecl &s, Stage &into);
  void checkCollective(const ast::StageDecl &s, uint32_t first, Pipeline &out,
                       const llvm::StringMap<uint32_t> &streams, const ast::Pipeline &p,
                       std::vector<bool> &streamUsed);
  void checkHostThread(const ast::StageDecl &s, Pipeline &out,
                       const llvm::StringMap<uint32_t> &streams, const ast::Pipeline &p,
                       Stage &into);
  void checkPeer(const ast::StageDecl &s, const Pipeline &out, const ast::Pipeline &p,
                 Stage &into);
  void checkPeerFound(const ast::StageDecl &s, const Pipeline &out, Stage &into);
  void checkAttrs(const ast::StageDecl &s, Stage &into);
  void checkWaves(const ast::StageDecl &s, Stage &into);
  void checkSharedMemory(const ast::Attr &a, Stage &into);
  /// A size attribute's bytes (a size or a number of bytes); none, with an
  /// error, otherwise.
  std::optional<uint64_t> sizeAttribute(const ast::Attr &a, llvm::StringRef example);
  void checkBound(const ast::Attr &a, Stage &into);
  /// A copy or memset of a stated size against each buffer it touches:
  /// `what` says what it does with {1} bytes, for stage {0}.
  void checkFitsBuffers(const ast::StageDecl &s, const Stage &into, const Pipeline &out,
                        const char *what);
  void checkIssue(const ast::Attr &a, Stage &into);
  void checkRecordedGraph(const ast::Attr &a, Stage &into);
  void checkPageable(const ast::Attr &a, Stage &into);
  void checkRecordedGraphs(Pipeline &out);
  void checkRunCondition(const ast::Attr &a, Stage &into);
  /// An attribute's whole-number value: none where it has none or another
  /// kind of value; `reported` when its expression had an error.
  struct AttrNumber {
    std::optional<uint64_t> value;
    llvm::SMRange at; ///< the value (its name when it has none)
    bool reported = false;
  };
  AttrNumber wholeNumberOf(const ast::Attr &a);
  bool takesNoValue(const ast::Attr &a);
  void checkDeps(const ast::StageDecl &s, uint32_t self, uint32_t iterations,
                 const llvm::StringMap<uint32_t> &stages, const ast::Pipeline &p, Stage &into);
  void checkCycles(const Pipeline &out);
  void checkSize(const Pipeline &out, llvm::SMRange iterationsAt);
  void markState(Pipeline &out);

  /// "unknown stream 'x'" / "unknown stage 'x'", with "did you mean".
  template <typename Decl>
  void reportUnknown(const ast::Name &name, const char *what, const std::vector<Decl> &decls);

  /// The source text of `range`, for a message.
  static llvm::StringRef sourceText(llvm::SMRange range) {
    if (!range.isValid())
      return "";
    return {range.Start.getPointer(),
            size_t(range.End.getPointer() - range.Start.getPointer())};
  }

  /// A name longer than kMaxNameLength is an error (true).
  bool tooLong(const ast::Name &name) {
    if (name.text.size() <= kMaxNameLength)
      return false;
    diags.error({name.range().Start, name.range().Start},
                formatv("name is too long ({0} characters); the limit is {1}",
                        name.text.size(), kMaxNameLength));
    return true;
  }

  const DeviceProfile &profile;
  SemaOptions options;
  /// The constants of the pipeline being checked.
  std::optional<sema::Constants> constants;
  /// The file's `version N;`: what its words mean, and which it may use.
  unsigned version = kNewestVersion;
  std::string versionWords = "version " + std::to_string(kNewestVersion);
  /// An error for something language version `needed` brought, in a file
  /// that says it is older.
  void needsVersion(unsigned needed, llvm::SMRange range, llvm::StringRef what);
  llvm::StringSet<> versionErrors;
  /// The file's totals so far, for the per-file limits.
  uint64_t fileInstances = 0, fileEdges = 0;
  std::map<const void *, sema::NameIndex> indexes;
  /// The stage names of the pipeline being checked, each declaration's:
  /// they outlive the declarations, which are freed as they are read.
  std::vector<ast::Name> stageNames;
  /// Name comparisons left for "did you mean" in this file.
  uint64_t suggestBudget = 5'000'000;
  std::vector<Diagnostic> buffer;
  DiagnosticEngine diags;
};

constexpr const char *kPrevious = "previous definition is here";

} // namespace pipec::sema

#endif // PIPEC_SEMA_CHECKER_H
