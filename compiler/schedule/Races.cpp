//===- Races.cpp ----------------------------------------------------------===//

#include "compiler/schedule/Races.h"

#include "compiler/schedule/Schedule.h"
#include "compiler/schedule/StreamAssignment.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace pipec;

std::vector<Race> pipec::findRaces(const Schedule &s, size_t maxRaces) {
  return findRaces(s.instances, s.streamPlan.streamOfStage, s.streamPlan.streams, maxRaces);
}

namespace {

constexpr uint32_t kNone = UINT32_MAX;

/// Latest access per key (stream or stage): a few entries, looked through.
using Recent = llvm::SmallVector<std::pair<uint32_t, uint32_t>, 4>;
using ByKey = llvm::SmallDenseMap<uint32_t, uint32_t, 4>;

void setLatest(Recent &list, uint32_t key, uint32_t v) {
  for (auto &entry : list)
    if (entry.first == key) {
      entry.second = v;
      return;
    }
  list.push_back({key, v});
}

/// One slot of one buffer, in issue order of its accesses.
struct Slot {
  /// The latest write that followed every earlier access: whatever follows
  /// it follows them all (kNone: none yet).
  uint32_t seal = kNone;
  /// Since the seal: the latest write and read on each stream.
  Recent recentWrites, recentReads;
  /// Since the start: the latest write and read on each stream and of each
  /// stage, for the accesses that do not follow the seal.
  ByKey writeOnStream, readOnStream, writeOfStage, readOfStage;
};

} // namespace

std::vector<Race> pipec::findRaces(const Instances &inst,
                                   const std::vector<uint32_t> &streamOfStage,
                                   const std::vector<program::Stream> &onStreams,
                                   size_t maxRaces) {
  const program::Pipeline &p = inst.pipeline();
  const size_t n = inst.size();
  // Each device's host thread is one more chain, after the streams: a cpu
  // stage runs in issue order after the ones of its thread before it, and
  // whatever its thread issues after it follows it (host program order).
  const uint32_t host = static_cast<uint32_t>(onStreams.size());
  const uint32_t streams = host + static_cast<uint32_t>(p.deviceCount());
  auto chainOfStage = [&](uint32_t stage) {
    uint32_t c = streamOfStage[stage];
    return c == kHostStream ? host + p.stages[stage].cpu().hostDevice : c;
  };
  // The host thread that issues a chain's stages.
  auto threadChain = [&](uint32_t c) { return c >= host ? c : host + onStreams[c].device; };
  auto streamOf = [&](uint32_t v) { return chainOfStage(inst.stageOf(v)); };
  std::vector<Race> races;
  if (p.buffers.empty() || n == 0 || maxRaces == 0)
    return races;

  // Vector clocks over streams, for a window of instances: clock[v][c] is
  // one more than the position, on stream c, of v's latest ancestor there
  // (v itself included). Predecessors lie within the window.
  const size_t window = std::min(n, inst.reach());
  std::vector<uint32_t> clocks(window * streams, 0);
  std::vector<uint32_t> seq(n), lastOn(streams, kNone), count(streams, 0);
  auto row = [&](uint32_t v) { return &clocks[size_t(v % window) * streams]; };
  auto reaches = [&](uint32_t u, uint32_t v) {
    return u == v || row(v)[streamOf(u)] >= seq[u];
  };

  std::vector<uint64_t> slotBase(p.buffers.size() + 1, 0);
  for (size_t b = 0; b < p.buffers.size(); ++b)
    slotBase[b + 1] = slotBase[b] + p.buffers[b].slots;
  // Made on first access: a ring of many slots costs only the slots used.
  llvm::DenseMap<uint64_t, Slot> slots;

  llvm::DenseSet<uint64_t> reported; // stage pairs
  auto race = [&](uint32_t u, uint32_t v, uint32_t b, bool uWrites, bool vWrites) {
    uint32_t a = inst.stageOf(u), c = inst.stageOf(v);
    uint64_t key = (uint64_t(std::min(a, c)) << 32) | std::max(a, c);
    if (reported.insert(key).second)
      races.push_back({u, v, b, uWrites, vWrites});
  };
  // v against the earlier accesses of one kind: false when one does not
  // reach it. A stage runs on one stream and a stream in order, so where a
  // stream's latest access reaches v every earlier one does; where it does
  // not, each stage of that stream is looked at.
  auto slow = [&](uint32_t v, uint32_t b, uint32_t stream, const ByKey &ofStage,
                  bool earlierWrites, bool vWrites) {
    for (auto [stage, w] : ofStage)
      if (chainOfStage(stage) == stream && !reaches(w, v))
        race(w, v, b, earlierWrites, vWrites);
  };
  auto check = [&](uint32_t v, uint32_t b, Slot &slot, bool earlierWrites, bool vWrites) {
    const ByKey &ofStage = earlierWrites ? slot.writeOfStage : slot.readOfStage;
    bool ordered = true;
    if (slot.seal != kNone && reaches(slot.seal, v)) {
      // Everything before the seal is before v: only what came since.
      for (auto [stream, u] : earlierWrites ? slot.recentWrites : slot.recentReads)
        if (!reaches(u, v)) {
          ordered = false;
          slow(v, b, stream, ofStage, earlierWrites, vWrites);
        }
      return ordered;
    }
    for (auto [stream, u] : earlierWrites ? slot.writeOnStream : slot.readOnStream)
      if (!reaches(u, v)) {
        ordered = false;
        slow(v, b, stream, ofStage, earlierWrites, vWrites);
      }
    return ordered;
  };

  for (uint32_t v = 0; v < n && races.size() < maxRaces; ++v) {
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
    if (lastOn[c] != kNone)
      join(lastOn[c]);
    if (const uint32_t t = threadChain(c); c != t && lastOn[t] != kNone)
      join(lastOn[t]);
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
        Slot &slot = slots[slotBase[a.buffer] + a.slot(it, p.buffers[a.buffer].slots)];
        bool ordered = check(v, a.buffer, slot, true, write);
        if (write)
          ordered &= check(v, a.buffer, slot, false, true);
        (write ? slot.writeOnStream : slot.readOnStream)[c] = v;
        (write ? slot.writeOfStage : slot.readOfStage)[stage] = v;
        if (write && ordered) {
          // v follows every earlier access: the new seal.
          slot.seal = v;
          slot.recentWrites.assign(1, {c, v});
          slot.recentReads.clear();
        } else {
          setLatest(write ? slot.recentWrites : slot.recentReads, c, v);
        }
      }
  }
  if (races.size() > maxRaces)
    races.resize(maxRaces);
  return races;
}

void pipec::reportRaces(const Schedule &s, DiagnosticEngine &diags) {
  reportRaces(s.instances, findRaces(s, diags.errorsLeft()), diags);
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
    std::string when = p.iterations == 1 ? std::string()
                       : itA == itB      ? llvm::formatv(" in iteration {0}", itB).str()
                                         : llvm::formatv(" ('{0}' of iteration {1}, "
                                                              "'{2}' of iteration {3})",
                                                         a.name, itA, b.name, itB)
                                          .str();
    // (In the words of the file: a collective by its name, not its part's.)
    const llvm::StringRef first = program::declaredName(a), second = program::declaredName(b);
    std::string fix = itA == itB ? llvm::formatv("depends_on({0})", first).str()
                      : itB - itA == 1
                          ? llvm::formatv("depends_on({0}@prev)", first).str()
                          : llvm::formatv("depends_on({0}@prev({1}))", first, itB - itA).str();
    // One stream: neither on the host thread, nor a collective's part, and
    // both on one device.
    auto deviceOf = [&](const program::Stage &st) {
      return st.stream < 0 ? 0u : p.streams[st.stream].device;
    };
    const bool oneStream = !onHostThread(a.kind()) && !onHostThread(b.kind()) &&
                           program::collectiveParts(a) <= 1 &&
                           program::collectiveParts(b) <= 1 && deviceOf(a) == deviceOf(b);
    diags
        .error(where, llvm::formatv("data race on '{0}': '{1}' {2} it and '{3}' {4} it "
                                    "with no ordering between them{5}",
                                    buffer.name, b.name, r.secondWrites ? "writes" : "reads",
                                    a.name, r.firstWrites ? "writes" : "reads", when)
                          .str())
        .attachNote(b.range,
                    llvm::formatv("order them, e.g. add '{0}' to stage '{1}'{2}", fix, second,
                                  oneStream ? " (or put both on one stream)" : "")
                        .str());
  }
}
