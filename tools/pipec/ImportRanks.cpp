//===- ImportRanks.cpp - pipec import of several ranks' traces ------------===//
//
// One trace per rank (as a distributed job's profiler writes them), one
// program of several devices (runtime/import/Ranks.h). The file is made as
// text already laid out as fmt lays it out, checked by the front end like
// any file (an error is pipec's, said as such), and with --report run on
// the device model beside what each rank recorded.
//
//===----------------------------------------------------------------------===//

#include "Tool.h"

#include "compiler/emit/Emitters.h"
#include "compiler/program/TimeFormat.h"
#include "compiler/schedule/Analysis.h"
#include "compiler/schedule/Lints.h"
#include "compiler/sema/Sema.h"
#include "compiler/support/Printable.h"
#include "runtime/Backend.h"
#include "runtime/import/Ranks.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace pipec;
using namespace pipec::tool;

namespace {

/// What a rank recorded: first GPU op start to last end, on its own clock
/// (the ranks' clocks are not aligned).
double recordedSpanUs(const importer::ImportedStep &s) {
  double end = 0;
  for (const importer::ImportedStage &st : s.stages)
    if (!st.onHost())
      end = std::max(end, st.endUs);
  return end;
}

/// Each rank's span on the model, as the recording's is measured: its
/// device's first op start to last op end (its cpu stages left out); and,
/// last, the same over every rank.
std::vector<double> modelSpansUs(const runtime::LoweringRun &r, size_t ranks) {
  std::vector<double> first(ranks + 1, -1), last(ranks + 1, 0);
  const Schedule &s = *r.schedule;
  for (uint32_t v = 0; v < r.start.size(); ++v) {
    if (s.onHost(v))
      continue;
    for (size_t d : {size_t(s.threadOf(v)), ranks}) {
      first[d] = first[d] < 0 ? r.start[v] : std::min(first[d], r.start[v]);
      last[d] = std::max(last[d], r.end[v]);
    }
  }
  std::vector<double> span(ranks + 1, 0);
  for (size_t d = 0; d <= ranks; ++d)
    span[d] = first[d] < 0 ? 0 : last[d] - first[d];
  return span;
}

} // namespace

int tool::runImportRanks(const std::vector<std::string> &sources,
                         const std::function<llvm::Expected<importer::Trace>(size_t)> &read,
                         const importer::StepChoice &step, bool report,
                         const std::string &profileOut) {
  // Each rank is a device of one program: more than a program may declare
  // is said before any trace is read.
  if (sources.size() > kMaxDevices) {
    toolError(formatv("{0} ranks given: a program of several ranks holds at most {1} "
                      "(one device each); import fewer ranks",
                      sources.size(), kMaxDevices));
    return UsageError;
  }
  std::vector<importer::Rank> ranks;
  ranks.reserve(sources.size());
  for (size_t r = 0; r < sources.size(); ++r) {
    // Every rank's step is the one asked for, or the one rank 0's default
    // picks: the ranks run the same steps.
    importer::StepChoice choice = step;
    const bool defaulted = !choice.number && choice.range.empty() && r > 0;
    if (defaulted)
      choice.number = ranks[0].step.step;
    Expected<importer::Trace> trace = read(r);
    if (!trace) {
      toolError(formatv("rank {0} ({1}): {2}", r, printable(sources[r]),
                        toString(trace.takeError())));
      return InputErrors;
    }
    Expected<importer::ImportedStep> imported =
        importer::selectStep(std::move(*trace), choice);
    if (!imported) {
      std::string why = toString(imported.takeError());
      if (defaulted && choice.number) // the step was rank 0's, not the user's
        why = formatv("rank 0's default step is ProfilerStep#{0}, and {1} (--step=N picks "
                      "the step of every rank)",
                      *choice.number, why);
      toolError(formatv("rank {0} ({1}): {2}", r, printable(sources[r]), why));
      return InputErrors;
    }
    if (!imported->foreignPlatform.empty()) {
      toolError(formatv("rank {0} ({1}) is a {2} trace: pipec models CUDA devices only "
                        "('pipec import --report' of one trace gives what it recorded)",
                        r, printable(sources[r]), imported->foreignPlatform));
      return InputErrors;
    }
    ranks.push_back({sources[r], std::move(*imported)});
  }
  DeviceProfile profile = importer::profileFor(ranks[0].step.device);
  // The SMs each collective holds, as the recorded kernels' grids say.
  if (unsigned channels = importer::ncclChannelsOf(ranks)) {
    profile.ncclChannels = channels;
    profile.markMeasured({"nccl_channels"});
  }
  if (!invocation().profilePath.empty() && !loadProfile(profile))
    return UsageError;
  // The report schedules the program the file checks to: built beside it,
  // only then.
  const bool reporting = report || invocation().jsonOutput;
  importer::RanksSummary summary;
  Expected<importer::RanksFile> file =
      importer::writeRanks(ranks, profile, summary, /*withProgram=*/reporting);
  if (!file) {
    toolError(toString(file.takeError()));
    return InputErrors;
  }
  for (const std::string &note : summary.notes)
    WithColor::note(errs(), "pipec", !useColor()) << note << '\n';
  // What the report needs of the steps; the steps themselves are let go.
  std::vector<double> recorded;
  for (const importer::Rank &rank : ranks)
    recorded.push_back(recordedSpanUs(rank.step));
  const size_t rankCount = ranks.size();
  std::vector<importer::Rank>().swap(ranks);

  // What the front end would warn about in the file (a device's streams
  // past its hardware queues), at the line the file has the stream on: the
  // program's streams point into the text, made whole only then. (The
  // file's other warnings, sema's and the redundant-dependency lint's, the
  // import never gives: tests hold its files to checking without one.)
  // The lint says whether it warns (asked once without the text, its
  // diagnostics only counted): the text is made whole only then.
  program::Pipeline &pipeline = file->program.pipelines.front();
  size_t warnings = 0;
  {
    DiagnosticEngine count([&](const Diagnostic &) { ++warnings; }, 0);
    lintHardwareQueues(pipeline, profile.hardwareQueues, count);
  }
  const bool warns = warnings > 0;
  driver::Source src;
  if (warns) {
    driver::loadText(invocation().outputPath != "-"
                         ? invocation().outputPath
                         : "<import of " + std::to_string(rankCount) + " ranks>",
                     file->text(), src);
    const char *text = driver::textOf(src).data();
    for (size_t i = 0; i < pipeline.streams.size(); ++i) {
      const char *name = text + file->streamNameAt[i];
      pipeline.streams[i].range = {
          SMLoc::getFromPointer(name),
          SMLoc::getFromPointer(name + pipeline.streams[i].name.size())};
    }
    const driver::DiagnosticOptions options = diagnosticOptions();
    DiagnosticEngine diags(printingHandler(src.sm, errs(), src.name, options.colors),
                           options.errorLimit);
    lintHardwareQueues(pipeline, profile.hardwareQueues, diags);
    diags.finish();
  }
  if (!profileOut.empty() &&
      !emitTo(profileOut, [&](raw_ostream &os) { writeDeviceProfile(profile, os); }))
    return WriteFailed;
  if ((!reporting || invocation().outputPath != "-") &&
      !emitTo(invocation().outputPath, [&](raw_ostream &os) {
        if (warns)
          os << driver::textOf(src);
        else
          file->write(os);
      }))
    return WriteFailed;
  if (!reporting)
    return Success;

  // The report schedules the program the file checks to, built beside it
  // (tests hold it to the front end's reading of the file), as compile
  // would: the model's answers, the --assign method.
  const model::Model deviceModel(profile);
  ScheduleOptions scheduleOptions;
  deviceModel.answerFor(scheduleOptions);
  scheduleOptions.assign = invocation().assignMethod;
  const Schedule schedule(file->program.pipelines.front(), profile, scheduleOptions);
  runtime::RunOptions options;
  options.replays = invocation().replays;
  Expected<runtime::LoweringRun> run =
      deviceModel.backend()->run(schedule, Lowering::Streams, options);
  if (!run) {
    toolError(toString(run.takeError()));
    return RunFailed;
  }
  const std::vector<double> model = modelSpansUs(*run, rankCount);
  // Each rank's communication as the import of one rank counts it (its
  // kernels by their recorded names), and apart, the collectives matched
  // across the ranks (the parts of one collective stage).
  auto usesBy = [&](llvm::function_ref<bool(uint32_t)> communicates) {
    return deviceUses(
        schedule, [&](uint32_t v) { return std::make_pair(run->start[v], run->end[v]); },
        run->makespanUs, communicates);
  };
  const std::vector<DeviceUse> comm = usesBy([&](uint32_t v) {
    const uint32_t stage = schedule.instances.stageOf(v);
    return stage < file->communicates.size() && file->communicates[stage];
  });
  const std::vector<DeviceUse> collectives =
      usesBy([&](uint32_t v) { return program::isCollective(schedule.instances.stage(v)); });
  const double recordedLongest = summary.recordedSpanUs;
  // The model against the recording, as a signed percentage.
  auto relative = [](double model, double recorded) {
    const double r = recorded > 0 ? 100 * (model - recorded) / recorded : 0.0;
    return formatv("{0}{1:f1}%", r < 0 ? "" : "+", r).str();
  };

  if (invocation().jsonOutput) {
    json::OStream j(outs(), 0);
    j.object([&] {
      j.attribute("format", "pipec-import-ranks-report");
      j.attribute("version", 1);
      j.attribute("collectives", int64_t(summary.collectives));
      j.attribute("unmatched_collective_kernels", int64_t(summary.unmatched));
      j.attribute("one_clock", summary.aligned);
      j.attributeArray("ranks", [&] {
        for (size_t r = 0; r < rankCount; ++r)
          j.object([&] {
            j.attribute("source", sources[r]);
            j.attribute("device", schedule.pipeline.devices[r].name);
            writeNumberAttribute(j, "recorded_span_us", recorded[r]);
            writeNumberAttribute(j, "predicted_span_us", model[r]);
            writeNumberAttribute(j, "busy_us", run->devices[r].busyUs);
            writeNumberAttribute(j, "bubble_fraction", run->devices[r].bubbleFraction);
            writeNumberAttribute(j, "comm_us", comm[r].commUs);
            writeNumberAttribute(j, "comm_hidden_us", comm[r].hiddenCommUs);
            writeNumberAttribute(j, "collective_us", collectives[r].commUs);
          });
      });
      writeNumberAttribute(j, "recorded_span_us", recordedLongest);
      writeNumberAttribute(j, "predicted_span_us", model[rankCount]);
      writeNumberAttribute(j, "predicted_makespan_us", run->makespanUs);
      writeNumberAttribute(j, "lower_bound_us", schedule.analysis.lowerBoundUs);
      j.attribute("dependency_violations", int64_t(run->violations));
      j.attributeArray("notes", [&] {
        for (const std::string &note : summary.notes)
          j.value(note);
      });
    });
    outs() << '\n';
    return Success;
  }
  raw_ostream &os = outs();
  os << formatv("recorded step of {0} ranks: {1} GPU ops, {2} cpu stage(s), {3} collective(s) "
                "matched across the ranks",
                rankCount, summary.gpuOps, summary.cpuStages, summary.collectives);
  if (summary.unmatched)
    os << formatv(", {0} NCCL kernel(s) left unmatched", summary.unmatched);
  os << '\n';
  os << "the imported program on the device model, each rank a device with its own host "
        "thread (first op start to last op end):\n";
  for (size_t r = 0; r < rankCount; ++r) {
    os << formatv("  rank{0,-4} recorded {1,9}  model {2,9} ({3})  busy {4}, bubble {5}", r,
                  formatTime(recorded[r]), formatTime(model[r]),
                  relative(model[r], recorded[r]), formatTime(run->devices[r].busyUs),
                  formatPercent(run->devices[r].bubbleFraction, 1));
    if (comm[r].commUs > 0)
      os << formatv(", communication {0} ({1} hidden)", formatTime(comm[r].commUs),
                    formatPercent(comm[r].hiddenCommUs / comm[r].commUs, 0));
    if (collectives[r].commUs > 0)
      os << formatv(", of it collectives matched across ranks {0}",
                    formatTime(collectives[r].commUs));
    os << '\n';
  }
  os << formatv(summary.aligned ? "  step     recorded {0,9}  model {1,9} ({2})  every rank's "
                                  "ops, on the traces' one clock\n"
                                : "  step     recorded {0,9}  model {1,9} ({2})  the longest "
                                  "rank's span (the traces share no clock)\n",
                formatTime(recordedLongest), formatTime(model[rankCount]),
                relative(model[rankCount], recordedLongest));
  os << formatv(
      "  run      lower bound {0,9}  model {1,9}  first stage start to last end, cpu "
      "stages included: no run finishes sooner than the bound\n",
      formatTime(schedule.analysis.lowerBoundUs), formatTime(run->makespanUs));
  return Success;
}
