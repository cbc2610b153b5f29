//===- DataInference.cpp - The dependencies the data needs ----------------===//

#include "compiler/sema/Sema.h"

#include <algorithm>

using namespace pipec;
using namespace pipec::program;

namespace {
/// A stage's accesses of one buffer (this iteration's slot).
struct Touch {
  uint32_t stage;
  bool read, write;
};
} // namespace

/// A buffer some stage accesses only in some iterations (a buffer of one
/// slot: Sema rejects rings). A dependency on such a stage is on its latest
/// instance, and every instance of a stage is ordered after the one before
/// (one stream, or the host thread): so a read depends on the writers since
/// the last write of a stage that runs in every iteration (that one too),
/// and a write on those and on the readers since. A write that may not run
/// hides nothing before it.
template <typename Add>
static void inferWithConditionalStages(const Pipeline &out, const std::vector<Touch> &touches,
                                       uint32_t n, Add add) {
  auto always = [&](uint32_t k) { return out.stages[k].runs.always(); };
  // What an iteration leaves for the next: from its last write by a stage
  // that always runs, else everything (the writes may all have been skipped).
  int64_t lastAlways = -1;
  for (const Touch &t : touches)
    if (t.write && always(t.stage))
      lastAlways = t.stage;
  std::vector<std::pair<uint32_t, uint32_t>> writers, readers; // (stage, distance)
  for (const Touch &t : touches) {
    if (t.write && int64_t(t.stage) >= lastAlways)
      writers.push_back({t.stage, n});
    if (t.read && int64_t(t.stage) > lastAlways)
      readers.push_back({t.stage, n});
  }
  // A stage that runs only in the first iteration has nothing before it.
  auto onlyFirst = [&](uint32_t k) {
    const RunCondition &r = out.stages[k].runs;
    return r.first && !r.last && r.every == 0;
  };
  auto depend = [&](uint32_t k, const std::vector<std::pair<uint32_t, uint32_t>> &on) {
    for (auto [u, d] : on)
      if (!(d > 0 && onlyFirst(k)))
        add(k, u, d);
  };
  // This iteration's access of a stage stands for the earlier ones: its
  // instances are in order.
  auto push = [](std::vector<std::pair<uint32_t, uint32_t>> &list, uint32_t k) {
    list.erase(
        std::remove_if(list.begin(), list.end(), [k](const auto &e) { return e.first == k; }),
        list.end());
    list.push_back({k, 0});
  };
  for (const Touch &t : touches) {
    const uint32_t k = t.stage;
    if (t.read)
      depend(k, writers);
    if (t.write) {
      depend(k, writers);
      depend(k, readers);
      if (always(k)) {
        writers.clear();
        readers.clear();
      }
      push(writers, k);
    }
    if (t.read)
      push(readers, k);
  }
}

/// `sync inferred`: the dependencies the data needs (docs/language.md, version 2).
/// Program order is declaration order, iteration after iteration; the slot
/// of iteration i is i mod n, so the accesses before one to that slot are
/// those earlier in iteration i (distance 0) and those of iteration i - n
/// (distance n, which refers to nothing in iterations 0 .. n-1, as the
/// contract asks).
void pipec::inferDataDependencies(Pipeline &out) {
  // Each buffer's accesses, in declaration order (one pass over the
  // stages: the work follows the accesses, not buffers times stages).
  std::vector<std::vector<Touch>> touchesOf(out.buffers.size());
  // Reads of `@prev(K)`, by buffer: (stage, K).
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> earlierOf(out.buffers.size());
  for (uint32_t k = 0; k < out.stages.size(); ++k)
    for (const Access &a : out.stages[k].accesses) {
      if (a.distance) {
        earlierOf[a.buffer].push_back({k, a.distance});
        continue;
      }
      std::vector<Touch> &list = touchesOf[a.buffer];
      if (list.empty() || list.back().stage != k)
        list.push_back({k, false, false});
      (a.write ? list.back().write : list.back().read) = true;
    }
  for (uint32_t b = 0; b < out.buffers.size(); ++b) {
    const uint32_t n = out.buffers[b].slots;
    const std::vector<Touch> &touches = touchesOf[b];
    const std::vector<std::pair<uint32_t, uint32_t>> &earlier = earlierOf[b];
    int64_t lastWriter = -1;
    for (const Touch &t : touches)
      if (t.write)
        lastWriter = t.stage;
    auto add = [&](uint32_t k, uint32_t on, uint32_t distance) {
      if (on == k && distance == 0)
        return;
      for (const Dependency &d : out.stages[k].deps)
        if (d.stage == on && d.distance == distance)
          return; // declared, or already inferred
      Dependency d;
      d.stage = on;
      d.distance = distance;
      d.range = out.stages[k].range;
      d.inferredFrom = static_cast<int32_t>(b);
      out.stages[k].deps.push_back(d);
    };
    bool conditional = false;
    for (const Touch &t : touches)
      conditional |= !out.stages[t.stage].runs.always();
    if (conditional) {
      inferWithConditionalStages(out, touches, n, add);
      continue;
    }
    int64_t writerBefore = -1;              // the last writer declared before k
    std::vector<uint32_t> readersSince;     // readers after writerBefore
    std::vector<uint32_t> readersAfterLast; // readers after lastWriter
    for (const Touch &t : touches)
      if (t.read && int64_t(t.stage) > lastWriter)
        readersAfterLast.push_back(t.stage);
    for (const Touch &t : touches) {
      const uint32_t k = t.stage;
      if (t.read) {
        if (writerBefore >= 0)
          add(k, static_cast<uint32_t>(writerBefore), 0);
        else if (lastWriter >= 0)
          add(k, static_cast<uint32_t>(lastWriter), n);
      }
      if (t.write) {
        if (writerBefore >= 0) {
          add(k, static_cast<uint32_t>(writerBefore), 0);
        } else {
          add(k, static_cast<uint32_t>(lastWriter), n);
          for (uint32_t r : readersAfterLast)
            add(k, r, n);
        }
        for (uint32_t r : readersSince)
          add(k, r, 0);
        writerBefore = k;
        readersSince.clear();
      }
      if (t.read)
        readersSince.push_back(k);
    }
    // A read of `@prev(K)` in iteration i reads slot (i - K) mod n (K < n):
    // what the last writer of iteration i - K left there (distance K), and
    // the first writer of iteration i - K + n, the next to write it, waits
    // for the read (distance n - K). This iteration's writes go elsewhere.
    int64_t firstWriter = -1;
    for (size_t i = 0; i < touches.size() && firstWriter < 0; ++i)
      if (touches[i].write)
        firstWriter = touches[i].stage;
    for (auto [k, distance] : earlier) {
      if (lastWriter < 0)
        continue; // it reads what the buffer held before the pipeline
      add(k, static_cast<uint32_t>(lastWriter), distance);
      add(static_cast<uint32_t>(firstWriter), k, n - distance);
    }
  }
}
