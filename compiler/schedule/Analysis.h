//===- Analysis.h - What a schedule can gain, and what holds it back ------===//
//
// The seed notebook's figures (sequential time, the per-stream "pipelined"
// bound, overlap ratio, cross-stream dependencies, event density), the true
// critical path through dependencies and stream order, the stream-order edges
// that lie on it, and whether a CUDA graph would pay.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SCHEDULE_ANALYSIS_H
#define PIPEC_SCHEDULE_ANALYSIS_H

#include "compiler/program/DeviceProfile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pipec {

struct Schedule;

/// A stream-order edge (not a declared dependency) on the critical path.
struct StreamOrderDelay {
  uint32_t from, to; ///< instances, consecutive on one stream
  uint32_t stream;
  double delayUs; ///< how much later `to` starts than its dependencies allow
};

struct GraphAdvice {
  bool suitable = false;
  std::vector<std::string> reasons;
  double streamSubmitUs = 0;  ///< host time to issue one replay as streams
  double graphSubmitUs = 0;   ///< ... as one graph launch (+ node updates)
  double instantiateUs = 0;   ///< one-time
  double breakEvenReplays = 0; ///< 0 when the graph never pays
};

struct Analysis {
  double sequentialUs = 0;
  double criticalPathUs = 0;
  double streamBoundUs = 0;
  double lowerBoundUs = 0;
  double overlapRatio = 0;
  uint64_t crossStreamDependencies = 0;
  uint64_t redundantDependencies = 0;
  double eventDensity = 0;
  std::vector<uint32_t> criticalPath; ///< instances, first to last
  std::vector<StreamOrderDelay> streamOrderOnCriticalPath;
  std::vector<double> streamBusyUs; ///< per stream
  GraphAdvice graphAdvice;
};

Analysis analyze(const Schedule &schedule, const DeviceProfile &profile,
                 unsigned replays);

} // namespace pipec

#endif // PIPEC_SCHEDULE_ANALYSIS_H
