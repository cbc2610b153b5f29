//===- Contention.cpp -----------------------------------------------------===//

#include "runtime/import/Contention.h"

#include "compiler/schedule/Schedule.h"
#include "model/Model.h"
#include "runtime/import/PipeFile.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace pipec;
using namespace pipec::importer;

namespace {

/// Rounds of model runs at most; each brings the kernels it slowed closer.
/// A long step gets fewer: kInstanceRounds instances simulated in all, and
/// never fewer than kLeastRounds rounds (a million-op step gets four).
constexpr unsigned kRounds = 30, kLeastRounds = 4;
constexpr double kInstanceRounds = 4e6;
/// How close to its recorded time a kernel's run must come.
constexpr double kTolerance = 0.005;
/// A time alone is at least this share of the recorded one: the model
/// never makes a kernel four times slower than it was beside the same
/// work, and a shorter time would be a guess, not a measurement.
constexpr double kLeastShare = 0.25;

bool isKernel(const ImportedStep &step, const ImportedStage &st) {
  return !st.onHost() && !st.idle && step.opOf(st).kind == OpKind::Kernel;
}

/// Whether the kernels running at once ever asked for more of the SMs than
/// the device holds: only then can the model slow one of them. Each asks
/// for its blocks over as many as fit on the device at once (a grid of
/// several waves, all of it).
bool smsOversubscribed(const ImportedStep &step, const DeviceProfile &profile) {
  return SmDemand(step.stages, step.ops, profile).most() > 1 + 1e-9;
}

} // namespace

Uncontended importer::uncontend(ImportedStep &step, const DeviceProfile &profile) {
  Uncontended out;
  if (!smsOversubscribed(step, profile))
    return out;
  const size_t n = step.stages.size();
  const model::Model model(profile);
  std::vector<double> recorded(n), gain(n, 1.0), lastMiss(n, 0.0), best(n);
  for (size_t i = 0; i < n; ++i)
    recorded[i] = best[i] = step.stages[i].durUs;
  // The kernels' times are coupled (one's time alone moves the overlap of
  // others): a kernel whose miss changed sign since the last round takes
  // half the step it took, and the round that came closest is kept.
  double bestMiss = INFINITY;
  const unsigned rounds = unsigned(std::clamp(kInstanceRounds / double(std::max<size_t>(n, 1)),
                                              double(kLeastRounds), double(kRounds)));
  for (unsigned round = 0; round < rounds; ++round) {
    llvm::Expected<program::Program> program = programOf(step, profile);
    if (!program) {
      llvm::consumeError(program.takeError());
      break;
    }
    Schedule schedule(program->pipelines.front(), profile, ScheduleOptions());
    const model::Model::Times run = model.times(schedule);
    ++out.runs;
    if (run.start.empty() || run.unfinished)
      break;
    double miss = 0; // the sum of the kernels' relative misses
    std::vector<double> modelled(n, -1);
    for (uint32_t v = 0; v < schedule.instances.size(); ++v) {
      const uint32_t i = schedule.instances.stageOf(v);
      if (isKernel(step, step.stages[i]) && recorded[i] > 0) {
        modelled[i] = run.end[v] - run.start[v];
        miss += std::fabs(modelled[i] / recorded[i] - 1);
      }
    }
    if (miss < bestMiss) {
      bestMiss = miss;
      for (size_t i = 0; i < n; ++i)
        best[i] = step.stages[i].durUs;
    }
    bool changed = false;
    for (size_t i = 0; i < n; ++i) {
      ImportedStage &st = step.stages[i];
      if (modelled[i] <= 0)
        continue;
      const double off = modelled[i] - recorded[i];
      if (std::fabs(off) <= kTolerance * recorded[i]) {
        lastMiss[i] = 0;
        continue;
      }
      if (off * lastMiss[i] < 0)
        gain[i] *= 0.5;
      lastMiss[i] = off;
      // Slowed by the model beside others: shorter alone, by what the
      // model added (it adds time: blocks wait for room on the SMs). Run
      // faster than recorded after an earlier round: back towards it.
      const double alone =
          std::clamp(st.durUs - gain[i] * off, recorded[i] * kLeastShare, recorded[i]);
      if (std::fabs(alone - st.durUs) > 1e-3) {
        st.durUs = alone;
        changed = true;
      }
    }
    if (!changed)
      break;
  }
  for (size_t i = 0; i < n; ++i)
    step.stages[i].durUs = best[i];
  for (size_t i = 0; i < step.stages.size(); ++i) {
    ImportedStage &st = step.stages[i];
    // Written to the nanosecond: a time alone that rounds to the recorded
    // one is the recorded one.
    if (isKernel(step, st) && recorded[i] - st.durUs >= 5e-4) {
      st.recordedUs = recorded[i];
      ++out.kernels;
      out.recordedUs += recorded[i];
      out.aloneUs += st.durUs;
    } else {
      st.durUs = recorded[i];
    }
  }
  step.contendedKernels = out.kernels;
  step.contentionUs = out.recordedUs - out.aloneUs;
  if (out.kernels)
    step.notes.push_back(llvm::formatv(
        "{0} kernel(s) ran beside others and took {1} ms longer than alone by the model's "
        "sharing rules: each is written as its time alone, its recorded time in its comment",
        out.kernels, llvm::formatv("{0:f2}", step.contentionUs / 1000)));
  return out;
}
