// The schedule as CUDA calls: see CallPlan.h.

#include "compiler/lower/CallPlan.h"
#include "compiler/support/Overloaded.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/Hashing.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/ErrorHandling.h"

#include <algorithm>

using namespace pipec;
using namespace pipec::lower;

Work lower::cudaWorkOf(const program::Stage &st) {
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

StageBuffers lower::stageBuffers(const program::Stage &st, const DeviceProfile &profile) {
  StageBuffers b;
  const bool memset = st.kind() == StageKind::Memset;
  if (st.kind() != StageKind::Copy && !memset)
    return b;
  const CopyDirection direction = memset ? CopyDirection::D2D : st.copy().direction;
  b.bytes = st.bytes
                ? *st.bytes
                : static_cast<uint64_t>(st.durationUs * profile.copyGBps(direction) * 1e3);
  b.bytes = std::max<uint64_t>(b.bytes, 1);
  b.device = true;
  if (!memset) {
    const bool peer = direction == CopyDirection::D2D || direction == CopyDirection::P2P;
    b.device2 = peer;
    b.pinned = !peer;
  }
  return b;
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

RecordedGraphs::RecordedGraphs(const Schedule &s) : s(s), scratchEvent(s.eventObjects) {
  const auto &stages = s.pipeline.stages;
  if (s.pipeline.deviceCount() > 1 ||
      std::none_of(stages.begin(), stages.end(),
                   [](const program::Stage &st) { return st.graph >= 0; }))
    return;
  launchOf.assign(s.instances.size(), UINT32_MAX);
  // The runs, as the model's host thread sees them: a node's launch opens
  // one, the next node of its graph and iteration goes on with it, any
  // other launch, cpu stage or sync closes it (records and waits do not).
  bool open = false;
  int64_t graph = -1;
  uint32_t iteration = 0;
  Launch run{0, 0, 0, 0};
  auto close = [&] {
    if (open)
      launches.push_back(run);
    open = false;
  };
  for (uint32_t i = 0; i < s.ops.size(); ++i) {
    const Op &op = s.ops[i];
    if (op.kind == Op::Record || op.kind == Op::Wait)
      continue;
    if (op.kind != Op::Launch) {
      close();
      continue;
    }
    const program::Stage &st = s.instances.stage(op.instance);
    const uint32_t it = s.instances.iterationOf(op.instance);
    if (!open || st.graph != graph || it != iteration) {
      close();
      if (st.graph < 0 || program::isCollective(st))
        continue;
      open = true;
      graph = st.graph;
      iteration = it;
      run = {i, i, 0, op.stream};
    }
    launchOf[op.instance] = uint32_t(launches.size());
    run.end = i + 1;
  }
  close();
  if (launches.empty())
    return;

  // The records a later wait binds to (the latest of its event before it).
  exported.assign(s.ops.size(), false);
  std::vector<uint32_t> latest(s.eventObjects, UINT32_MAX), latestLaunch(s.eventObjects);
  uint32_t l = 0;
  for (uint32_t i = 0; i < s.ops.size(); ++i) {
    while (l < launches.size() && launches[l].end <= i)
      ++l;
    const bool in = l < launches.size() && launches[l].begin <= i;
    const Op &op = s.ops[i];
    if (op.kind == Op::Record && op.event < s.eventObjects) {
      latest[op.event] = in && edge(l, op) ? i : UINT32_MAX; // the others come before it
      latestLaunch[op.event] = l;
    } else if ((op.kind == Op::Wait || op.kind == Op::Sync) && op.event < s.eventObjects &&
               latest[op.event] != UINT32_MAX && !(in && latestLaunch[op.event] == l)) {
      exported[latest[op.event]] = true;
    }
  }

  // Launches of one shape share a graph: per node its stage, stream and
  // places, and its predecessors by position.
  llvm::DenseMap<uint64_t, llvm::SmallVector<uint32_t, 1>> byHash;
  std::vector<std::vector<uint64_t>> kept;
  std::vector<uint64_t> mine;
  llvm::DenseMap<uint32_t, uint32_t> position;
  auto place = [&](const Place &p) {
    mine.push_back(uint64_t(p.kind) << 32 | p.buffer);
    mine.push_back(p.slot);
  };
  for (uint32_t k = 0; k < launches.size(); ++k) {
    Launch &launch = launches[k];
    mine.assign({launch.stream});
    position.clear();
    forEachNode(k, [&](const Node &node) {
      const uint32_t v = node.instance;
      position[v] = uint32_t(position.size());
      mine.push_back(s.instances.stageOf(v));
      mine.push_back(s.streamOf(v));
      switch (node.work) {
      case Work::Kernel:
        place(kernelPlace(s, v));
        break;
      case Work::Copy:
      case Work::PeerCopy: {
        const CopyPlaces c = copyPlaces(s, v);
        place(c.dst);
        place(c.src);
        break;
      }
      case Work::Memset:
        place(memsetPlace(s, v));
        break;
      case Work::HostFunc:
      case Work::Collective:
      case Work::HostThread:
        break;
      }
      mine.push_back(node.after.size());
      for (uint32_t u : node.after)
        mine.push_back(position.lookup(u));
      return true;
    });
    const uint64_t h = llvm::hash_combine_range(mine.begin(), mine.end());
    llvm::SmallVector<uint32_t, 1> &candidates = byHash[h];
    launch.shape = UINT32_MAX;
    for (uint32_t c : candidates)
      if (kept[c] == mine)
        launch.shape = c;
    if (launch.shape == UINT32_MAX) {
      launch.shape = uint32_t(shapes.size());
      candidates.push_back(launch.shape);
      kept.push_back(mine);
      shapes.push_back(k);
    }
  }
}

uint32_t RecordedGraphs::events() const { return s.eventObjects + (launches.empty() ? 0 : 1); }

bool RecordedGraphs::forEachNode(uint32_t l, llvm::function_ref<bool(const Node &)> f) const {
  const Launch &launch = launches[l];
  // Per stream: its last node, and the producers its edges since then wait for.
  llvm::DenseMap<uint32_t, uint32_t> last;
  llvm::DenseMap<uint32_t, llvm::SmallVector<uint32_t, 2>> pending;
  llvm::SmallVector<uint32_t, 4> after;
  for (uint32_t i = launch.begin; i < launch.end; ++i) {
    const Op &op = s.ops[i];
    if (op.kind == Op::Wait && edge(l, op)) {
      pending[op.stream].push_back(op.instance);
      continue;
    }
    if (op.kind != Op::Launch)
      continue;
    after.clear();
    auto before = last.find(op.stream);
    if (before != last.end())
      after.push_back(before->second);
    auto edges = pending.find(op.stream);
    if (edges != pending.end()) {
      for (uint32_t u : edges->second)
        if (std::find(after.begin(), after.end(), u) == after.end())
          after.push_back(u);
      pending.erase(edges);
    }
    last[op.stream] = op.instance;
    const Node node{op.instance, launch.shape, cudaWorkOf(s.instances.stage(op.instance)),
                    after,       {},           kNoRecord};
    if (!f(node))
      return false;
  }
  return true;
}

namespace {

/// The calls of recorded launch l (RecordedGraphs): the records and waits
/// that are not its graph's edges (the waits moved to the launch stream),
/// the fork, the launch, the join, the records made again.
bool recordedCalls(const RecordedGraphs &r, uint32_t l,
                   llvm::function_ref<bool(const Call &)> f) {
  const Schedule &s = r.s;
  const RecordedGraphs::Launch &launch = r.launches[l];
  const uint32_t first = s.ops[launch.begin].instance;
  auto call = [&](Call::Kind kind, uint32_t stream, uint32_t event, uint32_t instance) {
    Call c{kind};
    c.stream = stream;
    c.event = event;
    c.instance = instance;
    return f(c);
  };
  for (uint32_t i = launch.begin; i < launch.end; ++i) {
    const Op &op = s.ops[i];
    if (op.kind == Op::Record && !r.edge(l, op) &&
        !call(Call::Record, op.stream, op.event, op.instance))
      return false;
    if (op.kind == Op::Wait && !r.edge(l, op) &&
        !call(Call::Wait, launch.stream, op.event, op.instance))
      return false;
  }
  // The streams of its nodes fork into the launch stream (their earlier
  // work comes first); every stream it touches joins after it.
  llvm::SmallVector<uint32_t, 4> forked, joined;
  llvm::DenseSet<uint32_t> seenForked, seenJoined;
  for (uint32_t i = launch.begin; i < launch.end; ++i) {
    const Op &op = s.ops[i];
    if (op.stream == launch.stream || op.stream == kHostStream)
      continue;
    if (op.kind == Op::Launch && seenForked.insert(op.stream).second)
      forked.push_back(op.stream);
    if (seenJoined.insert(op.stream).second)
      joined.push_back(op.stream);
  }
  for (uint32_t x : forked)
    if (!call(Call::Record, x, r.scratchEvent, first) ||
        !call(Call::Wait, launch.stream, r.scratchEvent, first))
      return false;
  if (s.instances.stage(first).issueUs > 0 && !call(Call::Dispatch, kHostStream, 0, first))
    return false;
  Call graph{Call::RecordedLaunch};
  graph.stream = launch.stream;
  graph.instance = first;
  graph.segment = launch.shape;
  graph.event = l;
  if (!f(graph))
    return false;
  if (!joined.empty() && !call(Call::Record, launch.stream, r.scratchEvent, first))
    return false;
  for (uint32_t x : joined)
    if (!call(Call::Wait, x, r.scratchEvent, first))
      return false;
  for (uint32_t i = launch.begin; i < launch.end; ++i)
    if (r.exported[i] &&
        !call(Call::Record, s.ops[i].stream, s.ops[i].event, s.ops[i].instance))
      return false;
  return true;
}

} // namespace

HostThreads::HostThreads(const Schedule &s)
    : count(std::max<uint32_t>(1, uint32_t(s.pipeline.deviceCount()))),
      threadOf(opThreads(s, s.ops)), eventBase(s.eventObjects) {
  postOf.assign(s.ops.size(), kNoToken);
  awaitOf.assign(s.ops.size(), kNoToken);
  if (count == 1)
    return;
  auto tokenOf = [&](uint32_t op, uint32_t device) {
    if (postOf[op] == kNoToken) {
      postOf[op] = tokens++;
      tokenDevice.push_back(device);
    }
    return postOf[op];
  };
  std::vector<uint32_t> latest(s.eventObjects, UINT32_MAX);
  llvm::DenseMap<uint32_t, uint32_t> cpuOp; // per cpu stage run so far, its op
  for (uint32_t i = 0; i < s.ops.size(); ++i) {
    const Op &op = s.ops[i];
    switch (op.kind) {
    case Op::Record:
      if (op.event < latest.size())
        latest[op.event] = i;
      break;
    case Op::Wait:
    case Op::Sync: {
      const uint32_t r = op.event < latest.size() ? latest[op.event] : UINT32_MAX;
      if (r != UINT32_MAX && threadOf[r] != threadOf[i])
        awaitOf[i] = tokenOf(r, s.streamPlan.streams[s.ops[r].stream].device);
      break;
    }
    case Op::Cpu:
      cpuOp[op.instance] = i;
      break;
    case Op::Join: {
      auto c = cpuOp.find(op.instance);
      if (c != cpuOp.end())
        awaitOf[i] = tokenOf(c->second, threadOf[c->second]);
      break;
    }
    case Op::Launch:
    case Op::GraphLaunch:
      break;
    }
  }
}

bool lower::forEachStreamCall(const Schedule &s, const RecordedGraphs *recorded,
                              const HostThreads *threads,
                              llvm::function_ref<bool(const Call &)> f) {
  if (recorded && recorded->launches.empty())
    recorded = nullptr;
  if (threads && threads->count == 1)
    threads = nullptr;
  uint32_t nextRecorded = 0;
  // One host thread issues every device's calls, each with its stream's
  // device current (set when it changes); with `threads`, each device's
  // thread issues its own.
  const bool setDevices = s.pipeline.deviceCount() > 1 && !threads;
  int64_t current = -1;
  uint32_t thread = 0; // the thread of the op being lowered
  auto emit = [&](Call c) {
    c.thread = thread;
    return f(c);
  };
  auto token = [&](Call::Kind kind, uint32_t k) {
    Call c{kind};
    c.event = k;
    return emit(c);
  };
  auto call = [&](const Op &op, uint32_t i) {
    thread = threads ? threads->threadOf[i] : 0;
    if (setDevices && op.stream != kHostStream &&
        s.streamPlan.streams[op.stream].device != current) {
      current = s.streamPlan.streams[op.stream].device;
      Call set{Call::SetDevice};
      set.device = uint32_t(current);
      if (!emit(set))
        return false;
    }
    const uint32_t post = threads ? threads->postOf[i] : kNoToken;
    const uint32_t await = threads ? threads->awaitOf[i] : kNoToken;
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
        if (!emit(dispatch))
          return false;
      }
      c.work = cudaWorkOf(st);
      return emit(c);
    }
    case Op::Record:
      c.kind = Call::Record;
      if (!emit(c))
        return false;
      if (post == kNoToken)
        return true;
      // The record another thread binds to, on an event of its own.
      c.event = threads->eventBase + post;
      return emit(c) && token(Call::Post, post);
    case Op::Wait:
    case Op::Sync:
      c.kind = op.kind == Op::Wait ? Call::Wait : Call::Sync;
      if (await != kNoToken) {
        if (!token(Call::Await, await))
          return false;
        c.event = threads->eventBase + await;
      }
      return emit(c);
    case Op::Cpu:
      c.kind = Call::Cpu;
      return emit(c) && (post == kNoToken || token(Call::Post, post));
    case Op::Join:
      c.kind = Call::Join;
      c.event = await; // with threads, the token it awaits
      return emit(c);
    case Op::GraphLaunch:
      return true; // the graph lowering's
    }
    return true;
  };
  // A collective's parts are launched one after another, inside one NCCL
  // group: NCCL enqueues them at its end, so the events recorded after them
  // are recorded after it (waits for the parts' streams may come between:
  // they are enqueued before the parts are). With threads, each makes its
  // own part, no group around it.
  std::vector<std::pair<const Op *, uint32_t>> afterGroup;
  bool inGroup = false;
  for (uint32_t i = 0; i < s.ops.size(); ++i) {
    const Op &op = s.ops[i];
    if (recorded && nextRecorded < recorded->launches.size() &&
        recorded->launches[nextRecorded].begin == i) {
      if (!recordedCalls(*recorded, nextRecorded, f))
        return false;
      i = recorded->launches[nextRecorded++].end - 1;
      continue;
    }
    if (inGroup && op.kind == Op::Record) {
      afterGroup.push_back({&op, i});
      continue;
    }
    const program::Stage *part = nullptr;
    if (!threads && op.kind == Op::Launch &&
        program::isCollective(s.instances.stage(op.instance)))
      part = &s.instances.stage(op.instance);
    const uint32_t k = part ? s.instances.stageOf(op.instance) : 0;
    if (part && k == part->collective().group) {
      if (!f(Call{Call::GroupStart}))
        return false;
      inGroup = true;
    }
    if (!call(op, i))
      return false;
    if (part && k + 1 == part->collective().group + part->collective().parts) {
      if (!f(Call{Call::GroupEnd}))
        return false;
      inGroup = false;
      for (auto [record, at] : afterGroup)
        if (!call(*record, at))
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
              cudaWorkOf(s.instances.stage(v)),
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
