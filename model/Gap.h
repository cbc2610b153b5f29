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
/// on the model (they need not add up); then kAllAtOnce, what taking every
/// one away saves, and kWhatRemains, the rest of the gap (these two add up
/// to it).
std::vector<GapPart> explainGap(const Schedule &schedule, const DeviceProfile &profile);

constexpr const char *kAllAtOnce = "all of them at once";
constexpr const char *kWhatRemains =
    "what remains: orderings and overlap the bound does not count";

} // namespace pipec::runtime

#endif // PIPEC_MODEL_GAP_H
