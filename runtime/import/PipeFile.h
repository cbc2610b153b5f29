//===- PipeFile.h - The step as a .pipe file, and as its program ----------===//
//
// What `pipec import` writes: the step as a `.pipe` file, already laid out
// as `pipec fmt` lays it out (formatting it changes nothing), and the
// program that file checks to, built from the step directly: neither needs
// the other, and neither parses anything (at 800,000 ops the parse, the
// check and the layout of the file's text took 3.8 s of the import's 9).
// Tests hold both to the front end: the written file parses and checks
// clean, without a warning, to exactly the program `programOf` builds.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_PIPEFILE_H
#define PIPEC_RUNTIME_IMPORT_PIPEFILE_H

#include "compiler/format/Columns.h"
#include "compiler/program/DeviceProfile.h"
#include "compiler/program/Program.h"
#include "compiler/sema/Sema.h"
#include "runtime/import/Step.h"

#include "llvm/Support/raw_ostream.h"

#include <map>

namespace pipec::importer {

/// One stage's line (its kind, time and attributes) as the file writes
/// it, and as the program holds it.
struct StageLine {
  program::Stage stage; ///< without its name, stream and dependencies
  std::string work;     ///< "kernel 4us", "copy h2d 8us", "cpu 12.5us"
  std::string attrs;    ///< "[blocks=64, threads=256, issue=1.4us]", or empty
  /// What the line writes otherwise than recorded, and why (for its
  /// comment), or empty.
  std::string note;
};

/// Describes a stage of the step as the file writes it: an error names the
/// event when its numbers do not fit the language.
llvm::Error describe(const ImportedStep &step, const ImportedStage &st,
                     const DeviceProfile &profile, StageLine &line);
/// The comment after a stage's line (without "// "): the op's full name,
/// the sync's call.
std::string stageComment(const ImportedStep &step, const ImportedStage &st);
/// A time as the file writes it, microseconds to the nanosecond without
/// trailing zeros ("40us", "2.5us"), and the value the front end reads back
/// from that text (what the program built beside the file holds).
struct Time {
  std::string text;
  double us = 0;
};
Time timeOf(double us);
/// timeOf's text.
std::string timeText(double us);
/// A stream's name: s7 for id 7; a negative id (s-1 is no name) s_neg1.
std::string streamName(int64_t id);
/// A recorded stream priority as the device's range holds it (0 when the
/// recording gave none): what the file and the program say.
int64_t streamPriorityOf(const ImportedStep &s, int64_t stream, const DeviceProfile &profile);
/// The pipeline's: step_N, or trace for a trace without steps.
std::string pipelineName(const ImportedStep &step);
/// Appends text from the trace as a line comment may hold it: control
/// characters as spaces.
void addCommentText(std::string &to, llvm::StringRef text);
/// A line comment as fmt keeps it: without trailing spaces.
void trimComment(std::string &comment);

/// The file, checked and measured (every stage representable, its columns'
/// widths known) before a byte of it is written: a step it cannot write
/// is an error naming the event, and no output at all.
class PipeFile {
public:
  /// `source` is the trace's path, named in the file's first comment.
  static llvm::Expected<PipeFile> lay(const ImportedStep &step, llvm::StringRef source,
                                      const DeviceProfile &profile);
  void write(llvm::raw_ostream &os) const;

private:
  PipeFile(const ImportedStep &step, const DeviceProfile &profile)
      : step(&step), profile(&profile) {}

  const ImportedStep *step;
  const DeviceProfile *profile;
  std::string header; ///< the comments and the `pipeline NAME {` line
  std::vector<std::string> streamNames;
  std::vector<std::string> streamPriorities; ///< "priority -5", or ""
  std::map<int64_t, uint32_t> streamIndex;   ///< by stream id (any, INT64_MAX too)
  std::vector<std::string> bufferSizes;      ///< "4096B"
  Columns streamColumns{3}, bufferColumns{4}, stageColumns{6};
};

/// An error when a program of `size` is past what sema lets a pipeline
/// hold once unrolled (the written file would not check): `what` names it.
llvm::Error checkSize(const sema::PipelineSize &size, llvm::StringRef what);

/// The whole file as text (tests, the fuzzer).
llvm::Expected<std::string> writePipe(const ImportedStep &step, llvm::StringRef source,
                                      const DeviceProfile &profile);

/// The program the file checks to: the same streams, stages (their numbers
/// to the bit: times as read back from the file's three decimals),
/// dependencies, without source ranges. The same errors as `lay`.
llvm::Expected<program::Program> programOf(const ImportedStep &step,
                                           const DeviceProfile &profile);

} // namespace pipec::importer

#endif // PIPEC_RUNTIME_IMPORT_PIPEFILE_H
