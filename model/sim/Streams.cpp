//===- Streams.cpp - Hardware queues and the streams mapped onto them -------===//

#include "model/sim/Simulator.h"

using namespace pipec;

namespace pipec::sim {
namespace {

// --- Stream lowering -------------------------------------------------------
void Simulator::startStreams() {
  const size_t streams = s.streamPlan.streams.size();
  queues.assign(size_t(hw) * gpus.size(), {});
  queueWake.assign(queues.size(), -1);
  queueDirty.assign(queues.size(), 0);
  stuckOn.assign(queues.size(), kNone);
  waitNext.assign(queues.size(), kNone);
  streamBusy.assign(streams, 0);
  streamFreeAt.assign(streams, 0);
}

void Simulator::wakeQueue(uint32_t q, double time) {
  time = onGrid(time);
  if (queueWake[q] == time)
    return;
  queueWake[q] = time;
  post(time, Event::Wake, q);
}

void Simulator::waitFor(uint32_t q, uint32_t record) {
  if (stuckOn[q] == record)
    return;
  stuckOn[q] = record;
  auto [it, added] = waitHeads.try_emplace(record, q);
  waitNext[q] = added ? kNone : it->second;
  it->second = q;
}

void Simulator::recordReached(uint32_t record) {
  auto it = waitHeads.find(record);
  if (it == waitHeads.end())
    return;
  uint32_t q = it->second;
  waitHeads.erase(it);
  while (q != kNone) {
    uint32_t next = waitNext[q];
    stuckOn[q] = kNone;
    waitNext[q] = kNone;
    markQueue(q);
    q = next;
  }
}

bool Simulator::pumpQueues(double now) {
  bool progress = false;
  for (uint32_t qi = 0; qi < queues.size(); ++qi) {
    if (!queueDirty[qi])
      continue;
    queueDirty[qi] = 0; // until something changes again
    std::deque<uint32_t> &q = queues[qi];
    while (!q.empty()) {
      const Op &op = hostOps()[q.front()];
      const uint32_t stream = op.stream;
      if (streamBusy[stream])
        break; // the stream's previous item is still running
      if (now < streamFreeAt[stream]) {
        wakeQueue(qi, streamFreeAt[stream]);
        break;
      }
      if (op.kind == Op::Record) {
        recordCompleted(q.front(), now);
        recordReached(q.front());
      } else if (op.kind == Op::Wait) {
        uint32_t record = boundRecord[q.front()];
        if (record != kNone) {
          double done = recordDoneAt.get(record);
          if (done < 0) {
            waitFor(qi, record);
            break; // the record is not reached yet
          }
          const double ready = onGrid(done + p.waitLatencyUs);
          if (now < ready) {
            wakeQueue(qi, ready);
            break;
          }
        }
      } else if (!dispatch(op.instance, now)) {
        break; // no room for another resident kernel
      } else {
        streamBusy[stream] = 1;
        --gpuOf(op.instance).pendingLaunches;
      }
      q.pop_front();
      progress = true;
    }
  }
  return progress;
}

// --- Snapshot and shift ----------------------------------------------------

bool Simulator::snapshotStreams(Snapshot &g) const {
  uint64_t oldest = threads[0].next;
  for (uint32_t q = 0; q < queues.size(); ++q) {
    g.put(double(queues[q].size()));
    for (uint32_t o : queues[q]) {
      g.put(g.opAt(o));
      oldest = std::min<uint64_t>(oldest, o);
    }
    g.put(queueWake[q] < g.T ? Snapshot::kPast : queueWake[q] - g.T);
    g.put(queueDirty[q]);
    g.put(g.opAt(stuckOn[q]));
    g.put(waitNext[q] == kNone ? Snapshot::kNoneMark : double(waitNext[q]));
  }
  for (size_t st = 0; st < streamBusy.size(); ++st) {
    g.put(streamBusy[st]);
    g.put(streamFreeAt[st] <= g.T ? Snapshot::kPast : streamFreeAt[st] - g.T);
  }
  // The records a wait or sync still to come may bind to.
  const uint64_t from = oldest >= period.reach ? oldest - period.reach : 0;
  if (threads[0].next - from > Snapshot::kMax)
    return false;
  g.put(g.opAt(from));
  const std::vector<Op> &list = hostOps();
  for (uint64_t r = from; r < threads[0].next; ++r)
    if (list[r].kind == Op::Record) {
      const double done = recordDoneAt.get(r);
      g.put(done < 0 ? Snapshot::kNoneMark : done - g.T);
      auto head = waitHeads.find(static_cast<uint32_t>(r));
      g.put(head == waitHeads.end() ? Snapshot::kNoneMark : double(head->second));
    }
  return true;
}

/// (After shiftHost: the host is dO ops on.)
void Simulator::shiftStreams(const Shift &d) {
  uint64_t oldest = threads[0].next - d.dO;
  for (uint32_t q = 0; q < queues.size(); ++q) {
    for (uint32_t &o : queues[q]) {
      oldest = std::min<uint64_t>(oldest, o);
      o = static_cast<uint32_t>(o + d.dO);
    }
    queueWake[q] = queueWake[q] < clock ? -1 : d.later(queueWake[q]);
    if (stuckOn[q] != kNone)
      stuckOn[q] = static_cast<uint32_t>(stuckOn[q] + d.dO);
  }
  for (double &t : streamFreeAt)
    t = d.later(t);
  const uint64_t from = oldest >= period.reach ? oldest - period.reach : 0;
  const std::vector<Op> &list = hostOps();
  for (uint64_t r = threads[0].next - d.dO; r-- > from;)
    if (list[r].kind == Op::Record) {
      const double done = recordDoneAt.get(r);
      if (done >= 0)
        recordDoneAt.set(r + d.dO, d.later(done));
    }
  // Records not yet reached that queues wait for are theirs shifted.
  llvm::DenseMap<uint32_t, uint32_t> heads;
  for (auto [record, q] : waitHeads)
    heads[static_cast<uint32_t>(record + d.dO)] = q;
  waitHeads = std::move(heads);
}

} // namespace
} // namespace pipec::sim
