//===- Races.cpp ----------------------------------------------------------===//

#include "compiler/schedule/Races.h"

#include "compiler/schedule/Schedule.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace pipec;

std::vector<Race> pipec::findRaces(const Schedule &s) {
  return findRaces(s.instances, s.streamPlan.streamOfStage,
                   static_cast<uint32_t>(s.streamPlan.streams.size()));
}

std::vector<Race> pipec::findRaces(const Instances &inst,
                                   const std::vector<uint32_t> &streamOfStage,
                                   uint32_t streams) {
  const program::Pipeline &p = inst.pipeline();
  const size_t n = inst.size();
  auto streamOf = [&](uint32_t v) { return streamOfStage[inst.stageOf(v)]; };
  std::vector<Race> races;
  if (p.buffers.empty() || n == 0)
    return races;

  // Vector clocks over streams, for a window of instances: clock[v][c] is
  // one more than the position, on stream c, of v's latest ancestor there
  // (v itself included). Predecessors lie within the window.
  const size_t window = std::min(
      n, (size_t(std::max(1u, inst.maxDistance())) + 1) * inst.stagesPerIteration());
  std::vector<uint32_t> clocks(window * streams, 0);
  std::vector<uint32_t> seq(n), lastOn(streams, UINT32_MAX), count(streams, 0);
  auto row = [&](uint32_t v) { return &clocks[size_t(v % window) * streams]; };
  auto reaches = [&](uint32_t u, uint32_t v) {
    return row(v)[streamOf(u)] >= seq[u];
  };

  // Per buffer slot, per stream and per stage: the latest write and the
  // latest read. A stage runs on one stream and a stream in order, so if
  // the latest access of a stream reaches v, every earlier one does.
  std::vector<uint64_t> slotBase(p.buffers.size() + 1, 0);
  for (size_t b = 0; b < p.buffers.size(); ++b)
    slotBase[b + 1] = slotBase[b] + p.buffers[b].slots;
  using Latest = std::vector<std::pair<uint32_t, uint32_t>>; // (key, instance)
  struct Slot {
    Latest writeOnStream, readOnStream, writeOfStage, readOfStage;
  };
  std::vector<Slot> slots(slotBase.back());
  auto update = [](Latest &list, uint32_t key, uint32_t v) {
    for (auto &entry : list)
      if (entry.first == key) {
        entry.second = v;
        return;
      }
    list.push_back({key, v});
  };

  llvm::DenseSet<uint64_t> reported; // stage pairs
  auto race = [&](uint32_t u, uint32_t v, uint32_t b, bool uWrites, bool vWrites) {
    uint32_t a = inst.stageOf(u), c = inst.stageOf(v);
    uint64_t key = (uint64_t(std::min(a, c)) << 32) | std::max(a, c);
    if (reported.insert(key).second)
      races.push_back({u, v, b, uWrites, vWrites});
  };
  // v must follow every earlier access in `onStream`; where a stream's
  // latest does not, each stage of that stream is looked at.
  auto check = [&](uint32_t v, uint32_t b, const Latest &onStream,
                   const Latest &ofStage, bool earlierWrites, bool vWrites) {
    for (auto [stream, u] : onStream) {
      if (u == v || reaches(u, v))
        continue;
      for (auto [stage, w] : ofStage)
        if (w != v && streamOfStage[stage] == stream && !reaches(w, v))
          race(w, v, b, earlierWrites, vWrites);
    }
  };

  for (uint32_t v = 0; v < n; ++v) {
    const uint32_t c = streamOf(v);
    uint32_t *mine = row(v);
    std::fill(mine, mine + streams, 0);
    auto join = [&](uint32_t u) {
      const uint32_t *theirs = row(u);
      for (uint32_t k = 0; k < streams; ++k)
        mine[k] = std::max(mine[k], theirs[k]);
    };
    for (uint32_t u : inst.deps().row(v))
      join(u);
    if (lastOn[c] != UINT32_MAX)
      join(lastOn[c]);
    seq[v] = ++count[c];
    mine[c] = seq[v];
    lastOn[c] = v;

    const uint32_t stage = inst.stageOf(v);
    const program::Stage &st = p.stages[stage];
    const uint32_t it = inst.iterationOf(v);
    for (bool write : {false, true})
      for (const program::Access &a : st.accesses) {
        if (a.write != write)
          continue;
        Slot &slot = slots[slotBase[a.buffer] + it % p.buffers[a.buffer].slots];
        check(v, a.buffer, slot.writeOnStream, slot.writeOfStage, true, write);
        if (write)
          check(v, a.buffer, slot.readOnStream, slot.readOfStage, false, true);
        update(write ? slot.writeOnStream : slot.readOnStream, c, v);
        update(write ? slot.writeOfStage : slot.readOfStage, stage, v);
      }
  }
  return races;
}

void pipec::reportRaces(const Schedule &s, DiagnosticEngine &diags) {
  reportRaces(s.instances, findRaces(s), diags);
}

void pipec::reportRaces(const Instances &inst, const std::vector<Race> &races,
                        DiagnosticEngine &diags) {
  const program::Pipeline &p = inst.pipeline();
  for (const Race &r : races) {
    if (diags.shouldStop())
      return;
    const program::Stage &a = inst.stage(r.first), &b = inst.stage(r.second);
    const program::Buffer &buffer = p.buffers[r.buffer];
    llvm::SMRange where = b.range;
    for (const program::Access &x : b.accesses)
      if (x.buffer == r.buffer && x.write == r.secondWrites)
        where = x.range;
    const uint32_t itA = inst.iterationOf(r.first), itB = inst.iterationOf(r.second);
    std::string when = p.iterations == 1
                           ? std::string()
                           : itA == itB ? llvm::formatv(" in iteration {0}", itB).str()
                                        : llvm::formatv(" ('{0}' of iteration {1}, "
                                                        "'{2}' of iteration {3})",
                                                        a.name, itA, b.name, itB)
                                              .str();
    std::string fix = itA == itB ? llvm::formatv("depends_on({0})", a.name).str()
                      : itB - itA == 1
                          ? llvm::formatv("depends_on({0}@prev)", a.name).str()
                          : llvm::formatv("depends_on({0}@prev({1}))", a.name, itB - itA)
                                .str();
    diags
        .error(where,
               llvm::formatv("data race on '{0}': '{1}' {2} it and '{3}' {4} it "
                             "with no ordering between them{5}",
                             buffer.name, b.name, r.secondWrites ? "writes" : "reads",
                             a.name, r.firstWrites ? "writes" : "reads", when)
                   .str())
        .attachNote(b.range, llvm::formatv("order them, e.g. add '{0}' to stage "
                                           "'{1}' (or put both on one stream)",
                                           fix, b.name)
                                 .str());
  }
}
