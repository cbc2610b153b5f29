//===- Extrapolation.cpp - Checkpoints, the comparison, the jump ahead ------===//

#include "model/sim/Simulator.h"

using namespace pipec;

namespace pipec::sim {
namespace {

void Simulator::findPeriod() {
  // (One device: the state written down is that device's.)
  if (options.issueAt || options.recordHost || options.lookEverywhere || gpus.size() > 1)
    return;
  if (lowering == Lowering::Streams) {
    period = findPeriodicity(s, hostOps(), boundRecord);
  } else {
    if (s.graphOps.size() != 1 || s.segments > 1)
      return;
    for (uint32_t v = 0; v < n; ++v)
      if (s.onHost(v))
        return;
    period = findGraphPeriodicity(s, successors, remaining);
  }
  if (period)
    nextCheck = period.first - 1;
}

void Simulator::maybeCheckpoint() {
  if (lowering == Lowering::Streams) {
    if (threads[0].next < period.opOfBlock(nextCheck))
      return;
  } else {
    while (lowest < n && out.end[lowest] >= 0)
      ++lowest;
    if (lowest < blockStart(nextCheck))
      return;
  }
  checkpoint(nextCheck++);
  if (nextCheck >= period.end || compared > kCompareBudget)
    stopExtrapolating();
}

void Simulator::stopExtrapolating() {
  period = Periodicity();
  logging = false;
  assigned.clear();
  assigned.shrink_to_fit();
  lastAssigned.clear();
  lastAssigned.shrink_to_fit();
}

void Simulator::checkpoint(uint32_t b) {
  const bool behind = lowering == Lowering::Streams
                          ? threads[0].next - period.opOfBlock(b) >= period.ops
                          : lowest - blockStart(b) >= period.instances;
  if (behind || !signature(sig, b)) {
    // Not at this block's start (several passed at once), or too much
    // to write down: no comparison across it, and nothing logged until
    // the next block that starts here.
    lastBlock = kNone;
    settled = 0;
    logging = false;
    assigned.clear();
    if (!behind)
      stopExtrapolating();
    return;
  }
  if (options.checkpoints) {
    options.checkpoints->push_back(
        {b, clock, blockStart(b), sig, out.hostTime, out.simulatedEvents});
    return;
  }
  compared += sig.size();
  // Settled: the same state as a block ago, twice running, and the last
  // block set the starts and ends of the one before, shifted.
  const bool same =
      lastBlock + 1 == b && sameState(sig, lastSig, clock) && repeatsLastBlock(clock - lastT);
  settled = same ? settled + 1 : 0;
  if (settled >= 2) {
    const uint32_t jump = period.end - 2 > b ? period.end - 2 - b : 0;
    if (jump > 0 && shiftAhead(jump, clock - lastT)) {
      out.extrapolatedIterations = uint64_t(jump) * period.iterations;
      stopExtrapolating();
      return;
    }
  }
  std::swap(sig, lastSig);
  lastT = clock;
  lastBlock = b;
  std::swap(assigned, lastAssigned);
  assigned.clear();
  logging = true;
  hostTimeThen = out.hostTime;
  eventsThen = out.simulatedEvents;
}

bool Simulator::repeatsLastBlock(double every) const {
  if (assigned.size() != lastAssigned.size())
    return false;
  const double tolerance = (std::abs(clock) + 1) * 0x1p-42;
  for (size_t i = 0; i < assigned.size(); ++i) {
    const Assigned &a = assigned[i], &b = lastAssigned[i];
    if (a.instance != uint64_t(b.instance) + period.instances || a.end != b.end ||
        !(std::abs(a.t - (b.t + every)) <= tolerance))
      return false;
  }
  return true;
}

bool Simulator::sameState(const std::vector<double> &a, const std::vector<double> &b,
                          double at) {
  if (a.size() != b.size())
    return false;
  // Times repeat up to rounding: each is a sum of the same durations at
  // another magnitude.
  const double tolerance = (std::abs(at) + 1) * 0x1p-42;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i] && !(std::abs(a[i] - b[i]) <= tolerance))
      return false;
  return true;
}

bool Simulator::signature(std::vector<double> &g, uint32_t b) {
  g.clear();
  Snapshot snapshot{g, clock, double(blockStart(b)),
                    lowering == Lowering::Streams ? double(period.opOfBlock(b)) : 0};
  snapshotHost(snapshot);
  if (!(lowering == Lowering::Streams ? snapshotStreams(snapshot) : snapshotGraph(snapshot)))
    return false;
  if (!snapshotEvents(snapshot))
    return false;
  // The device (extrapolation runs on one: findPeriod).
  snapshotSMs(snapshot);
  snapshotEngines(snapshot);
  return g.size() <= Snapshot::kMax;
}

bool Simulator::shiftAhead(uint32_t blocks, double every) {
  const uint64_t dI = uint64_t(blocks) * period.instances;
  uint64_t highest = 0;
  for (const Assigned &a : assigned)
    highest = std::max<uint64_t>(highest, a.instance);
  for (const Resident &r : gpus[0].resident)
    highest = std::max<uint64_t>(highest, r.instance);
  if (highest + dI >= n || (touched != kNone && touched + dI >= n))
    return false;
  const double dT = double(blocks) * every;

  // The skipped blocks' starts and ends.
  for (uint32_t j = 1; j <= blocks; ++j) {
    const uint64_t di = uint64_t(j) * period.instances;
    const double dt = double(j) * every;
    for (const Assigned &a : assigned)
      (a.end ? out.end : out.start)[a.instance + di] = onGrid(a.t + dt);
  }
  // What the host and the model spent on them.
  out.hostTime.cpu += blocks * (out.hostTime.cpu - hostTimeThen.cpu);
  out.hostTime.issue += blocks * (out.hostTime.issue - hostTimeThen.issue);
  out.hostTime.api += blocks * (out.hostTime.api - hostTimeThen.api);
  out.hostTime.blocked += blocks * (out.hostTime.blocked - hostTimeThen.blocked);
  out.simulatedEvents += blocks * (out.simulatedEvents - eventsThen);

  const Shift shift{dI, uint64_t(blocks) * period.ops, dT};
  shiftHost(shift);
  if (lowering == Lowering::Streams)
    shiftStreams(shift);
  else
    shiftGraph(shift);
  shiftEvents(shift);
  shiftSMs(shift);
  shiftEngines(shift);
  clock = onGrid(clock + dT);
  return true;
}

} // namespace
} // namespace pipec::sim
