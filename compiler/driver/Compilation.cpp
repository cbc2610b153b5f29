//===- Compilation.cpp ----------------------------------------------------===//

#include "compiler/driver/Compilation.h"

#include "compiler/emit/Emitters.h"
#include "compiler/parse/Parser.h"
#include "compiler/program/ProgramDump.h"
#include "compiler/schedule/Lints.h"
#include "compiler/schedule/Races.h"
#include "compiler/schedule/StreamAssignment.h"
#include "compiler/sema/Sema.h"
#include "compiler/support/Printable.h"
#include "compiler/support/ReadFile.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace pipec;
using namespace pipec::driver;

namespace {

double secondsSince(std::chrono::steady_clock::time_point &since) {
  auto now = std::chrono::steady_clock::now();
  double s = std::chrono::duration<double>(now - since).count();
  since = now;
  return s;
}

/// A buffer that owns the string it was made from (no copy of it).
class StringBuffer : public llvm::MemoryBuffer {
public:
  StringBuffer(std::string text, llvm::StringRef name) : text(std::move(text)), name(name) {
    init(this->text.data(), this->text.data() + this->text.size(),
         /*RequiresNullTerminator=*/true);
  }
  llvm::StringRef getBufferIdentifier() const override { return name; }
  BufferKind getBufferKind() const override { return MemoryBuffer_Malloc; }

private:
  std::string text, name;
};
} // namespace

llvm::Error driver::loadSource(llvm::StringRef path, Source &src) {
  src.path = path == "-" ? "<stdin>" : path.str();
  src.name = path == "-" ? "<stdin>" : printable(path);
  // Read, never mapped, and never more than the limit, whatever it is.
  llvm::Expected<std::string> text = readBounded(path, kMaxFileBytes, src.name);
  if (!text)
    return text.takeError();
  src.bufferId = src.sm.AddNewSourceBuffer(
      std::make_unique<StringBuffer>(std::move(*text), src.name), llvm::SMLoc());
  return llvm::Error::success();
}

void driver::loadText(llvm::StringRef name, llvm::StringRef text, Source &src) {
  src.name = src.path = name.str();
  src.bufferId = src.sm.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(text, name),
                                           llvm::SMLoc());
}

void driver::loadText(llvm::StringRef name, std::string &&text, Source &src) {
  src.name = src.path = name.str();
  src.bufferId = src.sm.AddNewSourceBuffer(
      std::make_unique<StringBuffer>(std::move(text), name), llvm::SMLoc());
}

llvm::StringRef driver::textOf(const Source &src) {
  return src.sm.getMemoryBuffer(src.bufferId)->getBuffer();
}

std::vector<llvm::StringRef> driver::splitParts(llvm::StringRef text) {
  std::vector<llvm::StringRef> parts;
  size_t start = 0, pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == llvm::StringRef::npos)
      end = text.size();
    if (text.slice(pos, end).rtrim("\r") == "// -----") {
      parts.push_back(text.slice(start, pos));
      start = end;
    }
    pos = end + 1;
  }
  parts.push_back(text.slice(start, text.size()));
  return parts;
}

void driver::lint(const program::Pipeline &p, const StageGraph &graph,
                  const DeviceProfile &profile, DiagnosticEngine &diags, bool writing) {
  if (writing && !diags.shouldStop())
    lintRedundantDependencies(p, graph, diags);
  if (writing && !diags.shouldStop())
    lintWrittenOrder(p, graph, diags);
  if (!diags.shouldStop())
    lintHardwareQueues(p, profile.hardwareQueues, diags);
}

bool driver::checkSource(Source &src, const DeviceProfile &profile,
                         const DiagnosticOptions &diagnostics, const ScheduleOptions &assign,
                         std::optional<llvm::StringRef> part) {
  DiagnosticEngine diags(diagnostics.handler ? diagnostics.handler
                                             : printingHandler(src.sm, llvm::errs(), src.name,
                                                               diagnostics.colors, src.lines),
                         diagnostics.errorLimit);
  CompileRequest request;
  request.stopAfter = Phase::Check;
  request.schedule = assign;
  request.part = part;
  Compiled out;
  std::string usage;
  const Outcome outcome = compileIn(src, diags, profile, request, out, usage);
  diags.finish();
  return outcome == Outcome::Success;
}

Outcome driver::compileSource(const DeviceProfile &profile, const CompileRequest &request,
                              const DiagnosticOptions &diagnostics, Compiled &out,
                              std::string &usage) {
  out.diags = std::make_unique<DiagnosticEngine>(
      diagnostics.handler
          ? diagnostics.handler
          : printingHandler(out.src.sm, llvm::errs(), out.src.name, diagnostics.colors),
      diagnostics.errorLimit);
  return compileIn(out.src, *out.diags, profile, request, out, usage);
}

/// The phases, in order, up to the one asked for: parse (the whole buffer
/// or a part), check (sema and the lints; `check` stops here, with the
/// races of `sync declared` pipelines), schedule.
Outcome driver::compileIn(Source &src, DiagnosticEngine &diags, const DeviceProfile &profile,
                          const CompileRequest &request, Compiled &out, std::string &usage) {
  auto clock = std::chrono::steady_clock::now();
  out.file = request.part ? parseFile(src.sm, src.bufferId, src.name, diags, *request.part)
                          : parseFile(src.sm, src.bufferId, src.name, diags);
  out.parseSeconds = secondsSince(clock);
  if (diags.hadError())
    return Outcome::InputErrors;
  auto printing = [&](Phase phase) { return request.printTo && request.printAfter == phase; };
  if (printing(Phase::Parse))
    ast::dump(out.file, src.sm, *request.printTo);
  if (request.stopAfter == Phase::Parse)
    return Outcome::Success;

  // Unless asked to keep it, the AST is not needed past here: sema frees
  // each item as it is done with it.
  SemaOptions sema;
  sema.automaticStreams = automaticStreamsBound(request.schedule, profile);
  out.program = request.keepSyntax ? analyze(out.file, profile, diags, sema)
                                   : analyze(std::move(out.file), profile, diags, sema);
  std::vector<std::unique_ptr<StageGraph>> graphs;
  for (const program::Pipeline &p : out.program.pipelines) {
    graphs.push_back(std::make_unique<StageGraph>(p, issueOrder(p)));
    lint(p, *graphs.back(), profile, diags, request.writingLints);
  }
  if (diags.hadError())
    return Outcome::InputErrors;
  // --max-streams caps the streams pipec creates; declared ones are never
  // merged, so a cap below them is a mistake to say, not to ignore.
  if (request.maxStreamsGiven)
    for (const program::Pipeline &p : out.program.pipelines)
      if (p.streams.size() > request.maxStreamsGiven) {
        usage = llvm::formatv("--max-streams={0} is below the {1} streams pipeline "
                              "'{2}' declares; pipec never merges declared streams",
                              request.maxStreamsGiven, p.streams.size(), p.name);
        return Outcome::UsageError;
      }
  out.checkSeconds = secondsSince(clock);
  if (printing(Phase::Check))
    program::dump(out.program, *request.printTo);
  if (request.stopAfter == Phase::Check) {
    // sync declared: the races need the unrolled stages on their streams (a
    // stage without `on` gets the stream compile gives it), not a schedule.
    for (const program::Pipeline &p : out.program.pipelines)
      if (p.syncDeclared && !diags.hadError() && !diags.shouldStop()) {
        Instances instances(p);
        bool pinned = std::all_of(p.stages.begin(), p.stages.end(),
                                  [](const auto &st) { return !program::unpinned(st); });
        if (pinned) {
          std::vector<uint32_t> streamOfStage;
          for (const program::Stage &st : p.stages)
            streamOfStage.push_back(
                onHostThread(st.kind()) ? kHostStream : static_cast<uint32_t>(st.stream));
          reportRaces(instances,
                      findRaces(instances, streamOfStage, p.streams, diags.errorsLeft()),
                      diags);
          continue;
        }
        reportRaces(Schedule(p, profile, request.schedule), diags);
      }
    return diags.hadError() ? Outcome::InputErrors : Outcome::Success;
  }

  std::vector<size_t> chosen;
  for (size_t i = 0; i < out.program.pipelines.size(); ++i)
    if (request.pipeline.empty() || out.program.pipelines[i].name == request.pipeline)
      chosen.push_back(i);
  if (chosen.empty()) {
    std::string names;
    for (const program::Pipeline &p : out.program.pipelines)
      names += (names.empty() ? "'" : ", '") + p.name + "'";
    usage = "no pipeline named '" + printable(request.pipeline) + "' in '" + src.name +
            "'; it has " + names;
    return Outcome::UsageError;
  }
  for (size_t i : chosen) {
    out.schedules.push_back(std::make_unique<Schedule>(
        out.program.pipelines[i], profile, request.schedule, std::move(graphs[i])));
    const Schedule &s = *out.schedules.back();
    out.views.push_back(&s);
    if (printing(Phase::Schedule))
      emitText(s, *request.printTo);
    if (out.program.pipelines[i].syncDeclared)
      reportRaces(s, diags);
    // A graph cannot hold a host synchronisation: say how many graphs the
    // lowering became, at the first cpu stage that splits it.
    if (s.lowering == Lowering::Graph && s.segments > 1)
      for (size_t i = 0; i < s.graphOps.size(); ++i) {
        const Op &op = s.graphOps[i];
        if (op.kind == Op::Sync || (op.kind == Op::GraphLaunch && op.event > 0)) {
          // The cpu stage that splits: the one a sync is for (the first cpu
          // op after it), or the one issued before the next segment.
          uint32_t at = op.instance;
          if (op.kind == Op::Sync) {
            size_t k = i;
            while (k < s.graphOps.size() && s.graphOps[k].kind != Op::Cpu)
              ++k;
            at = s.graphOps[k].instance;
          } else {
            while (at > 0 && !s.onHost(at))
              --at;
          }
          diags.note(s.instances.stage(at).range,
                     llvm::formatv("the graph lowering of pipeline '{0}' is {1} graph "
                                   "segments, launched in order: a graph cannot hold a "
                                   "host synchronisation, and cpu stage '{2}' (and any "
                                   "like it) needs one",
                                   s.pipeline.name, s.segments, s.instances.stage(at).name));
          break;
        }
      }
  }
  if (diags.hadError())
    return Outcome::InputErrors;
  return Outcome::Success;
}
