//===- FrontendFuzzer.cpp - libFuzzer over the whole compile pipeline -----===//
//
// Parse, check, lint, plan both lowerings, emit every format, and run the
// device model on small schedules, with a profile and options (hardware
// queues, stream cap, assignment method) drawn from the input. Any crash, sanitizer report,
// leak or hang is a finding; diagnostics are the expected answer to bad input. The
// hand-written Scanner is compared with the generated lexer on every input,
// and the parse with the DirectParser with the parse without it: a token, a
// diagnostic or an AST node that differs is a finding too.
//
//===----------------------------------------------------------------------===//

#include "compiler/diag/Diagnostics.h"
#include "compiler/emit/Emitters.h"
#include "compiler/parse/Parser.h"
#include "compiler/parse/Scanner.h"
#include "compiler/parse/SourceText.h"
#include "compiler/schedule/Lints.h"
#include "compiler/schedule/Schedule.h"
#include "compiler/schedule/StreamAssignment.h"
#include "compiler/sema/Sema.h"
#include "model/AssignmentCost.h"
#include "model/Gap.h"
#include "model/GraphCost.h"
#include "model/Model.h"
#include "model/SimBackend.h"
#include "runtime/Backend.h"
#include "runtime/advise/Advisor.h"

#include "PipeLexer.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

using namespace pipec;

namespace {

class Input : public antlr4::ANTLRInputStream {
public:
  explicit Input(llvm::StringRef bytes) : text(bytes, _data) {}
  parse::SourceText text;
};

/// Traps unless the Scanner and the generated lexer give the same tokens
/// (code point indexes mapped to byte offsets).
void compareLexers(llvm::StringRef bytes) {
  Input a(bytes);
  parse::ByteStream b(bytes);
  PipeLexer generated(&a);
  generated.removeErrorListeners();
  parse::Scanner scanner(b);
  for (;;) {
    std::unique_ptr<antlr4::Token> x = generated.nextToken();
    std::unique_ptr<antlr4::Token> y = scanner.nextToken();
    if (x->getType() != y->getType() || x->getChannel() != y->getChannel() ||
        a.text.byteOffset(x->getStartIndex()) != y->getStartIndex() ||
        a.text.byteOffset(x->getStopIndex() + 1) - 1 != y->getStopIndex() ||
        x->getLine() != y->getLine() ||
        x->getCharPositionInLine() != y->getCharPositionInLine())
      __builtin_trap();
    if (x->getType() == antlr4::Token::EOF)
      return;
  }
}

/// The diagnostics and AST dump of a parse of buffer `id`.
std::string parsed(llvm::SourceMgr &sm, unsigned id, bool directItems) {
  std::string printed;
  llvm::raw_string_ostream os(printed);
  DiagnosticEngine diags(printingHandler(sm, os, "fuzz.pipe", false), 20);
  ParseOptions options;
  options.directItems = directItems;
  ast::File file =
      parseFile(sm, id, "fuzz.pipe", diags, sm.getMemoryBuffer(id)->getBuffer(), options);
  ast::dump(file, sm, os);
  return os.str();
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::SourceMgr sm;
  unsigned id = sm.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.pipe"),
      llvm::SMLoc());
  compareLexers(sm.getMemoryBuffer(id)->getBuffer());
  if (parsed(sm, id, true) != parsed(sm, id, false))
    __builtin_trap();
  std::string printed;
  llvm::raw_string_ostream os(printed);
  DiagnosticEngine diags(printingHandler(sm, os, "fuzz.pipe", false), 20);
  ast::File file = parseFile(sm, id, "fuzz.pipe", diags);
  if (diags.hadError())
    return 0;
  ast::dump(file, sm, os);
  // The profile and the options vary with the input, as users' do: one
  // hardware queue (CUDA_DEVICE_MAX_CONNECTIONS=1), stream caps above the
  // queues, several copy engines, every assignment method with the model
  // as the makespan's evaluator.
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i)
    h = (h ^ data[i]) * 16777619u;
  DeviceProfile profile;
  profile.hardwareQueues = 1 + h % 8;
  profile.copyEnginesH2D = 1 + (h >> 3) % 3;
  const unsigned maxStreams = 1 + (h >> 5) % 12;
  const AssignMethod methods[] = {AssignMethod::Makespan, AssignMethod::Matching,
                                  AssignMethod::RoundRobin, AssignMethod::Levels};
  const AssignMethod method = methods[(h >> 9) % 4];
  runtime::SimAssignmentCost assignCost(profile);
  program::Program program = analyze(file, profile, diags);
  for (const program::Pipeline &p : program.pipelines)
    lintRedundantDependencies(p, StageGraph(p, issueOrder(p)), diags);
  if (diags.hadError())
    return 0;
  for (const program::Pipeline &p : program.pipelines) {
    // Keep each input fast: the limits are tested elsewhere.
    if (uint64_t(p.stages.size()) * p.iterations > 20000)
      continue;
    for (LoweringChoice lowering :
         {LoweringChoice::Streams, LoweringChoice::Graph, LoweringChoice::Auto}) {
      ScheduleOptions options;
      options.lowering = lowering;
      options.maxStreams = maxStreams;
      options.assign = method;
      if (uint64_t(p.stages.size()) * p.iterations <= 5000)
        options.assignEvaluator = &assignCost;
      Schedule s(p, profile, options);
      const Schedule *one[] = {&s};
      emitText(s, os);
      emitJSON(one, "fuzz.pipe", os);
      emitDot(one, os);
      // A lowering CUDA cannot be written in is an error, and nothing.
      if (llvm::Error e = emitCuda(one, "fuzz.pipe", profile, os)) {
        llvm::Error why = cudaCannotEmit(one);
        if (!why)
          __builtin_trap();
        llvm::consumeError(std::move(why));
        llvm::consumeError(std::move(e));
      }
      if (s.instances.size() <= 2000) {
        auto backend = runtime::makeSimBackend(profile);
        auto run = backend->run(s, s.lowering, runtime::RunOptions());
        if (!run)
          llvm::consumeError(run.takeError());
        else if (run->violations)
          __builtin_trap(); // the model never breaks a dependency
        // run's gap and advise, on the small ones (each is several runs).
        if (lowering == LoweringChoice::Streams && s.instances.size() <= 300) {
          const model::Model deviceModel(profile);
          std::vector<runtime::GapPart> gap = deviceModel.explainGap(s);
          if (gap.size() >= 2 && gap[gap.size() - 1].us < -1e-6)
            __builtin_trap(); // what remains is never below the bound
          runtime::AdviseOptions adviseOptions;
          adviseOptions.schedule = options;
          adviseOptions.replays = 3;
          runtime::AdviseSource source{&file, sm.getMemoryBuffer(id)->getBuffer()};
          auto advice = runtime::advise(source, s, deviceModel, *backend, adviseOptions);
          if (!advice) {
            llvm::consumeError(advice.takeError());
          } else {
            // Every suggestion gains what it announces.
            for (const runtime::Suggestion &sg : advice->suggestions)
              if (!(sg.afterUs < sg.beforeUs))
                __builtin_trap();
          }
        }
      }
    }
  }
  return 0;
}
