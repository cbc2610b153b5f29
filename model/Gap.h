//===- Gap.h - Why a run takes longer than its lower bound ----------------===//
#ifndef PIPEC_MODEL_GAP_H
#define PIPEC_MODEL_GAP_H

#include "compiler/program/DeviceProfile.h"
#include "compiler/schedule/Schedule.h"
#include "runtime/Backend.h"

#include <vector>

namespace pipec::runtime {

/// The most instances whose gap run explains (each cause is a run of the
/// model; above this, run leaves it to advise).
constexpr size_t kMaxGapInstances = 100'000;

/// The gap between a run of `schedule` on the device model and its lower
/// bound, cause by cause: each part what taking that cost away alone saves
/// on the model (they need not add up), and its fair share (the Shapley
/// value over the causes: the shares add up to kAllAtOnce); then
/// kAllAtOnce, what taking every one away saves, and kWhatRemains, the rest
/// of the gap (these two add up to it).
/// The most instance-runs of the model the shares take: the exact Shapley
/// value runs every coalition of the causes (2^n runs); past this budget
/// the shares are averaged over orders of the causes instead (k, k+1, ...
/// round them, and the reverses; as many as the budget pays for, at least
/// two), which add up to all at once as exactly, and say so.
constexpr double kShareInstanceRuns = double(1 << 22);

std::vector<GapPart> explainGap(const Schedule &schedule, const DeviceProfile &profile,
                                double shareBudget = kShareInstanceRuns);

/// What a part's line says after its cause: the cause it saves its share
/// with, and the default it rests on (" (saves it with launches)",
/// " [host_func_latency_us = 100.0 us: a default, not measured]").
std::string gapPartNotes(const GapPart &part);

constexpr const char *kAllAtOnce = "all of them at once";
constexpr const char *kWhatRemains =
    "what remains: orderings and overlap the bound does not count";

} // namespace pipec::runtime

#endif // PIPEC_MODEL_GAP_H
