//===- SMs.cpp - Resident kernels and their blocks on the SMs ---------------===//

#include "model/sim/Simulator.h"

using namespace pipec;

namespace pipec::sim {
namespace {

bool Simulator::pumpBlocks(double now) {
  bool progress = false;
  for (Gpu &gpu : gpus)
    progress |= pumpBlocks(gpu, now);
  return progress;
}

bool Simulator::pumpBlocks(Gpu &gpu, double now) {
  // Placed all it could last time, and neither a kernel nor a free SM came
  // since: nothing to do.
  if (!gpu.blocksChanged || gpu.waiting.empty())
    return false;
  gpu.blocksChanged = false;
  bool progress = false;
  bool drained = false;
  // Block shapes that found no SM in this pump: SMs only fill up during
  // it, so a shape that needs at least as much of everything finds none
  // either (kernels of one shape, the common case, stop scanning at once).
  llvm::SmallVector<DeviceProfile::BlockUse, 4> full;
  auto hopeless = [&](const DeviceProfile::BlockUse &use) {
    for (const DeviceProfile::BlockUse &f : full)
      if (use.slots >= f.slots && use.threads >= f.threads && use.smem >= f.smem &&
          use.regs >= f.regs)
        return true;
    return false;
  };
  // Only the kernels with blocks to place, most urgent first: the running
  // ones may be many (up to max_resident_kernels) and cost nothing here.
  for (const Urgency &u : gpu.waiting) {
    Resident *r = &gpu.resident[residentSlot[u.instance]];
    // A kernel with SMs of its own (smsPerKernel) fills only those: what
    // another found full says nothing of them.
    const bool own = !r->ownSM.empty();
    std::vector<DeviceProfile::BlockUse> &freeSM = own ? r->ownSM : gpu.freeSM;
    if (!own && hopeless(r->use))
      continue;
    // SMs only fill up during one pump: the search for this kernel's next
    // block starts where the last one fitted.
    uint32_t cursor = 0;
    uint32_t batch = kNone;
    while (r->pending) {
      uint32_t sm = findSM(freeSM, r->use, cursor);
      if (sm == kNone) {
        if (!own && full.size() < 4)
          full.push_back(r->use);
        break; // try smaller blocks of other kernels (backfill)
      }
      // As many of its blocks as fit there, placed and finishing together;
      // and every SM this kernel fills now, in one event: they all finish
      // at one time, handled before the next pump as separate events
      // would be (a GPU-wide grid is an event, not one per SM or block).
      // (An idle SM, the common case, holds what the shape said: no
      // division.)
      const DeviceProfile::BlockUse &f = freeSM[sm];
      const bool idle = f.threads == capacity.threads && f.slots == capacity.slots &&
                        f.smem == capacity.smem && f.regs == capacity.regs;
      const uint32_t k = std::min(r->pending, idle ? r->perEmptySM : fitting(f, r->use));
      take(freeSM[sm], r->use, k);
      r->pending -= k;
      drained |= r->pending == 0;
      r->running += k;
      if (!r->started) {
        r->started = true;
        setStart(r->instance, now);
      }
      if (batch == kNone)
        batch = newBatch();
      // Consecutive SMs that took as many blocks are one run.
      std::vector<SMRun> &runs = batches[batch];
      if (!runs.empty() && runs.back().first + runs.back().count == sm &&
          runs.back().blocks == k)
        ++runs.back().count;
      else
        runs.push_back({sm, 1, k});
      progress = true;
    }
    if (batch != kNone) {
      if (rendezvous && program::collectiveParts(s.instances.stage(r->instance)) > 1)
        arrive(r->instance, batch, now);
      else
        post(now + r->blockUs, Event::BlockDone, r->instance, batch);
    }
  }
  if (drained)
    gpu.waiting.erase(std::remove_if(gpu.waiting.begin(), gpu.waiting.end(),
                                     [&](const Urgency &u) {
                                       return gpu.resident[residentSlot[u.instance]].pending ==
                                              0;
                                     }),
                      gpu.waiting.end());
  return progress;
}

uint32_t Simulator::findSM(const std::vector<DeviceProfile::BlockUse> &freeSM,
                           const DeviceProfile::BlockUse &use, uint32_t &cursor) {
  for (uint32_t sm = cursor; sm < freeSM.size(); ++sm) {
    const DeviceProfile::BlockUse &f = freeSM[sm];
    if (f.slots >= use.slots && f.threads >= use.threads && f.smem >= use.smem &&
        f.regs >= use.regs) {
      cursor = sm;
      return sm;
    }
  }
  return kNone;
}

void Simulator::arrive(uint32_t v, uint32_t batch, double now) {
  const program::Stage &stage = s.instances.stage(v);
  const uint32_t iteration = s.instances.iterationOf(v);
  const uint32_t first = s.instances.idOf(stage.collective().group, iteration);
  Meeting &m = meetings[first];
  m.arrived.push_back({v, batch});
  if (m.arrived.size() < stage.collective().parts)
    return;
  const double end = now + shapes[s.instances.stageOf(v)].blockUs;
  for (auto [part, b] : m.arrived)
    post(end, Event::BlockDone, part, b);
  meetings.erase(first);
}

uint32_t Simulator::newBatch() {
  if (freeBatches.empty()) {
    batches.emplace_back();
    return static_cast<uint32_t>(batches.size() - 1);
  }
  uint32_t b = freeBatches.back();
  freeBatches.pop_back();
  return b;
}

void Simulator::blockDone(uint32_t v, uint32_t batch, double now) {
  Gpu &gpu = gpuOf(v);
  std::vector<Resident> &resident = gpu.resident;
  const uint32_t slot = residentSlot[v];
  Resident &r = resident[slot];
  for (const SMRun &run : batches[batch]) {
    for (uint32_t sm = run.first; sm < run.first + run.count; ++sm)
      give(r.ownSM.empty() ? gpu.freeSM[sm] : r.ownSM[sm], r.use, run.blocks);
    r.running -= run.count * run.blocks;
  }
  batches[batch].clear();
  freeBatches.push_back(batch);
  gpu.blocksChanged = true;
  if (r.running == 0 && r.pending == 0) {
    // Its slot goes to the last resident kernel (their order in the list
    // matters nowhere: `waiting` keeps the urgency order).
    if (slot + 1 != resident.size()) {
      r = resident.back();
      residentSlot[r.instance] = slot;
    }
    resident.pop_back();
    if (blockedOnResidency) {
      // A queue that could not launch for want of a resident slot may now.
      blockedOnResidency = false;
      markAllQueues();
    }
    finish(v, now);
  }
}

// --- Snapshot and shift ----------------------------------------------------
// (One device: extrapolation runs on one.)

void Simulator::snapshotSMs(Snapshot &g) const {
  const Gpu &gpu = gpus[0];
  for (const DeviceProfile::BlockUse &f : gpu.freeSM) {
    g.put(double(f.threads));
    g.put(double(f.slots));
    g.put(double(f.smem));
    g.put(double(f.regs));
  }
  std::vector<const Resident *> held;
  for (const Resident &r : gpu.resident)
    held.push_back(&r);
  std::sort(held.begin(), held.end(),
            [](const Resident *a, const Resident *b) { return a->instance < b->instance; });
  g.put(double(held.size()));
  for (const Resident *r : held) {
    g.put(g.inst(r->instance));
    g.put(r->priority);
    g.put(r->pending);
    g.put(r->running);
    g.put(r->started);
  }
  g.put(double(gpu.waiting.size()));
  for (const Urgency &u : gpu.waiting) {
    g.put(u.priority);
    g.put(g.inst(u.instance));
  }
  g.put(gpu.blocksChanged);
  g.put(blockedOnResidency);
}

void Simulator::shiftSMs(const Shift &d) {
  Gpu &gpu = gpus[0];
  for (uint32_t slot = 0; slot < gpu.resident.size(); ++slot) {
    d.instance(gpu.resident[slot].instance);
    residentSlot[gpu.resident[slot].instance] = slot;
  }
  for (Urgency &u : gpu.waiting)
    d.instance(u.instance);
}

} // namespace
} // namespace pipec::sim
