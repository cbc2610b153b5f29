//===- DataInference.cpp - The dependencies the data needs ----------------===//

#include "compiler/sema/Sema.h"

#include <algorithm>

using namespace pipec;
using namespace pipec::program;

/// A buffer some stage accesses only in some iterations (a buffer of one
/// slot: Sema rejects rings). A dependency on such a stage is on its latest
/// instance, and every instance of a stage is ordered after the one before
/// (one stream, or the host thread): so a read depends on the writers since
/// the last write of a stage that runs in every iteration (that one too),
/// and a write on those and on the readers since. A write that may not run
/// hides nothing before it.
template <typename Add>
static void inferWithConditionalStages(const Pipeline &out, const std::vector<uint8_t> &reads,
                                       const std::vector<uint8_t> &writes, uint32_t n,
                                       Add add) {
  const uint32_t m = static_cast<uint32_t>(out.stages.size());
  auto always = [&](uint32_t k) { return out.stages[k].runs.always(); };
  // What an iteration leaves for the next: from its last write by a stage
  // that always runs, else everything (the writes may all have been skipped).
  int64_t lastAlways = -1;
  for (uint32_t k = 0; k < m; ++k)
    if (writes[k] && always(k))
      lastAlways = k;
  std::vector<std::pair<uint32_t, uint32_t>> writers, readers; // (stage, distance)
  for (uint32_t k = 0; k < m; ++k) {
    if (writes[k] && int64_t(k) >= lastAlways)
      writers.push_back({k, n});
    if (reads[k] && int64_t(k) > lastAlways)
      readers.push_back({k, n});
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
  for (uint32_t k = 0; k < m; ++k) {
    if (reads[k])
      depend(k, writers);
    if (writes[k]) {
      depend(k, writers);
      depend(k, readers);
      if (always(k)) {
        writers.clear();
        readers.clear();
      }
      push(writers, k);
    }
    if (reads[k])
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
  const uint32_t m = static_cast<uint32_t>(out.stages.size());
  for (uint32_t b = 0; b < out.buffers.size(); ++b) {
    const uint32_t n = out.buffers[b].slots;
    std::vector<uint8_t> reads(m, 0), writes(m, 0);
    // Reads of `@prev(K)`, by stage: (stage, K).
    std::vector<std::pair<uint32_t, uint32_t>> earlier;
    for (uint32_t k = 0; k < m; ++k)
      for (const Access &a : out.stages[k].accesses)
        if (a.buffer == b && a.distance)
          earlier.push_back({k, a.distance});
        else if (a.buffer == b)
          (a.write ? writes : reads)[k] = 1;
    int64_t lastWriter = -1;
    for (uint32_t k = 0; k < m; ++k)
      if (writes[k])
        lastWriter = k;
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
    for (uint32_t k = 0; k < m; ++k)
      conditional |= (reads[k] || writes[k]) && !out.stages[k].runs.always();
    if (conditional) {
      inferWithConditionalStages(out, reads, writes, n, add);
      continue;
    }
    int64_t writerBefore = -1;              // the last writer declared before k
    std::vector<uint32_t> readersSince;     // readers after writerBefore
    std::vector<uint32_t> readersAfterLast; // readers after lastWriter
    for (uint32_t k = 0; k < m; ++k)
      if (reads[k] && int64_t(k) > lastWriter)
        readersAfterLast.push_back(k);
    for (uint32_t k = 0; k < m; ++k) {
      if (!reads[k] && !writes[k])
        continue;
      if (reads[k]) {
        if (writerBefore >= 0)
          add(k, static_cast<uint32_t>(writerBefore), 0);
        else if (lastWriter >= 0)
          add(k, static_cast<uint32_t>(lastWriter), n);
      }
      if (writes[k]) {
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
      if (reads[k])
        readersSince.push_back(k);
    }
    // A read of `@prev(K)` in iteration i reads slot (i - K) mod n (K < n):
    // what the last writer of iteration i - K left there (distance K), and
    // the first writer of iteration i - K + n, the next to write it, waits
    // for the read (distance n - K). This iteration's writes go elsewhere.
    int64_t firstWriter = -1;
    for (uint32_t k = 0; k < m && firstWriter < 0; ++k)
      if (writes[k])
        firstWriter = k;
    for (auto [k, distance] : earlier) {
      if (lastWriter < 0)
        continue; // it reads what the buffer held before the pipeline
      add(k, static_cast<uint32_t>(lastWriter), distance);
      add(static_cast<uint32_t>(firstWriter), k, n - distance);
    }
  }
}
