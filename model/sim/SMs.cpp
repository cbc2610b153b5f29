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
  bool urgentWaiting = false; ///< a kernel before this one still has blocks to place
  for (const Urgency &u : gpu.waiting) {
    Resident *r = &gpu.resident[residentSlot[u.instance]];
    // A kernel with SMs of its own (smsPerKernel) fills only those: what
    // another found full says nothing of them.
    const bool own = !r->ownSM.empty();
    std::vector<DeviceProfile::BlockUse> &freeSM = own ? r->ownSM : gpu.freeSM;
    if (!own && hopeless(r->use))
      continue;
    // A collective's part takes its channels' SMs all at once or waits
    // (NCCL's blocks are launched together; a part holding some of them
    // would keep them from another collective that could start).
    if (rendezvous && r->pending == r->blocks() &&
        program::collectiveParts(s.instances.stage(r->instance)) > 1 &&
        idleSMs(freeSM) < r->pending) {
      urgentWaiting = true;
      continue;
    }
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
      const uint32_t k = std::min(r->pending, idle(f) ? r->perEmptySM : fitting(f, r->use));
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
      std::vector<SMRun> &runs = batches[batch].runs;
      if (!runs.empty() && runs.back().first + runs.back().count == sm &&
          runs.back().blocks == k)
        ++runs.back().count;
      else
        runs.push_back({sm, 1, k});
      progress = true;
    }
    if (batch != kNone) {
      // A kernel that took a full wave on every SM, with nothing more
      // urgent waiting, would take each SM again at each wave's end, as
      // long as it has a full wave left: those waves are one batch
      // (closed form), cut short if a more urgent kernel comes.
      uint32_t waves = 1;
      const Batch &b = batches[batch];
      const uint64_t wave = uint64_t(r->perEmptySM) * freeSM.size();
      if (!options.wavesOneByOne && r->pending >= wave && !urgentWaiting &&
          b.runs.size() == 1 && b.runs[0].count == freeSM.size() &&
          b.runs[0].blocks == r->perEmptySM) {
        const uint64_t more = std::min<uint64_t>(r->pending / wave, UINT32_MAX - 1);
        waves += static_cast<uint32_t>(more);
        r->pending -= static_cast<uint32_t>(more * wave);
        r->running += static_cast<uint32_t>(more * wave);
        drained |= r->pending == 0;
        ++gpu.multiWave;
      }
      r->inFlight.push_back(batch);
      r->onSMs += b.perWave();
      if (rendezvous && program::collectiveParts(s.instances.stage(r->instance)) > 1) {
        // A part arrives once all its channels' blocks hold their SMs.
        if (r->pending == 0)
          arrive(r->instance, now);
      } else
        startBatch(*r, batch, waves, now);
    }
    urgentWaiting |= r->pending > 0;
  }
  if (drained)
    gpu.waiting.erase(std::remove_if(gpu.waiting.begin(), gpu.waiting.end(),
                                     [&](const Urgency &u) {
                                       return gpu.resident[residentSlot[u.instance]].pending ==
                                              0;
                                     }),
                      gpu.waiting.end());
  if (progress && contends)
    shareResources(gpu, now);
  return progress;
}

void Simulator::startBatch(Resident &r, uint32_t b, uint32_t waves, double now) {
  Batch &batch = batches[b];
  batch.waves = waves;
  batch.work = double(waves) * r.blockUs;
  batch.progress = 0;
  batch.at = now;
  postBatchEnd(r, b);
}

void Simulator::postBatchEnd(const Resident &r, uint32_t b) {
  Batch &batch = batches[b];
  post(batch.at + (batch.work - batch.progress) / r.speed, Event::BlockDone, r.instance, b,
       ++batch.generation);
}

void Simulator::truncateFor(Gpu &gpu, int priority, uint64_t arrival, double now) {
  const Urgency arrived{priority, arrival, kNone};
  for (Resident &r : gpu.resident) {
    if (!(arrived < Urgency{r.priority, r.arrival, r.instance}))
      continue;
    for (uint32_t b : r.inFlight) {
      Batch &batch = batches[b];
      if (batch.waves <= 1)
        continue;
      // The waves begun by now (one that ends now has ended: the SM is
      // handed out again at this very time).
      const double done = batch.progress + (now - batch.at) * r.speed;
      const uint32_t begun = static_cast<uint32_t>(
          std::clamp(std::ceil(done / r.blockUs - 1e-9), 1.0, double(batch.waves)));
      if (begun >= batch.waves)
        continue;
      const uint32_t back = (batch.waves - begun) * batch.perWave();
      if (r.pending == 0) {
        const Urgency key{r.priority, r.arrival, r.instance};
        gpu.waiting.insert(std::upper_bound(gpu.waiting.begin(), gpu.waiting.end(), key), key);
      }
      r.pending += back;
      r.running -= back;
      batch.progress = done;
      batch.at = now;
      batch.waves = begun;
      batch.work = double(begun) * r.blockUs;
      gpu.multiWave -= begun == 1;
      postBatchEnd(r, b);
      gpu.blocksChanged = true;
    }
  }
}

void Simulator::shareResources(Gpu &gpu, double now) {
  // Each kernel asks its share at full occupancy, scaled by how much of
  // that it holds now (a tail wave asks less); where the asks add up to
  // more than the device has, each kernel that asks gets its ask scaled
  // down by the total: all run at 1 / total.
  double memory = 0, compute = 0;
  for (const Resident &r : gpu.resident) {
    if (!r.onSMs)
      continue;
    const Shape &shape = shapes[s.instances.stageOf(r.instance)];
    const double held = std::min(1.0, double(r.onSMs) / double(shape.fullBlocks));
    memory += shape.memory * held;
    compute += shape.compute * held;
  }
  for (Resident &r : gpu.resident) {
    const Shape &shape = shapes[s.instances.stageOf(r.instance)];
    double speed = 1;
    if (shape.memory > 0 && memory > 1)
      speed = std::min(speed, 1 / memory);
    if (shape.compute > 0 && compute > 1)
      speed = std::min(speed, 1 / compute);
    if (speed == r.speed)
      continue;
    for (uint32_t b : r.inFlight) {
      Batch &batch = batches[b];
      batch.progress = std::min(batch.work, batch.progress + (now - batch.at) * r.speed);
      batch.at = now;
    }
    r.speed = speed;
    for (uint32_t b : r.inFlight)
      postBatchEnd(r, b);
  }
}

uint32_t Simulator::idleSMs(const std::vector<DeviceProfile::BlockUse> &freeSM) const {
  return static_cast<uint32_t>(
      std::count_if(freeSM.begin(), freeSM.end(),
                    [&](const DeviceProfile::BlockUse &f) { return idle(f); }));
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

void Simulator::arrive(uint32_t v, double now) {
  const program::Stage &stage = s.instances.stage(v);
  const uint32_t iteration = s.instances.iterationOf(v);
  const uint32_t first = s.instances.idOf(stage.collective().group, iteration);
  Meeting &m = meetings[first];
  m.arrived.push_back(v);
  if (m.arrived.size() < stage.collective().parts)
    return;
  for (uint32_t part : m.arrived) {
    Resident &r = gpuOf(part).resident[residentSlot[part]];
    for (uint32_t b : r.inFlight)
      startBatch(r, b, 1, now);
  }
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

void Simulator::blockDone(uint32_t v, uint32_t b, double now) {
  Gpu &gpu = gpuOf(v);
  std::vector<Resident> &resident = gpu.resident;
  const uint32_t slot = residentSlot[v];
  Resident &r = resident[slot];
  Batch &batch = batches[b];
  for (const SMRun &run : batch.runs)
    for (uint32_t sm = run.first; sm < run.first + run.count; ++sm)
      give(r.ownSM.empty() ? gpu.freeSM[sm] : r.ownSM[sm], r.use, run.blocks);
  const uint32_t perWave = batch.perWave();
  r.running -= perWave * batch.waves;
  r.onSMs -= perWave;
  gpu.multiWave -= batch.waves > 1;
  r.inFlight.erase(std::find(r.inFlight.begin(), r.inFlight.end(), b));
  batch.runs.clear();
  freeBatches.push_back(b);
  gpu.blocksChanged = true;
  if (r.running == 0 && r.pending == 0) {
    // Its slot goes to the last resident kernel (their order in the list
    // matters nowhere: `waiting` keeps the urgency order).
    if (slot + 1 != resident.size()) {
      r = std::move(resident.back());
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
  if (contends)
    shareResources(gpu, now);
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
  // The order they reached the device, as ranks (the counter itself only
  // grows).
  std::vector<const Resident *> byArrival = held;
  std::sort(byArrival.begin(), byArrival.end(),
            [](const Resident *a, const Resident *b) { return a->arrival < b->arrival; });
  for (const Resident *r : held) {
    g.put(double(std::find(byArrival.begin(), byArrival.end(), r) - byArrival.begin()));
    g.put(g.inst(r->instance));
    g.put(r->priority);
    g.put(r->pending);
    g.put(r->running);
    g.put(r->started);
    g.put(r->onSMs);
    g.put(r->speed);
  }
  g.put(double(gpu.waiting.size()));
  for (const Urgency &u : gpu.waiting) {
    g.put(u.priority);
    g.put(g.inst(u.instance));
  }
  g.put(gpu.blocksChanged);
  g.put(gpu.multiWave);
  g.put(blockedOnResidency);
}

void Simulator::shiftSMs(const Shift &d) {
  Gpu &gpu = gpus[0];
  for (uint32_t slot = 0; slot < gpu.resident.size(); ++slot) {
    Resident &r = gpu.resident[slot];
    d.instance(r.instance);
    residentSlot[r.instance] = slot;
    for (uint32_t b : r.inFlight)
      batches[b].at = d.later(batches[b].at);
  }
  for (Urgency &u : gpu.waiting)
    d.instance(u.instance);
}

} // namespace
} // namespace pipec::sim
