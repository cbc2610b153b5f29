//===- DeviceProfile.h - What the compiler and the model know of a device -===//
//
// The built-in defaults describe an H200-class GPU from published figures
// (docs/device-model.md names the source of each); `--profile=FILE` loads a
// JSON profile, such as one written by `pipec calibrate`, over them.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_PROGRAM_DEVICEPROFILE_H
#define PIPEC_PROGRAM_DEVICEPROFILE_H

#include "compiler/program/Program.h"

#include "llvm/Support/Error.h"

#include <string>

namespace pipec {

struct DeviceProfile {
  std::string name = "model of an H200 (published figures, uncalibrated)";
  /// cudaDeviceGetStreamPriorityRange: least (lowest urgency) and greatest.
  int priorityLeast = 0;
  int priorityGreatest = -5;
  /// Copy bandwidth per direction, GB/s (10^9 bytes per second).
  double h2dGBps = 52;
  double d2hGBps = 52;
  double d2dGBps = 2000;

  /// The CUDA priority a `high`/`normal`/`low` stream gets; `normal` is the
  /// midpoint rounded towards `low`.
  int priorityFor(program::PriorityClass cls) const;
  /// Microseconds to move `bytes` in direction `dir`.
  double copyTimeUs(program::CopyDirection dir, uint64_t bytes) const;
};

/// Reads a profile from JSON text; keys that are absent keep their defaults.
llvm::Expected<DeviceProfile> parseDeviceProfile(llvm::StringRef json);

} // namespace pipec

#endif // PIPEC_PROGRAM_DEVICEPROFILE_H
