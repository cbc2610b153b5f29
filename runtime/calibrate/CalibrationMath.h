//===- CalibrationMath.h - Raw timestamps into the model's parameters -----===//
//
// `pipec calibrate` measures on the GPU; this file turns what it measured
// into the quantities docs/device-model.md says the model uses, and needs no
// GPU, so that the arithmetic is tested with synthetic timestamps:
//   stream_gap_us / graph_gap_us   previous item's end to the next one's start
//   wait_latency_us                producer's end to the waiting stream's next start
//   host_func_latency_us           stream reaching a host function to it running
//   graph_launch_us                cudaGraphLaunch called to the first node's start
//   copy_latency_us, *_GBps        intercept and slope of copy time against bytes
// Device timestamps (%globaltimer) and host ones (steady_clock) are on two
// clocks; clockOffset() relates them as Cristian's algorithm does.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_CALIBRATE_CALIBRATIONMATH_H
#define PIPEC_RUNTIME_CALIBRATE_CALIBRATIONMATH_H

#include <cstdint>
#include <utility>
#include <vector>

namespace pipec::runtime::calibration {

/// The median (upper middle for an even count); 0 for none.
double median(std::vector<double> values);

/// An item's start and end on one clock, in microseconds.
struct Interval {
  double start = 0, end = 0;
};

/// The median of start[i] - end[i-1] over items that ran back to back, each
/// waiting for the one before it; never negative.
double medianGapUs(const std::vector<Interval> &backToBack);

/// One reading of the device clock bracketed by two host clock readings
/// (microseconds): the device read happened somewhere in between.
struct ClockSample {
  double hostBefore = 0, device = 0, hostAfter = 0;
};
/// device time - host time, taken from the tightest sample (half its round
/// trip is the uncertainty).
struct ClockOffset {
  double deviceMinusHost = 0;
  double uncertainty = 0;
};
ClockOffset clockOffset(const std::vector<ClockSample> &samples);

/// The median of (device[i] - offset) - host[i]: how long after a host event
/// a device event followed (graph launch call to its first node's start).
double medianHostToDeviceUs(const std::vector<double> &host, const std::vector<double> &device,
                            const ClockOffset &offset);
/// The median of host[i] - (device[i] - offset): how long after a device
/// event a host event followed (a kernel's end to the host function after it).
double medianDeviceToHostUs(const std::vector<double> &device, const std::vector<double> &host,
                            const ClockOffset &offset);

/// A copy engine's cost as the model has it: latency + bytes / bandwidth.
struct CopyFit {
  double latencyUs = 0; ///< never negative
  double GBps = 0;      ///< 10^9 bytes per second
};
/// Least squares over (bytes, microseconds) samples of at least two sizes.
CopyFit fitCopies(const std::vector<std::pair<double, double>> &samples);

/// The smallest positive step between successive readings of a timer, in
/// its own units (0 when it never moved).
uint64_t timerResolution(const std::vector<uint64_t> &readings);

/// A %globaltimer reading (nanoseconds, ~1.8e18) as microseconds after
/// `base`, subtracted as integers first: as a double it would step by
/// 256 ns, and a microsecond figure by 0.25 us.
double deviceMicros(uint64_t ns, uint64_t base);

/// What the model adds after the gap between two items of a stream
/// (stream_gap_us) when a measured latency runs from a kernel's end:
/// wait_latency_us (a waiting stream's next kernel) and host_func_latency_us
/// (the host function after it) both come after the stream has moved on,
/// so the model's key is the measured latency less that gap, never negative.
double afterStreamGapUs(double measuredUs, double streamGapUs);

/// graph_launch_us as the docs define it: the host's cudaGraphLaunch call
/// takes graph_launch_us + nodes x graph_node_us, so the fixed part is what
/// the measured call of a graph of `nodes` leaves.
double graphLaunchFixedUs(double callUs, unsigned nodes, double perNodeUs);

/// Copy engines per direction, from probes: `smallAheadUs[m]` is how long
/// before the first of m + 1 large copies (each on its own stream, issued
/// first) a 4-byte copy of the same direction on yet another stream ended;
/// `largeUs` is one large copy's time. A small copy that did not wait behind
/// m + 1 large ones (ended more than half a large copy before them) shows
/// m + 2 engines; the count is 1 + the leading probes that show it.
unsigned copyEngines(const std::vector<double> &smallAheadUs, double largeUs);

} // namespace pipec::runtime::calibration

#endif // PIPEC_RUNTIME_CALIBRATE_CALIBRATIONMATH_H
