//===- Meaning.cpp --------------------------------------------------------===//

#include "compiler/schedule/Meaning.h"

#include "compiler/schedule/Races.h"
#include "compiler/schedule/Schedule.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace pipec;
using llvm::formatv;

namespace {

constexpr uint32_t kNone = UINT32_MAX;

/// An ordering the original states, between instances of the changed one.
struct Required {
  uint32_t from, to; ///< instances of `after`
  uint32_t beforeFrom, beforeTo;
  bool declared; ///< a dependency (else stream order)
};

/// `X[i]` read `b` as written by: per (stage, iteration, buffer) of each
/// read, the writer's (stage, iteration), or none; in program order.
using Writers = std::vector<std::pair<uint32_t, uint32_t>>;

/// Up to this many slots in all, a buffer slot's last writer is kept in a
/// flat table (a lookup per access of every instance: a hash map's cost
/// was most of advise's on a long pipeline of rings); past it, in a map.
constexpr uint64_t kFlatSlots = uint64_t(1) << 22;

Writers writersOf(const program::Pipeline &p) {
  Writers out;
  std::vector<uint64_t> base(p.buffers.size() + 1, 0);
  for (size_t b = 0; b < p.buffers.size(); ++b)
    base[b + 1] = base[b] + p.buffers[b].slots;
  const bool flat = base.back() <= kFlatSlots;
  std::vector<std::pair<uint32_t, uint32_t>> table(flat ? base.back() : 0, {kNone, kNone});
  llvm::DenseMap<uint64_t, std::pair<uint32_t, uint32_t>> last; // (buffer, slot)
  for (uint32_t it = 0; it < p.iterations; ++it)
    for (uint32_t k = 0; k < p.stages.size(); ++k)
      for (bool write : {false, true})
        for (const program::Access &a : p.stages[k].accesses) {
          if (a.write != write)
            continue;
          const uint32_t slot = a.slot(it, p.buffers[a.buffer].slots);
          if (flat) {
            std::pair<uint32_t, uint32_t> &w = table[base[a.buffer] + slot];
            if (write)
              w = {k, it};
            else
              out.push_back(w);
            continue;
          }
          const uint64_t key = (uint64_t(a.buffer) << 32) | slot;
          if (write) {
            last[key] = {k, it};
          } else {
            auto found = last.find(key);
            out.push_back(found == last.end() ? std::make_pair(kNone, kNone) : found->second);
          }
        }
  return out;
}

/// Each stage of `p` as its namesake in `q`; none when they differ in
/// stages or iterations. A pageable copy's wait in `p` whose copy `q`
/// pins has none (kNone): pinning takes the host's wait away, and nothing
/// the program states rests on it (the data's orderings are the data's).
std::optional<std::vector<uint32_t>> stagesByName(const program::Pipeline &p,
                                                  const program::Pipeline &q) {
  if (p.iterations != q.iterations)
    return std::nullopt;
  llvm::StringMap<uint32_t> in;
  for (uint32_t k = 0; k < q.stages.size(); ++k)
    in[q.stages[k].name] = k;
  std::vector<uint32_t> map(p.stages.size());
  size_t mapped = 0;
  for (uint32_t k = 0; k < p.stages.size(); ++k) {
    auto it = in.find(p.stages[k].name);
    if (it == in.end()) {
      if (!program::isPageableWait(p.stages[k]) || k == 0)
        return std::nullopt;
      auto copy = in.find(p.stages[k - 1].name);
      if (copy == in.end() || program::isPageableCopy(q.stages[copy->second]))
        return std::nullopt;
      map[k] = kNone;
      continue;
    }
    map[k] = it->second;
    ++mapped;
  }
  if (mapped != q.stages.size())
    return std::nullopt;
  return map;
}

} // namespace

std::vector<DroppedOrdering> pipec::droppedOrderings(const Schedule &before,
                                                     const Schedule &after, size_t limit) {
  std::vector<DroppedOrdering> out;
  std::optional<std::vector<uint32_t>> stageMap =
      stagesByName(before.pipeline, after.pipeline);
  if (!stageMap || limit == 0)
    return out;
  const Instances &bi = before.instances, &ai = after.instances;
  auto map = [&](uint32_t v) {
    return ai.idOf((*stageMap)[bi.stageOf(v)], bi.iterationOf(v));
  };
  auto kept = [&](uint32_t v) { return (*stageMap)[bi.stageOf(v)] != kNone; };

  // The orderings the original states, as instances of the changed one.
  std::vector<Required> required;
  {
    std::vector<uint32_t> lastOn(before.hostChain() + 1, kNone);
    for (uint32_t v = 0; v < bi.size(); ++v) {
      llvm::ArrayRef<uint32_t> deps = bi.deps().row(v);
      for (size_t e = 0; e < deps.size(); ++e)
        if (bi.inferredFrom(bi.deps().begin[v] + e) < 0 && kept(deps[e]) && kept(v))
          required.push_back({map(deps[e]), map(v), deps[e], v, true});
      if (before.onHost(v))
        continue; // host order: the same in both
      uint32_t &prev = lastOn[before.streamOf(v)];
      if (prev != kNone && (bi.stage(prev).accesses.empty() || bi.stage(v).accesses.empty()))
        required.push_back({map(prev), map(v), prev, v, false});
      prev = v;
    }
  }
  std::sort(required.begin(), required.end(),
            [](const Required &a, const Required &b) { return a.to < b.to; });

  // Happens-before in the changed schedule: vector clocks over its chains
  // (streams, then the host thread) for a window of instances.
  const size_t n = ai.size();
  const uint32_t chains = after.hostChain() + 1;
  const size_t window =
      std::min(n, std::max(ai.reach(), bi.reach()) + ai.stagesPerIteration());
  std::vector<uint32_t> clocks(window * chains, 0), seq(n, 0), count(chains, 0),
      lastOn(chains, kNone);
  auto row = [&](uint32_t v) { return &clocks[size_t(v % window) * chains]; };
  auto chainOf = [&](uint32_t v) {
    return after.onHost(v) ? after.hostChain() : after.streamOf(v);
  };
  auto reaches = [&](uint32_t u, uint32_t v) {
    return u < v && v - u < n && seq[u] != 0 && row(v)[chainOf(u)] >= seq[u];
  };
  size_t next = 0;
  for (uint32_t v = 0; v < n; ++v) {
    uint32_t *mine = row(v);
    std::fill(mine, mine + chains, 0);
    auto join = [&](uint32_t u) {
      const uint32_t *theirs = row(u);
      for (uint32_t c = 0; c < chains; ++c)
        mine[c] = std::max(mine[c], theirs[c]);
    };
    for (uint32_t u : ai.deps().row(v))
      join(u);
    const uint32_t c = chainOf(v);
    if (lastOn[c] != kNone)
      join(lastOn[c]);
    if (c != after.hostChain() && lastOn[after.hostChain()] != kNone)
      join(lastOn[after.hostChain()]);
    seq[v] = ++count[c];
    mine[c] = seq[v];
    lastOn[c] = v;
    for (; next < required.size() && required[next].to == v; ++next) {
      const Required &r = required[next];
      if (!reaches(r.from, v)) {
        out.push_back({r.beforeFrom, r.beforeTo, r.declared});
        if (out.size() >= limit)
          return out;
      }
    }
  }
  return out;
}

std::optional<std::string> pipec::changedMeaning(const Schedule &before,
                                                 const Schedule &after) {
  const program::Pipeline &p = before.pipeline, &q = after.pipeline;
  std::optional<std::vector<uint32_t>> byName = stagesByName(p, q);
  if (!byName)
    return std::string("it has other stages or iterations");
  const std::vector<uint32_t> &stageMap = *byName;
  for (uint32_t k = 0; k < p.stages.size(); ++k)
    if (stageMap[k] != kNone &&
        p.stages[k].accesses.size() != q.stages[stageMap[k]].accesses.size())
      return formatv("stage '{0}' is not the same", p.stages[k].name).str();
  const Instances &bi = before.instances, &ai = after.instances;

  // Which write each read sees, in program order (declaration order: the
  // stages keep theirs, and every access its buffer by name).
  for (uint32_t k = 0; k < p.stages.size(); ++k)
    for (size_t a = 0; a < p.stages[k].accesses.size() && stageMap[k] != kNone; ++a) {
      const program::Access &x = p.stages[k].accesses[a],
                            &y = q.stages[stageMap[k]].accesses[a];
      if (x.write != y.write || p.buffers[x.buffer].name != q.buffers[y.buffer].name)
        return formatv("stage '{0}' accesses other buffers", p.stages[k].name).str();
    }
  if (!p.buffers.empty()) {
    // The same declaration order: the stages kept in order (a pinned
    // copy's wait, which touches nothing, gone).
    bool sameOrder = true;
    uint32_t expected = 0;
    for (uint32_t k = 0; k < p.stages.size(); ++k)
      if (stageMap[k] != kNone)
        sameOrder &= stageMap[k] == expected++;
    Writers was = writersOf(p), is = writersOf(q);
    for (auto &w : was)
      if (w.first != kNone)
        w.first = stageMap[w.first];
    if (sameOrder && was != is) {
      // Name the first read whose write changes.
      size_t i = 0;
      for (uint32_t it = 0; it < p.iterations; ++it)
        for (uint32_t k = 0; k < p.stages.size(); ++k)
          for (const program::Access &a : p.stages[k].accesses) {
            if (a.write)
              continue;
            if (was[i] != is[i]) {
              auto who = [&](std::pair<uint32_t, uint32_t> w) {
                return w.first == kNone ? std::string("no stage (its value before the "
                                                      "pipeline)")
                                        : formatv("'{0}' of iteration {1}",
                                                  q.stages[w.first].name, w.second)
                                              .str();
              };
              return formatv("'{0}' of iteration {1} would read '{2}' as written by {3}, "
                             "not by {4}",
                             p.stages[k].name, it, p.buffers[a.buffer].name, who(is[i]),
                             who(was[i]))
                  .str();
            }
            ++i;
          }
    } else if (!sameOrder) {
      return std::string("its stages are declared in another order");
    }
  }

  std::vector<DroppedOrdering> dropped = droppedOrderings(before, after, 1);
  if (!dropped.empty()) {
    const DroppedOrdering &d = dropped.front();
    if (d.declared)
      return formatv("it drops the dependency of '{0}' on '{1}'", bi.name(d.to),
                     bi.name(d.from))
          .str();
    return formatv("'{0}' would no longer follow '{1}', which stream '{2}' orders before "
                   "it (their data is not declared: add reads() and writes(), or a "
                   "dependency, to let them apart)",
                   bi.name(d.to), bi.name(d.from), before.stream(before.streamOf(d.to)).name)
        .str();
  }

  // No race: in `sync inferred` the data's orderings are inferred; in
  // `sync declared` they must be there already.
  if (q.syncDeclared) {
    std::vector<Race> races = findRaces(after, 1);
    if (!races.empty())
      return formatv("'{0}' and '{1}' would race on '{2}'", ai.name(races[0].first),
                     ai.name(races[0].second), q.buffers[races[0].buffer].name)
          .str();
  }
  return std::nullopt;
}
