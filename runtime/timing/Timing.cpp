//===- Timing.cpp - Choosing the timing method, matching activity records -===//

#include "runtime/timing/Timing.h"

#include "llvm/ADT/DenseMap.h"

#include <algorithm>

using namespace pipec;
using namespace pipec::runtime;

const char *runtime::spelling(TimingMethod method) {
  switch (method) {
  case TimingMethod::Model:
    return "model";
  case TimingMethod::Cupti:
    return "cupti";
  case TimingMethod::Events:
    return "events";
  }
  return "model";
}

bool runtime::parseTimingRequest(llvm::StringRef text, TimingRequest &out) {
  if (text == "auto")
    out = TimingRequest::Auto;
  else if (text == "cupti")
    out = TimingRequest::Cupti;
  else if (text == "events")
    out = TimingRequest::Events;
  else
    return false;
  return true;
}

llvm::Expected<TimingMethod>
runtime::chooseTiming(TimingRequest request, const CuptiStatus &cupti, std::string &note) {
  note.clear();
  switch (request) {
  case TimingRequest::Events:
    return TimingMethod::Events;
  case TimingRequest::Cupti:
    if (cupti.usable)
      return TimingMethod::Cupti;
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--timing=cupti: CUPTI is not usable: %s",
                                   cupti.why.c_str());
  case TimingRequest::Auto:
    if (cupti.usable)
      return TimingMethod::Cupti;
    note = "CUPTI is not usable (" + cupti.why + "); timed with CUDA events";
    return TimingMethod::Events;
  }
  return TimingMethod::Events;
}

llvm::Expected<TimingMethod> runtime::afterCuptiFailed(TimingRequest request, llvm::Error why,
                                                       std::string &note) {
  const std::string reason = llvm::toString(std::move(why));
  if (request == TimingRequest::Cupti)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "--timing=cupti: CUPTI's records could not be used: %s",
                                   reason.c_str());
  note = "CUPTI's records could not be used (" + reason + "); timed with CUDA events";
  return TimingMethod::Events;
}

static llvm::Error mismatch(const char *what, uint64_t key, size_t records, size_t expected) {
  return llvm::createStringError(
      llvm::inconvertibleErrorCode(),
      "CUPTI reported %zu operation(s) for %s %llu, the schedule issued %zu", records, what,
      static_cast<unsigned long long>(key), expected);
}

llvm::Error runtime::checkRecord(const DeviceRecord &r, const RecordWindow &window) {
  const char *why = !r.start                                       ? "starts at 0"
                    : r.end < r.start                              ? "ends before it starts"
                    : r.start < window.begin || r.end > window.end ? "lies outside the run"
                                                                   : nullptr;
  if (!why)
    return llvm::Error::success();
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "a CUPTI record (stream %u, %llu to %llu ns) %s", r.streamId,
                                 static_cast<unsigned long long>(r.start),
                                 static_cast<unsigned long long>(r.end), why);
}

llvm::Error runtime::matchStreamRecords(const std::vector<uint32_t> &streamIds,
                                        const std::vector<std::vector<uint32_t>> &issued,
                                        std::vector<DeviceRecord> records,
                                        const RecordWindow &window, InstanceIntervals &out) {
  llvm::DenseMap<uint32_t, size_t> streamIndex;
  for (size_t i = 0; i < streamIds.size(); ++i)
    streamIndex[streamIds[i]] = i;
  // Each stream's records in execution order (ties: the earlier end first).
  std::stable_sort(records.begin(), records.end(),
                   [](const DeviceRecord &a, const DeviceRecord &b) {
                     return a.start != b.start ? a.start < b.start : a.end < b.end;
                   });
  std::vector<size_t> next(streamIds.size(), 0);
  for (const DeviceRecord &r : records) {
    auto it = streamIndex.find(r.streamId);
    if (it == streamIndex.end())
      continue;
    if (llvm::Error e = checkRecord(r, window))
      return e;
    size_t i = it->second;
    if (next[i] >= issued[i].size())
      return mismatch("stream", r.streamId, next[i] + 1, issued[i].size());
    uint32_t v = issued[i][next[i]++];
    out.start[v] = r.start;
    out.end[v] = r.end;
  }
  for (size_t i = 0; i < streamIds.size(); ++i)
    if (next[i] != issued[i].size())
      return mismatch("stream", streamIds[i], next[i], issued[i].size());
  return llvm::Error::success();
}

llvm::Error runtime::matchGraphRecords(const std::vector<uint64_t> &nodeIds,
                                       const std::vector<NodeClone> &clones,
                                       const std::vector<DeviceRecord> &records,
                                       const RecordWindow &window, InstanceIntervals &out) {
  // Each template node's clone in the launched graph; a node no clone was
  // reported for is looked for under its own id.
  llvm::DenseMap<uint64_t, uint64_t> cloneOf;
  for (const NodeClone &c : clones)
    if (c.original && c.clone)
      cloneOf[c.original] = c.clone;
  llvm::DenseMap<uint64_t, uint32_t> instanceOf;
  std::vector<uint64_t> expected(nodeIds.size(), 0);
  for (uint32_t v = 0; v < nodeIds.size(); ++v) {
    if (!nodeIds[v])
      continue;
    auto it = cloneOf.find(nodeIds[v]);
    expected[v] = it == cloneOf.end() ? nodeIds[v] : it->second;
    instanceOf[expected[v]] = v;
  }
  std::vector<uint8_t> seen(nodeIds.size(), 0);
  for (const DeviceRecord &r : records) {
    auto it = instanceOf.find(r.graphNodeId);
    if (r.graphNodeId == 0 || it == instanceOf.end())
      continue;
    if (llvm::Error e = checkRecord(r, window))
      return e;
    uint32_t v = it->second;
    if (seen[v]++)
      return mismatch("graph node", r.graphNodeId, 2, 1);
    out.start[v] = r.start;
    out.end[v] = r.end;
  }
  for (uint32_t v = 0; v < nodeIds.size(); ++v)
    if (nodeIds[v] && !seen[v])
      return mismatch("graph node", expected[v], 0, 1);
  return llvm::Error::success();
}

void runtime::intervalsToMicros(const InstanceIntervals &iv, uint64_t origin,
                                std::vector<double> &start, std::vector<double> &end) {
  const size_t n = iv.start.size();
  start.resize(n);
  end.resize(n);
  auto micros = [origin](uint64_t t) { return double(int64_t(t - origin)) / 1000; };
  for (size_t v = 0; v < n; ++v) {
    start[v] = micros(iv.start[v]);
    end[v] = micros(iv.end[v]);
  }
}

std::pair<uint64_t, uint64_t> runtime::hostStageFromEvents(uint64_t reached, uint64_t passed,
                                                           uint64_t ranNs) {
  passed = std::max(passed, reached);
  uint64_t start = passed - std::min(ranNs, passed - reached);
  return {start, passed};
}

double runtime::violationSlackUs(TimingMethod method, double timerResolutionNs) {
  switch (method) {
  case TimingMethod::Model:
    return 1e-3;
  case TimingMethod::Events:
    return timerResolutionNs / 1000 + 0.5;
  case TimingMethod::Cupti:
    return timerResolutionNs / 1000 + 1.0;
  }
  return 1e-3;
}
