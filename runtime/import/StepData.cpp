//===- StepData.cpp - A step's data, from the execution trace -------------===//

#include "runtime/import/StepData.h"

#include "compiler/support/Fail.h"
#include "runtime/import/StepBuild.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

using namespace pipec;
using namespace pipec::importer;

llvm::StringRef importer::linkMethodName(DataLink::By by) {
  switch (by) {
  case DataLink::By::RecordFunctionId:
    return "record-function id";
  case DataLink::By::ExternalId:
    return "External id";
  case DataLink::By::Alignment:
    return "alignment of the op sequences";
  }
  return "";
}

namespace {

constexpr uint32_t kNoName = UINT32_MAX;

/// Each framework op's name as the execution trace's name index (kNoName:
/// a name the execution trace never records).
std::vector<uint32_t> etNamesOf(const CpuOps &cpuOps, const ExecutionTrace &et) {
  std::vector<uint32_t> byName(cpuOps.names.size(), kNoName);
  for (size_t i = 0; i < cpuOps.names.size(); ++i) {
    auto it = et.nameIndex.find(cpuOps.names[i]);
    if (it != et.nameIndex.end())
      byName[i] = it->second;
  }
  return byName;
}

/// By an id both record (Record function id or External id against rf_id),
/// where the names agree.
std::vector<int32_t> linkByIds(const CpuOps &cpuOps, const ExecutionTrace &et, bool rfIds,
                               const std::vector<uint32_t> &etName, uint64_t &linked) {
  llvm::DenseMap<int64_t, uint32_t> byId;
  for (uint32_t j = 0; j < et.ops.size(); ++j)
    if (et.ops[j].rfId >= 0 && et.ops[j].rfId < INT64_MAX - 1)
      byId.try_emplace(et.ops[j].rfId, j);
  std::vector<int32_t> link(cpuOps.ops.size(), -1);
  for (size_t i = 0; i < cpuOps.ops.size(); ++i) {
    const CpuOp &op = cpuOps.ops[i];
    const int64_t id = rfIds ? op.recordFunctionId : op.externalId;
    if (id < 0 || id >= INT64_MAX - 1)
      continue;
    auto it = byId.find(id);
    if (it != byId.end() && etName[op.name] == et.ops[it->second].name) {
      link[i] = int32_t(it->second);
      ++linked;
    }
  }
  return link;
}

/// By aligning the sequences: the Kineto trace's framework ops in the order
/// they began (External ids count them so), the execution trace's one
/// iteration over and over.
std::vector<int32_t> linkByAlignment(const CpuOps &cpuOps, const ExecutionTrace &et,
                                     const std::vector<uint32_t> &etName, uint64_t &linked) {
  const size_t n = cpuOps.ops.size(), m = et.ops.size();
  std::vector<int32_t> link(n, -1);
  if (m == 0)
    return link;
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  const bool ids = std::all_of(cpuOps.ops.begin(), cpuOps.ops.end(),
                               [](const CpuOp &op) { return op.externalId >= 0; });
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const CpuOp &x = cpuOps.ops[a], &y = cpuOps.ops[b];
    if (ids && x.externalId != y.externalId)
      return x.externalId < y.externalId;
    if (x.ts != y.ts)
      return x.ts < y.ts;
    return x.dur > y.dur; // the enclosing op first
  });
  std::vector<uint32_t> k(n); // the Kineto sequence, as execution-trace names
  for (size_t i = 0; i < n; ++i)
    k[i] = etName[cpuOps.ops[order[i]].name];
  auto e = [&](size_t j) { return et.ops[j % m].name; };
  // Every run of `run` names in the iteration (read round its end), and
  // where it starts when it occurs once (-1: more often).
  const size_t run = std::min(kAlignRun, m);
  auto hashOf = [&](auto nameAt) {
    uint64_t h = 1469598103934665603ull;
    for (size_t t = 0; t < run; ++t)
      h = (h ^ nameAt(t)) * 1099511628211ull;
    return h;
  };
  std::unordered_map<uint64_t, int64_t> starts;
  for (size_t j = 0; j < m; ++j) {
    auto [it, added] = starts.try_emplace(hashOf([&](size_t t) { return e(j + t); }), j);
    if (!added)
      it->second = -1;
  }
  auto runAt = [&](size_t i) -> int64_t {
    if (i + run > n || k[i] == kNoName)
      return -1;
    auto it = starts.find(hashOf([&](size_t t) { return k[i + t]; }));
    if (it == starts.end() || it->second < 0)
      return -1;
    for (size_t t = 0; t < run; ++t) // a hash's collision links nothing
      if (k[i + t] != e(size_t(it->second) + t))
        return -1;
    return it->second;
  };
  int64_t next = -1; // where in the iteration the next op should be
  // After an op that found no place, the next place is in doubt: an op is
  // taken there only if the two after it agree too (else one op of a
  // name could take the place of a lost one of the same name further on).
  bool sure = false;
  auto take = [&](size_t i, size_t j) {
    link[order[i]] = int32_t(j % m);
    ++linked;
    next = int64_t((j + 1) % m);
    sure = true;
  };
  auto agree = [&](size_t i, size_t j) {
    for (size_t t = 0; t < 3 && i + t < n; ++t)
      if (k[i + t] != e(j + t))
        return false;
    return true;
  };
  for (size_t i = 0; i < n; ++i) {
    if (k[i] == kNoName)
      continue;
    if (next >= 0) {
      // Where it should be, or an op or a few further on (ops the
      // execution trace has and this iteration does not: a record_function
      // Kineto keeps elsewhere), where the next two agree too.
      bool placed = false;
      for (size_t d = 0; d <= 4 && !placed; ++d) {
        const size_t j = size_t(next) + d;
        if (d == 0 && sure ? e(j) == k[i] : agree(i, j)) {
          take(i, j);
          placed = true;
        }
      }
      if (placed)
        continue;
    }
    if (int64_t j = runAt(i); j >= 0)
      take(i, size_t(j));
    else
      sure = false;
  }
  return link;
}

/// The storages an op of `kind` reaches of the framework op's tensors: a
/// kernel's and a device copy's device ones; a copy from (to) the host
/// reads (writes) host tensors; a memset writes and reads none.
void accessesOf(const GpuOp &op, const EtOp &by, std::vector<uint64_t> &reads,
                std::vector<uint64_t> &writes) {
  reads.clear();
  writes.clear();
  bool readHost = false, writeHost = false, read = true;
  if (op.kind == OpKind::Memset)
    read = false;
  else if (op.kind == OpKind::Memcpy && op.direction == CopyDirection::H2D)
    readHost = true;
  else if (op.kind == OpKind::Memcpy && op.direction == CopyDirection::D2H)
    writeHost = true;
  if (read)
    for (const EtTensor &t : by.inputs)
      if (t.host == readHost)
        reads.push_back(t.storage);
  for (const EtTensor &t : by.outputs)
    if (t.host == writeHost)
      writes.push_back(t.storage);
  for (std::vector<uint64_t> *v : {&reads, &writes}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
}

/// For each op stage, the Kineto framework op it was launched in (the
/// innermost linked one around its launch call, on the call's thread);
/// -1 where none is.
std::vector<int64_t> launchingOps(const ImportedStep &step, const CpuOps &cpuOps,
                                  const std::vector<int32_t> &link) {
  std::vector<int64_t> out(step.stages.size(), -1);
  // Each thread's framework ops by start (the enclosing first), and the
  // launches to place, by thread and time.
  std::vector<uint32_t> ops(cpuOps.ops.size());
  std::iota(ops.begin(), ops.end(), 0);
  std::sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) {
    const CpuOp &x = cpuOps.ops[a], &y = cpuOps.ops[b];
    if (x.thread != y.thread)
      return x.thread < y.thread;
    if (x.ts != y.ts)
      return x.ts < y.ts;
    return x.dur > y.dur;
  });
  struct Launch {
    int64_t thread;
    double ts;
    uint32_t stage;
  };
  std::vector<Launch> launches;
  for (uint32_t s = 0; s < step.stages.size(); ++s) {
    const ImportedStage &st = step.stages[s];
    if (st.onHost() || st.idle || step.opOf(st).launchTs < 0)
      continue;
    launches.push_back({step.opOf(st).thread, step.opOf(st).launchTs, s});
  }
  std::sort(launches.begin(), launches.end(), [](const Launch &a, const Launch &b) {
    return a.thread != b.thread ? a.thread < b.thread : a.ts < b.ts;
  });
  struct Open {
    double end;
    int64_t linked; ///< the innermost linked op open here (itself or around it)
  };
  std::vector<Open> open;
  size_t p = 0;
  int64_t thread = INT64_MIN;
  for (const Launch &l : launches) {
    if (l.thread != thread) {
      thread = l.thread;
      open.clear();
      while (p < ops.size() && cpuOps.ops[ops[p]].thread < thread)
        ++p;
    }
    for (; p < ops.size() && cpuOps.ops[ops[p]].thread == thread &&
           cpuOps.ops[ops[p]].ts <= l.ts;
         ++p) {
      const CpuOp &op = cpuOps.ops[ops[p]];
      while (!open.empty() && open.back().end < op.ts)
        open.pop_back();
      const int64_t around = open.empty() ? -1 : open.back().linked;
      open.push_back({op.ts + op.dur, link[ops[p]] >= 0 ? int64_t(ops[p]) : around});
    }
    while (!open.empty() && open.back().end < l.ts)
      open.pop_back();
    if (!open.empty())
      out[l.stage] = open.back().linked;
  }
  return out;
}

/// The buffers no op touches (their accesses all taken out) go, the rest
/// renumbered in order.
void dropUnused(ImportedStep &step) {
  std::vector<uint32_t> renumbered(step.buffers.size(), UINT32_MAX);
  for (const ImportedStage &st : step.stages)
    for (const std::vector<uint32_t> *list : {&st.reads, &st.writes})
      for (uint32_t b : *list)
        renumbered[b] = 0;
  uint32_t kept = 0;
  for (size_t b = 0; b < step.buffers.size(); ++b)
    if (renumbered[b] == 0) {
      renumbered[b] = kept;
      if (kept != b)
        step.buffers[kept] = std::move(step.buffers[b]);
      ++kept;
    }
  step.buffers.resize(kept);
  for (ImportedStage &st : step.stages)
    for (std::vector<uint32_t> *list : {&st.reads, &st.writes})
      for (uint32_t &b : *list)
        b = renumbered[b];
}

/// Takes out each access whose dependencies (as `sync inferred` makes
/// them, in program order) the recording contradicts: one on an op that
/// ended after this one began (a race in the recorded program, or memory
/// its allocator handed on): the recording is what ran. How many.
uint64_t keepUncontradicted(ImportedStep &step) {
  struct Access {
    uint32_t stage;
    bool read, write;
  };
  std::vector<std::vector<Access>> ofBuffer(step.buffers.size());
  for (uint32_t s = 0; s < step.stages.size(); ++s) {
    const ImportedStage &st = step.stages[s];
    for (uint32_t b : st.reads)
      ofBuffer[b].push_back({s, true, false});
    for (uint32_t b : st.writes) {
      std::vector<Access> &list = ofBuffer[b];
      if (!list.empty() && list.back().stage == s)
        list.back().write = true;
      else
        list.push_back({s, false, true});
    }
  }
  std::vector<std::pair<uint32_t, uint32_t>> dropped; // (stage, buffer)
  for (uint32_t b = 0; b < ofBuffer.size(); ++b) {
    int64_t writer = -1;
    std::vector<uint32_t> readers; // since the last write
    for (const Access &a : ofBuffer[b]) {
      const double start = step.stages[a.stage].startUs;
      auto after = [&](uint32_t u) {
        return u == a.stage || step.stages[u].endUs <= start + step::kClockSlackUs;
      };
      bool fits = writer < 0 || after(uint32_t(writer));
      if (a.write)
        fits = fits && std::all_of(readers.begin(), readers.end(), after);
      if (!fits) {
        dropped.push_back({a.stage, b});
        continue;
      }
      if (a.write) {
        writer = a.stage;
        readers.clear();
      }
      if (a.read)
        readers.push_back(a.stage);
    }
  }
  for (auto [s, b] : dropped)
    for (std::vector<uint32_t> *list : {&step.stages[s].reads, &step.stages[s].writes})
      list->erase(std::remove(list->begin(), list->end(), b), list->end());
  return dropped.size();
}

} // namespace

std::string importer::describeDataLink(const DataLink &d) {
  std::string text =
      llvm::formatv("{0} of {1} GPU ops linked to the execution trace by {2} ({3} with data, "
                    "in {4} buffers); {5} same-stream orderings left to the data",
                    d.linkedOps, d.stepOps, linkMethodName(d.by), d.dataOps, d.buffers,
                    d.streamOrders)
          .str();
  if (d.contradicted)
    text += llvm::formatv("; {0} accesses left out, whose orderings the recording contradicts "
                          "(an op that read or wrote memory another stream's op still used: "
                          "a race in the recorded program, or memory its allocator handed on)",
                          d.contradicted)
                .str();
  return text;
}

std::vector<int32_t> importer::linkCpuOps(const CpuOps &cpuOps, const ExecutionTrace &et,
                                          DataLink::By by, uint64_t &linked) {
  linked = 0;
  const std::vector<uint32_t> etName = etNamesOf(cpuOps, et);
  switch (by) {
  case DataLink::By::RecordFunctionId:
    return linkByIds(cpuOps, et, true, etName, linked);
  case DataLink::By::ExternalId:
    return linkByIds(cpuOps, et, false, etName, linked);
  case DataLink::By::Alignment:
    return linkByAlignment(cpuOps, et, etName, linked);
  }
  return {};
}

llvm::Expected<DataLink> importer::addData(ImportedStep &step, const CpuOps &cpuOps,
                                           const ExecutionTrace &et, double leastShare) {
  DataLink best;
  std::vector<int64_t> launching;
  std::vector<int32_t> link;
  uint64_t stepOps = 0;
  for (const ImportedStage &st : step.stages)
    stepOps += !st.onHost() && !st.idle;
  bool found = false;
  for (DataLink::By by :
       {DataLink::By::RecordFunctionId, DataLink::By::ExternalId, DataLink::By::Alignment}) {
    DataLink tried;
    tried.by = by;
    tried.stepOps = stepOps;
    tried.cpuOps = cpuOps.ops.size();
    std::vector<int32_t> l = linkCpuOps(cpuOps, et, by, tried.linkedCpuOps);
    if (tried.linkedCpuOps == 0)
      continue;
    std::vector<int64_t> launched = launchingOps(step, cpuOps, l);
    for (int64_t c : launched)
      tried.linkedOps += c >= 0;
    if (!found || tried.linkedOps > best.linkedOps) {
      best = tried;
      launching = std::move(launched);
      link = std::move(l);
      found = true;
    }
    if (double(tried.linkedOps) >= leastShare * double(stepOps))
      break;
  }
  if (!found || double(best.linkedOps) < leastShare * double(stepOps) || !stepOps)
    return fail(llvm::formatv(
        "the execution trace links {0} of the step's {1} GPU ops ({2:f1}%{3}), short of the "
        "{4}% pipec needs to take their data from it (--et-least-linked): are the two from "
        "one run of one program? Recorded together (torch.profiler with an "
        "ExecutionTraceObserver), they link by record-function id",
        found ? best.linkedOps : 0, stepOps,
        stepOps ? 100.0 * double(found ? best.linkedOps : 0) / double(stepOps) : 0.0,
        found ? (", by " + linkMethodName(best.by) +
                 llvm::formatv("; {0} of the trace's {1} framework ops linked",
                               best.linkedCpuOps, best.cpuOps)
                     .str())
                    .str()
              : std::string(": no framework op of the trace's has a name and an id the "
                            "execution trace records"),
        llvm::formatv(std::fmod(100 * leastShare, 1) == 0 ? "{0:f0}" : "{0:f1}",
                      100 * leastShare)
            .str()));

  // The storages the linked ops touch, as buffers: each as large as the
  // farthest any tensor of the trace reaches into it.
  llvm::DenseMap<uint64_t, std::pair<uint64_t, bool>> extent; // storage: (bytes, host)
  for (const EtOp &op : et.ops)
    for (const std::vector<EtTensor> *list : {&op.inputs, &op.outputs})
      for (const EtTensor &t : *list) {
        auto [it, added] = extent.try_emplace(t.storage, t.end, t.host);
        it->second.first = std::max(it->second.first, t.end);
      }
  llvm::DenseMap<uint64_t, uint32_t> bufferOf;
  auto bufferFor = [&](uint64_t storage) {
    auto [it, added] = bufferOf.try_emplace(storage, uint32_t(step.buffers.size()));
    if (added) {
      ImportedBuffer &b = step.buffers.emplace_back();
      b.name = "mem" + std::to_string(storage);
      b.bytes = std::max<uint64_t>(1, extent.lookup(storage).first);
      b.host = extent.lookup(storage).second;
    }
    return it->second;
  };
  std::vector<uint64_t> reads, writes;
  for (size_t s = 0; s < step.stages.size(); ++s) {
    if (launching[s] < 0)
      continue;
    ImportedStage &st = step.stages[s];
    accessesOf(step.opOf(st), et.ops[size_t(link[size_t(launching[s])])], reads, writes);
    for (uint64_t storage : reads)
      st.reads.push_back(bufferFor(storage));
    for (uint64_t storage : writes)
      st.writes.push_back(bufferFor(storage));
  }
  best.contradicted = keepUncontradicted(step);
  dropUnused(step);
  best.buffers = step.buffers.size();
  for (const ImportedStage &st : step.stages)
    best.dataOps += !st.reads.empty() || !st.writes.empty();
  std::vector<uint8_t> written(step.buffers.size(), 0);
  for (const ImportedStage &st : step.stages)
    for (uint32_t b : st.writes)
      written[b] = 1;
  for (size_t b = 0; b < step.buffers.size(); ++b)
    step.buffers[b].state = !written[b];

  // Same-stream order between two ops with data, of two framework ops, is
  // the data's to keep: plain stream order.
  std::map<int64_t, uint32_t> lastOn; // stream: its last op stage so far
  for (uint32_t s = 0; s < step.stages.size(); ++s) {
    ImportedStage &st = step.stages[s];
    if (st.onHost())
      continue;
    const int64_t stream = step.opOf(st).stream;
    auto it = lastOn.find(stream);
    if (it != lastOn.end()) {
      const uint32_t prev = it->second;
      const ImportedStage &p = step.stages[prev];
      const bool data = !st.reads.empty() || !st.writes.empty();
      const bool prevData = !p.reads.empty() || !p.writes.empty();
      if (data && prevData && launching[s] != launching[prev]) {
        auto dep = std::find(st.deps.begin(), st.deps.end(), prev);
        if (dep != st.deps.end()) {
          st.deps.erase(dep);
          ++best.streamOrders;
        }
      }
    }
    lastOn[stream] = s;
  }
  step.data = best;
  return best;
}
