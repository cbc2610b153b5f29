//===- CopyEngines.cpp - Copy engines and the host-function executor --------===//

#include "model/sim/Simulator.h"

using namespace pipec;

namespace pipec::sim {
namespace {

bool Simulator::advanceShared(unsigned device, unsigned e, double now) {
  Gpu &gpu = gpus[device];
  SharedDirection &d = gpu.shared[e];
  bool progress = false;
  if (size_t n = moving(d, d.last)) {
    const double done = (now - d.last) / double(n);
    for (SharedCopy &c : d.active)
      if (c.moveFrom <= d.last)
        c.remaining -= done;
  }
  d.last = now;
  for (size_t i = 0; i < d.active.size();) {
    SharedCopy &c = d.active[i];
    // (Within the grid and the rounding of the step that was to end it.)
    if (c.moveFrom <= now && c.remaining <= 1e-8 + 1e-12 * now) {
      uint32_t v = c.instance;
      d.active.erase(d.active.begin() + i);
      finish(v, now);
      progress = true;
    } else {
      ++i;
    }
  }
  const unsigned engines = p.copyEngines(static_cast<CopyDirection>(e));
  while (d.active.size() < engines && !gpu.copyQueues[e].empty()) {
    uint32_t v = gpu.copyQueues[e].front();
    gpu.copyQueues[e].pop_front();
    setStart(v, now);
    d.active.push_back({v, onGrid(now + p.copyLatencyUs), s.instances.stage(v).durationUs});
    progress = true;
  }
  // The next change: a latency ending, or the first moving copy done.
  double next = std::numeric_limits<double>::infinity();
  const size_t n = moving(d, now);
  for (const SharedCopy &c : d.active)
    next = std::min(next, c.moveFrom > now ? c.moveFrom
                                           : now + std::max(0.0, c.remaining) * double(n));
  ++d.generation;
  if (next != std::numeric_limits<double>::infinity())
    post(next, Event::CopyStep, device * 3 + e, d.generation);
  return progress;
}

bool Simulator::pumpEngines(double now) {
  bool progress = false;
  for (unsigned device = 0; device < gpus.size(); ++device)
    progress |= pumpEngines(device, now);
  return progress;
}

bool Simulator::pumpEngines(unsigned device, double now) {
  Gpu &gpu = gpus[device];
  bool progress = false;
  for (unsigned e = 0; e < 3; ++e)
    if (p.copyEngines(static_cast<CopyDirection>(e)) > 1) {
      if (!gpu.copyQueues[e].empty() &&
          gpu.shared[e].active.size() < p.copyEngines(static_cast<CopyDirection>(e)))
        progress |= advanceShared(device, e, now);
    } else if (!gpu.engineBusy[e] && !gpu.copyQueues[e].empty()) {
      uint32_t v = gpu.copyQueues[e].front();
      gpu.copyQueues[e].pop_front();
      gpu.engineBusy[e] = 1;
      setStart(v, now);
      double done = now + p.copyLatencyUs + s.instances.stage(v).durationUs;
      post(done, Event::ItemDone, v, e);
      progress = true;
    }
  if (!gpu.hostBusy && !gpu.hostQueue.empty()) {
    uint32_t v = gpu.hostQueue.front();
    gpu.hostQueue.pop_front();
    gpu.hostBusy = 1;
    setStart(v, now);
    post(now + s.instances.stage(v).durationUs, Event::ItemDone, v, 3);
    progress = true;
  }
  return progress;
}

void Simulator::itemDone(uint32_t v, double now) {
  const program::Stage &stage = s.instances.stage(v);
  switch (stage.kind()) {
  case StageKind::Copy:
    gpuOf(v).engineBusy[engineIndex(stage.copy().direction)] = 0;
    break;
  case StageKind::Host:
    gpuOf(v).hostBusy = 0;
    break;
  case StageKind::Kernel: // end as their blocks do (blockDone)
  case StageKind::Memset:
  case StageKind::Collective:
  case StageKind::Cpu: // on the host thread
    break;
  }
  finish(v, now);
}

// --- Snapshot and shift ----------------------------------------------------
// (One device: extrapolation runs on one.)

void Simulator::snapshotEngines(Snapshot &g) const {
  const Gpu &gpu = gpus[0];
  for (unsigned e = 0; e < 3; ++e) {
    g.put(double(gpu.copyQueues[e].size()));
    for (uint32_t v : gpu.copyQueues[e])
      g.put(g.inst(v));
    g.put(gpu.engineBusy[e]);
    g.put(double(gpu.shared[e].active.size()));
    for (const SharedCopy &c : gpu.shared[e].active) {
      g.put(g.inst(c.instance));
      g.put(c.moveFrom - g.T);
      g.put(c.remaining);
    }
    if (!gpu.shared[e].active.empty())
      g.put(gpu.shared[e].last - g.T);
  }
  g.put(double(gpu.hostQueue.size()));
  for (uint32_t v : gpu.hostQueue)
    g.put(g.inst(v));
  g.put(gpu.hostBusy);
}

void Simulator::shiftEngines(const Shift &d) {
  Gpu &gpu = gpus[0];
  for (unsigned e = 0; e < 3; ++e) {
    for (uint32_t &v : gpu.copyQueues[e])
      d.instance(v);
    for (SharedCopy &c : gpu.shared[e].active) {
      d.instance(c.instance);
      c.moveFrom = d.later(c.moveFrom);
    }
    gpu.shared[e].last = d.later(gpu.shared[e].last);
  }
  for (uint32_t &v : gpu.hostQueue)
    d.instance(v);
}

} // namespace
} // namespace pipec::sim
