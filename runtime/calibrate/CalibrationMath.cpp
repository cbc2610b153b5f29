//===- CalibrationMath.cpp - Raw timestamps into the model's parameters ---===//

#include "runtime/calibrate/CalibrationMath.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace calibration = pipec::runtime::calibration;
using namespace calibration;

double calibration::median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
  return values[values.size() / 2];
}

double calibration::medianGapUs(const std::vector<Interval> &backToBack) {
  std::vector<double> gaps;
  for (size_t i = 1; i < backToBack.size(); ++i)
    gaps.push_back(backToBack[i].start - backToBack[i - 1].end);
  return std::max(0.0, median(std::move(gaps)));
}

ClockOffset calibration::clockOffset(const std::vector<ClockSample> &samples) {
  ClockOffset best;
  best.uncertainty = std::numeric_limits<double>::infinity();
  for (const ClockSample &s : samples) {
    double half = (s.hostAfter - s.hostBefore) / 2;
    if (half < 0 || half >= best.uncertainty)
      continue;
    best.uncertainty = half;
    best.deviceMinusHost = s.device - (s.hostBefore + half);
  }
  if (samples.empty() || std::isinf(best.uncertainty))
    best.uncertainty = 0;
  return best;
}

double calibration::medianHostToDeviceUs(const std::vector<double> &host,
                                         const std::vector<double> &device,
                                         const ClockOffset &offset) {
  std::vector<double> d;
  for (size_t i = 0; i < std::min(host.size(), device.size()); ++i)
    d.push_back(device[i] - offset.deviceMinusHost - host[i]);
  return std::max(0.0, median(std::move(d)));
}

double calibration::medianDeviceToHostUs(const std::vector<double> &device,
                                         const std::vector<double> &host,
                                         const ClockOffset &offset) {
  std::vector<double> d;
  for (size_t i = 0; i < std::min(host.size(), device.size()); ++i)
    d.push_back(host[i] - (device[i] - offset.deviceMinusHost));
  return std::max(0.0, median(std::move(d)));
}

CopyFit calibration::fitCopies(const std::vector<std::pair<double, double>> &samples) {
  CopyFit fit;
  const double n = double(samples.size());
  if (samples.size() < 2)
    return fit;
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (auto [x, y] : samples) {
    sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  double denominator = n * sxx - sx * sx;
  if (denominator <= 0)
    return fit;
  double slope = (n * sxy - sx * sy) / denominator; // us per byte
  double intercept = (sy - slope * sx) / n;
  fit.latencyUs = std::max(0.0, intercept);
  fit.GBps = slope > 0 ? 1e-3 / slope : 0; // bytes/us = 10^6 B/s; /10^9
  return fit;
}

uint64_t calibration::timerResolution(const std::vector<uint64_t> &readings) {
  uint64_t best = 0;
  for (size_t i = 1; i < readings.size(); ++i)
    if (readings[i] > readings[i - 1]) {
      uint64_t step = readings[i] - readings[i - 1];
      if (!best || step < best)
        best = step;
    }
  return best;
}

double calibration::deviceMicros(uint64_t ns, uint64_t base) {
  return double(int64_t(ns - base)) / 1000;
}

double calibration::afterStreamGapUs(double measuredUs, double streamGapUs) {
  return std::max(0.0, measuredUs - streamGapUs);
}

double calibration::graphLaunchFixedUs(double callUs, unsigned nodes, double perNodeUs) {
  return std::max(0.0, callUs - double(nodes) * perNodeUs);
}

unsigned calibration::copyEngines(const std::vector<double> &smallAheadUs, double largeUs) {
  unsigned engines = 1;
  for (double ahead : smallAheadUs) {
    if (!(largeUs > 0) || !(ahead > largeUs / 2))
      break;
    ++engines;
  }
  return engines;
}
