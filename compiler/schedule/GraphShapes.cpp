//===- GraphShapes.cpp - Which segments of the graph lowering are one graph ===//

#include "compiler/schedule/GraphShapes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Hashing.h"

using namespace pipec;

std::vector<uint32_t> pipec::sameGraphAs(const Schedule &s, uint32_t &distinct) {
  const uint32_t segments = std::max(1u, s.segments);
  const size_t n = s.instances.size();
  // Each segment's nodes in instance order, and each node's place there.
  std::vector<uint32_t> count(segments + 1, 0), place(n, 0);
  for (uint32_t v = 0; v < n; ++v)
    if (s.segmentOf[v] != kNoSegment)
      place[v] = count[s.segmentOf[v] + 1]++;
  std::vector<uint32_t> begin(segments + 1, 0);
  for (uint32_t g = 0; g < segments; ++g)
    begin[g + 1] = begin[g] + count[g + 1];
  std::vector<uint32_t> nodes(begin.back());
  for (uint32_t v = 0; v < n; ++v)
    if (s.segmentOf[v] != kNoSegment)
      nodes[begin[s.segmentOf[v]] + place[v]] = v;

  uint32_t events = 0;
  const std::vector<uint32_t> eventOf = s.graphEventOf(events);
  const program::Pipeline &p = s.pipeline;
  // A segment's shape, written out: per node its stage, the ring slots it
  // touches, whether a record node follows it, its edges within the segment
  // (by place) and its waits (segments back, place there).
  auto shape = [&](uint32_t g, std::vector<uint64_t> &out) {
    out.clear();
    for (uint32_t i = begin[g]; i < begin[g + 1]; ++i) {
      const uint32_t v = nodes[i];
      const program::Stage &st = s.instances.stage(v);
      out.push_back(s.instances.stageOf(v));
      for (const program::Access &a : st.accesses)
        if (p.buffers[a.buffer].slots > 1)
          out.push_back(a.slot(s.instances.iterationOf(v), p.buffers[a.buffer].slots));
      out.push_back(eventOf[v] != UINT32_MAX);
      llvm::ArrayRef<uint32_t> within = s.graphPredecessors().row(v);
      out.push_back(within.size());
      for (uint32_t u : within)
        out.push_back(place[u]);
      llvm::ArrayRef<uint32_t> waits =
          s.graphWaits().rows() ? s.graphWaits().row(v) : llvm::ArrayRef<uint32_t>();
      out.push_back(waits.size());
      for (uint32_t u : waits) {
        out.push_back(g - s.segmentOf[u]);
        out.push_back(place[u]);
      }
    }
  };
  std::vector<uint32_t> same(segments);
  llvm::DenseMap<uint64_t, llvm::SmallVector<uint32_t, 1>> byHash;
  std::vector<std::vector<uint64_t>> kept; // the shape of each distinct graph
  std::vector<uint32_t> keptSegment;
  std::vector<uint64_t> mine;
  distinct = 0;
  for (uint32_t g = 0; g < segments; ++g) {
    shape(g, mine);
    const uint64_t h = llvm::hash_combine_range(mine.begin(), mine.end());
    llvm::SmallVector<uint32_t, 1> &candidates = byHash[h];
    same[g] = g;
    for (uint32_t k : candidates)
      if (kept[k] == mine) {
        same[g] = keptSegment[k];
        break;
      }
    if (same[g] == g) {
      candidates.push_back(static_cast<uint32_t>(kept.size()));
      kept.push_back(mine);
      keptSegment.push_back(g);
      ++distinct;
    }
  }
  return same;
}
