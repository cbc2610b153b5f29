//===- Periodic.cpp -------------------------------------------------------===//

#include "model/Periodic.h"

#include <algorithm>
#include <limits>

using namespace pipec;
using namespace pipec::sim;

namespace {

constexpr uint32_t kNone = std::numeric_limits<uint32_t>::max();
/// Fewer repeating blocks than this are not worth the model's comparisons.
constexpr uint32_t kMinBlocks = 8;

/// Whether op `o` is op `o - ops` shifted by `instances` and `ops`.
bool repeats(const std::vector<Op> &list, const std::vector<uint32_t> &bound, uint64_t o,
             uint64_t ops, uint32_t instances) {
  const Op &a = list[o], &b = list[o - ops];
  if (a.kind != b.kind || a.stream != b.stream || a.kind == Op::GraphLaunch)
    return false;
  if ((a.instance == kNone) != (b.instance == kNone) ||
      (a.instance != kNone && a.instance != b.instance + instances))
    return false;
  if ((bound[o] == kNone) != (bound[o - ops] == kNone) ||
      (bound[o] != kNone && bound[o] != bound[o - ops] + ops))
    return false;
  return true;
}

/// The longest run of blocks among 1 .. blocks - 1 that each repeat the
/// one before (`repeats(b)`), as [first, end); empty when there is none.
template <typename Repeats>
std::pair<uint32_t, uint32_t> longestRun(uint32_t blocks, Repeats repeats) {
  uint32_t bestFirst = 0, bestEnd = 0, runFirst = 1;
  for (uint32_t b = 1; b < blocks; ++b) {
    if (!repeats(b)) {
      runFirst = b + 1;
      continue;
    }
    if (b + 1 - runFirst > bestEnd - bestFirst) {
      bestFirst = runFirst;
      bestEnd = b + 1;
    }
  }
  return {bestFirst, bestEnd};
}

} // namespace

Periodicity sim::findPeriodicity(const Schedule &s, const std::vector<Op> &list,
                                 const std::vector<uint32_t> &bound) {
  const uint32_t perIteration = s.instances.stagesPerIteration();
  const uint32_t iterations = s.instances.iterations();
  // Blocks are whole iterations of equal instances: with conditional
  // stages they are not (the replay is simulated whole).
  if (iterations < 16 || perIteration == 0 || list.empty() ||
      s.instances.hasConditionalStages())
    return {};
  for (uint32_t m = 1; m <= 4; ++m) {
    const uint32_t blocks = iterations / m;
    const uint64_t instances = uint64_t(m) * perIteration;
    if (blocks < kMinBlocks + 2 || instances > kNone)
      break;
    // Where each block starts: the call that issues its first instance.
    std::vector<uint64_t> start(blocks + 1, list.size());
    for (uint64_t o = 0; o < list.size(); ++o) {
      const Op &op = list[o];
      if ((op.kind == Op::Launch || op.kind == Op::Cpu) && op.instance % instances == 0 &&
          op.instance / instances < blocks)
        start[op.instance / instances] = o;
    }
    auto [bestFirst, bestEnd] = longestRun(blocks, [&](uint32_t b) {
      const uint64_t ops = start[b] - start[b - 1];
      bool same = start[b + 1] - start[b] == ops && ops > 0;
      for (uint64_t o = start[b]; same && o < start[b + 1]; ++o)
        same = repeats(list, bound, o, ops, static_cast<uint32_t>(instances));
      return same;
    });
    if (bestEnd - bestFirst < kMinBlocks)
      continue;
    Periodicity p;
    p.iterations = m;
    p.instances = static_cast<uint32_t>(instances);
    p.ops = start[bestFirst] - start[bestFirst - 1];
    p.first = bestFirst;
    p.end = bestEnd;
    p.firstOp = start[bestFirst];
    for (uint64_t o = start[bestFirst - 1]; o < start[bestEnd]; ++o)
      if (bound[o] != kNone)
        p.reach = std::max<uint64_t>(p.reach, o - bound[o]);
    return p;
  }
  return {};
}

Periodicity sim::findGraphPeriodicity(const Schedule &s, const CSR &successors,
                                      const std::vector<uint32_t> &indegree) {
  const uint32_t perIteration = s.instances.stagesPerIteration();
  const uint32_t iterations = s.instances.iterations();
  if (iterations < 16 || perIteration == 0 || s.instances.hasConditionalStages())
    return {};
  auto same = [&](uint64_t v, uint64_t shift) {
    const uint64_t u = v - shift;
    if (s.instanceStream[v] != s.instanceStream[u] || indegree[v] != indegree[u])
      return false;
    llvm::ArrayRef<uint32_t> a = successors.row(v), b = successors.row(u);
    if (a.size() != b.size())
      return false;
    for (size_t i = 0; i < a.size(); ++i)
      if (uint64_t(a[i]) != b[i] + shift)
        return false;
    return true;
  };
  for (uint32_t m = 1; m <= 4; ++m) {
    const uint32_t blocks = iterations / m;
    const uint64_t instances = uint64_t(m) * perIteration;
    if (blocks < kMinBlocks + 2 || instances > kNone)
      break;
    auto [bestFirst, bestEnd] = longestRun(blocks, [&](uint32_t b) {
      bool repeat = true;
      for (uint64_t v = b * instances; repeat && v < (b + 1) * instances; ++v)
        repeat = same(v, instances);
      return repeat;
    });
    if (bestEnd - bestFirst < kMinBlocks)
      continue;
    Periodicity p;
    p.iterations = m;
    p.instances = static_cast<uint32_t>(instances);
    p.first = bestFirst;
    p.end = bestEnd;
    return p;
  }
  return {};
}
