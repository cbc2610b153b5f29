//===- RandomRecording.h - Random Kineto traces, and what they ordered ----===//
//
// A random recording of a program: runtime calls on one host thread, GPU ops
// on up to four streams, with stream waits, host syncs, pageable copies,
// graph launches, polls and launches whose call the trace lacks; and the
// orderings the program relied on, to hold the import to.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_TESTS_RANDOMRECORDING_H
#define PIPEC_TESTS_RANDOMRECORDING_H

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <random>
#include <set>
#include <string>
#include <vector>

namespace pipec::test {

struct Recording {
  std::string json;
  /// Ops by their index in issue order: stream, start, end.
  struct Op {
    int stream;
    double start, end;
  };
  std::vector<Op> ops;
  /// Orderings the program had: op -> op (waits, stream order), and op ->
  /// every op issued after a host sync that waited for it.
  std::set<std::pair<uint32_t, uint32_t>> orderings;
  size_t queued = 0; ///< ops whose call is missing, queued behind another's
  size_t polls = 0;  ///< runs of cudaEventQuery until an op was done
};

inline Recording record(std::mt19937 &rng, bool syncEvents) {
  Recording r;
  llvm::json::Array events;
  const int streams = 1 + int(rng() % 4);
  std::vector<int64_t> lastOp(streams, -1);
  std::vector<double> streamFree(streams, 0), waitUntil(streams, 0);
  std::vector<std::vector<int64_t>> waitFor(streams); // ops the next op waits for
  std::vector<int64_t> syncedOps; // ops a host sync waited for, not yet ordered
  double t = 0;
  int64_t corr = 0;
  auto uniform = [&](double lo, double hi) {
    return lo + (hi - lo) * double(rng() % 10000) / 10000.0;
  };
  auto call = [&](const char *name, double dur) {
    double start = t + uniform(0, 30);
    ++corr;
    events.push_back(llvm::json::Object{{"ph", "X"},
                                        {"cat", "cuda_runtime"},
                                        {"name", name},
                                        {"ts", start},
                                        {"dur", dur},
                                        {"tid", 1},
                                        {"args", llvm::json::Object{{"correlation", corr}}}});
    t = start + dur;
    return start;
  };
  auto syncEvent = [&](const char *kind, llvm::json::Object args) {
    args["cuda_sync_kind"] = kind;
    args["correlation"] = corr;
    events.push_back(llvm::json::Object{{"ph", "X"},
                                        {"cat", "cuda_sync"},
                                        {"name", kind},
                                        {"ts", t},
                                        {"dur", 0},
                                        {"args", std::move(args)}});
  };
  bool longNext = false; // the next op runs long (something to queue behind)
  // An op on s, `idle` after it could have begun: what it is ordered after.
  auto addOp = [&](int s, double callStart, double idle, double &start, double &dur) {
    start = std::max({callStart + uniform(1, 4), streamFree[s], waitUntil[s]}) + idle;
    dur = longNext ? uniform(300, 600) : uniform(1, 100);
    longNext = false;
    uint32_t v = uint32_t(r.ops.size());
    r.ops.push_back({s, start, start + dur});
    for (int64_t u : waitFor[s])
      r.orderings.insert({uint32_t(u), v});
    waitFor[s].clear();
    if (lastOp[s] >= 0)
      r.orderings.insert({uint32_t(lastOp[s]), v});
    for (int64_t u : syncedOps)
      r.orderings.insert({uint32_t(u), v});
    lastOp[s] = v;
    streamFree[s] = start + dur;
    return v;
  };
  // A kernel the call `corr` launched, of `blocks` blocks of 128 threads.
  auto kernelEvent = [&](const std::string &name, int s, double start, double dur,
                         int64_t blocks) {
    events.push_back(llvm::json::Object{
        {"ph", "X"},
        {"cat", "kernel"},
        {"name", name},
        {"ts", start},
        {"dur", dur},
        {"tid", s},
        {"args", llvm::json::Object{{"stream", s},
                                    {"correlation", corr},
                                    {"device", 0},
                                    {"grid", llvm::json::Array{blocks, 1, 1}},
                                    {"block", llvm::json::Array{128, 1, 1}}}}});
  };
  auto launch = [&](int s, bool pageable) {
    double callDur = uniform(2, 10);
    double callStart = call(pageable ? "cudaMemcpyAsync" : "cudaLaunchKernel", callDur);
    double start, dur;
    uint32_t v = addOp(s, callStart, 0, start, dur);
    if (pageable) {
      llvm::json::Object args{
          {"stream", s}, {"correlation", corr}, {"device", 0}, {"bytes", 4}};
      events.push_back(llvm::json::Object{{"ph", "X"},
                                          {"cat", "gpu_memcpy"},
                                          {"name", "Memcpy DtoH (Device -> Pageable)"},
                                          {"ts", start},
                                          {"dur", dur},
                                          {"tid", s},
                                          {"args", std::move(args)}});
      // The call returns once the copy is done: the host waited for it.
      auto &callEvent = *events[events.size() - 2].getAsObject();
      double ret = start + dur + uniform(1, 5);
      callEvent["dur"] = ret - callStart;
      t = ret;
      syncedOps.push_back(v);
    } else {
      kernelEvent("k" + std::to_string(v), s, start, dur, int64_t(1 + rng() % 200));
    }
  };
  const int actions = 2 + int(rng() % 30);
  bool polled = false; // the last action was a run of polls
  for (int i = 0; i < actions; ++i) {
    int s = int(rng() % streams);
    const unsigned action = rng() % 15;
    // Two runs of polls back to back, no call between them, are one run
    // (the host spun until the later op was done): the next is a launch.
    const bool pollsAgain = polled && action == 9;
    polled = false;
    if (pollsAgain) {
      launch(s, false);
      continue;
    }
    switch (action) {
    case 0: { // record on a, wait on s
      int a = int(rng() % streams);
      call("cudaEventRecord", 1);
      int64_t recordCorr = corr;
      int64_t producer = lastOp[a];
      double ready = producer >= 0 ? r.ops[producer].end : 0;
      call("cudaStreamWaitEvent", 1);
      if (syncEvents)
        syncEvent("Stream Wait Event",
                  llvm::json::Object{{"stream", s},
                                     {"wait_on_stream", a},
                                     {"wait_on_cuda_event_record_corr_id", recordCorr}});
      if (producer >= 0 && a != s) {
        waitFor[s].push_back(producer);
        waitUntil[s] = std::max(waitUntil[s], ready);
      }
      break;
    }
    case 1: { // stream sync on s
      double start = call("cudaStreamSynchronize", 1);
      double done = lastOp[s] >= 0 ? r.ops[lastOp[s]].end : 0;
      auto &ev = *events.back().getAsObject();
      double ret = std::max(start + 1, done + uniform(1, 4));
      ev["dur"] = ret - start;
      t = ret;
      if (syncEvents)
        syncEvent("Stream Sync", llvm::json::Object{{"stream", s}});
      if (lastOp[s] >= 0)
        syncedOps.push_back(lastOp[s]);
      break;
    }
    case 2:   // device sync
    case 6: { // cudaFree: waits for every stream too, then frees
      const bool isFree = action == 6;
      double start = call(isFree ? "cudaFree" : "cudaDeviceSynchronize", 1);
      double done = 0;
      for (int b = 0; b < streams; ++b)
        if (lastOp[b] >= 0) {
          done = std::max(done, r.ops[lastOp[b]].end);
          syncedOps.push_back(lastOp[b]);
        }
      auto &ev = *events.back().getAsObject();
      double ret = std::max(start + 1, done + uniform(1, 4));
      if (isFree)
        ret += uniform(0, 50);
      ev["dur"] = ret - start;
      t = ret;
      if (syncEvents && !isFree)
        syncEvent("Context Sync", llvm::json::Object{{"stream", -1}});
      break;
    }
    case 3: // host work
      t += uniform(1000, 3000);
      break;
    case 4:
      launch(s, true);
      break;
    case 5: // a call's own time: no ordering
      call(rng() % 2 ? "cudaMalloc" : "cudaStreamCreateWithFlags", uniform(10, 500));
      break;
    case 7: { // a graph launch of 2-4 kernels on s, the GPU idle before some
      double callStart = call("cudaGraphLaunch", uniform(5, 20));
      for (int k = 2 + int(rng() % 3); k > 0; --k) {
        double idle = rng() % 3 == 0 ? uniform(200, 600) : 0;
        double start, dur;
        uint32_t v = addOp(s, callStart, idle, start, dur);
        kernelEvent("g" + std::to_string(v), s, start, dur, 64);
      }
      break;
    }
    case 9: { // the host polls cudaEventQuery until s's last op is done
      if (lastOp[s] < 0 || r.ops[lastOp[s]].end < t + 200) {
        launch(s, false);
        break;
      }
      const double done = r.ops[lastOp[s]].end;
      while (t + 40 < done) { // polls that find it running
        call("cudaEventQuery", 1);
        t += uniform(20, 40);
      }
      t = std::max(t, done + 0.5);
      call("cudaEventQuery", 1); // the one that finds it done
      syncedOps.push_back(lastOp[s]);
      ++r.polls;
      polled = true;
      break;
    }
    case 8: { // a launch whose call the trace lacks (a sampled trace),
              // queued behind another stream's op until it ended
      int a = int(rng() % streams);
      if (a == s)
        break;
      // Its producer must end well after s could have run it.
      auto producerLate = [&] {
        return lastOp[a] >= 0 &&
               r.ops[lastOp[a]].end >= std::max({t, streamFree[s], waitUntil[s]}) + 150;
      };
      if (!producerLate()) {
        longNext = true;
        launch(a, false);
      }
      if (!producerLate())
        break;
      const uint32_t producer = uint32_t(lastOp[a]);
      ++corr; // the call was made, not recorded
      double start, dur;
      uint32_t v = addOp(s, t, 0, start, dur);
      // It began as the producer ended (the earliest it could, and later
      // than the generic rule: the recorded ops end in that order).
      start = r.ops[producer].end + uniform(0.5, 2);
      r.ops[v].start = start;
      r.ops[v].end = start + dur;
      streamFree[s] = start + dur;
      r.orderings.insert({producer, v});
      kernelEvent("q" + std::to_string(v), s, start, dur, 32);
      ++r.queued;
      break;
    }
    default:
      launch(s, false);
    }
  }
  if (r.ops.empty())
    launch(0, false);
  llvm::json::Object doc{{"traceEvents", std::move(events)}};
  r.json = llvm::formatv("{0}", llvm::json::Value(std::move(doc))).str();
  return r;
}

} // namespace pipec::test

#endif // PIPEC_TESTS_RANDOMRECORDING_H
