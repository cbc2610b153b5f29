// The schedule as CUDA calls: see CallPlan.h.

#include "compiler/lower/CallPlan.h"
#include "compiler/support/Overloaded.h"

#include "llvm/Support/ErrorHandling.h"

#include <algorithm>

using namespace pipec;
using namespace pipec::lower;

Work lower::workOf(const program::Stage &st) {
  return std::visit(Overloaded{
                        [](const program::KernelWork &) { return Work::Kernel; },
                        [](const program::CopyWork &c) {
                          return c.direction == CopyDirection::P2P ? Work::PeerCopy
                                                                   : Work::Copy;
                        },
                        [](const program::HostWork &) { return Work::HostFunc; },
                        [](const program::MemsetWork &) { return Work::Memset; },
                        [](const program::CpuWork &) { return Work::HostThread; },
                        [](const program::CollectiveWork &) { return Work::Collective; },
                    },
                    st.work);
}

namespace {

/// `a`'s slot in instance v's iteration.
Place declared(const Schedule &s, const program::Access &a, uint32_t v) {
  return {Place::Declared, a.buffer,
          a.slot(s.instances.iterationOf(v), s.pipeline.buffers[a.buffer].slots)};
}

} // namespace

CopyPlaces lower::copyPlaces(const Schedule &s, uint32_t v) {
  const program::Stage &st = s.instances.stage(v);
  CopyPlaces c;
  switch (st.copy().direction) {
  case CopyDirection::H2D:
    c = {{Place::Device}, {Place::Host}};
    break;
  case CopyDirection::D2H:
    c = {{Place::Host}, {Place::Device}};
    break;
  case CopyDirection::D2D:
  case CopyDirection::P2P:
    c = {{Place::Device2}, {Place::Device}};
    break;
  }
  bool written = false, read = false;
  for (const program::Access &a : st.accesses) {
    if (a.write && !written) {
      c.dst = declared(s, a, v);
      written = true;
    } else if (!a.write && !read) {
      c.src = declared(s, a, v);
      read = true;
    }
  }
  return c;
}

Place lower::memsetPlace(const Schedule &s, uint32_t v) {
  for (const program::Access &a : s.instances.stage(v).accesses)
    if (a.write)
      return declared(s, a, v);
  return {Place::Device};
}

Place lower::kernelPlace(const Schedule &s, uint32_t v) {
  const program::Access *touched = nullptr;
  for (const program::Access &a : s.instances.stage(v).accesses)
    if (!touched || a.write)
      touched = &a;
  return touched ? declared(s, *touched, v) : Place{};
}

bool lower::forEachStreamCall(const Schedule &s, llvm::function_ref<bool(const Call &)> f) {
  const bool several = s.pipeline.deviceCount() > 1;
  int64_t current = -1;
  auto call = [&](const Op &op) {
    // With several devices, each call is made with its stream's device
    // current.
    if (several && op.stream != kHostStream &&
        s.streamPlan.streams[op.stream].device != current) {
      current = s.streamPlan.streams[op.stream].device;
      Call set{Call::SetDevice};
      set.device = uint32_t(current);
      if (!f(set))
        return false;
    }
    Call c{Call::Launch};
    c.stream = op.stream;
    c.instance = op.instance;
    c.event = op.event;
    switch (op.kind) {
    case Op::Launch: {
      const program::Stage &st = s.instances.stage(op.instance);
      if (st.issueUs > 0) {
        Call dispatch{Call::Dispatch};
        dispatch.instance = op.instance;
        if (!f(dispatch))
          return false;
      }
      c.work = workOf(st);
      return f(c);
    }
    case Op::Record:
      c.kind = Call::Record;
      return f(c);
    case Op::Wait:
      c.kind = Call::Wait;
      return f(c);
    case Op::Sync:
      c.kind = Call::Sync;
      return f(c);
    case Op::Cpu:
      c.kind = Call::Cpu;
      return f(c);
    case Op::Join:
      c.kind = Call::Join;
      return f(c);
    case Op::GraphLaunch:
      return true; // the graph lowering's
    }
    return true;
  };
  // A collective's parts are launched one after another, inside one NCCL
  // group: NCCL enqueues them at its end, so the events recorded after them
  // are recorded after it (waits for the parts' streams may come between:
  // they are enqueued before the parts are).
  std::vector<const Op *> afterGroup;
  bool inGroup = false;
  for (const Op &op : s.ops) {
    if (inGroup && op.kind == Op::Record) {
      afterGroup.push_back(&op);
      continue;
    }
    const program::Stage *part = nullptr;
    if (op.kind == Op::Launch && program::isCollective(s.instances.stage(op.instance)))
      part = &s.instances.stage(op.instance);
    const uint32_t k = part ? s.instances.stageOf(op.instance) : 0;
    if (part && k == part->collective().group) {
      if (!f(Call{Call::GroupStart}))
        return false;
      inGroup = true;
    }
    if (!call(op))
      return false;
    if (part && k + 1 == part->collective().group + part->collective().parts) {
      if (!f(Call{Call::GroupEnd}))
        return false;
      inGroup = false;
      for (const Op *record : afterGroup)
        if (!call(*record))
          return false;
      afterGroup.clear();
    }
  }
  return true;
}

GraphPlan::GraphPlan(const Schedule &s)
    : s(s), eventOf(s.graphEventOf(events)),
      launchStreams(std::min(std::max(1u, s.segments), kGraphLaunchStreams)) {
  for (uint32_t v = 0; v < s.instances.size(); ++v) {
    if (s.onHost(v))
      continue;
    ++nodes;
    if (s.instances.stage(v).dynamic)
      dynamic.push_back(v);
  }
}

bool GraphPlan::forEachNode(llvm::function_ref<bool(const Node &)> f) const {
  for (uint32_t v = 0; v < s.instances.size(); ++v) {
    if (s.onHost(v))
      continue; // a cpu stage runs between the segments' launches
    Node node{v,
              s.segmentOf[v],
              workOf(s.instances.stage(v)),
              s.graphPredecessors().row(v),
              s.graphWaits().row(v),
              eventOf[v]};
    if (!f(node))
      return false;
  }
  return true;
}

bool GraphPlan::forEachReplayCall(llvm::function_ref<bool(const Call &)> f) const {
  for (const Op &op : s.graphOps) {
    Call c{Call::GraphLaunch};
    c.instance = op.instance;
    switch (op.kind) {
    case Op::GraphLaunch:
      c.segment = op.event;
      c.stream = op.event % launchStreams;
      break;
    case Op::Sync:
      c.kind = Call::Sync;
      c.event = op.event;
      break;
    case Op::Cpu:
      c.kind = Call::Cpu;
      break;
    case Op::Record: // an event-record node after its producer, in the graph
    case Op::Launch: // a node
    case Op::Wait:   // an event-wait node
    case Op::Join:   // several devices are lowered to streams
      continue;
    }
    if (!f(c))
      return false;
  }
  return true;
}
