//===- Profile.cpp - pipec profile, pipec calibrate -----------------------===//

#include "Tool.h"

#include "runtime/cuda/CudaBackend.h"

#include "llvm/Support/raw_ostream.h"

using namespace llvm;
using namespace pipec;
using namespace pipec::tool;

namespace {

cl::opt<bool> profileDefault("default", cl::desc("The built-in profile"),
                             cl::sub(profileCommand()), cl::cat(category()));

} // namespace

/// pipec profile: --default prints the built-in profile; --profile=FILE
/// prints FILE's, checked (every key known, every value in its range).
int tool::runProfile() {
  if (profileDefault == !invocation().profilePath.empty()) {
    toolError("give one of --default and --profile=FILE");
    return UsageError;
  }
  DeviceProfile profile;
  if (!loadProfile(profile))
    return UsageError;
  writeDeviceProfile(profile, outs());
  return Success;
}

int tool::runCalibrate() {
  commandFiles().output(invocation().outputPath, "-o");
  if (!checkFiles())
    return UsageError;
  DeviceProfile defaults;
  Expected<DeviceProfile> measured = runtime::calibrate(defaults, errs());
  if (!measured) {
    toolError(toString(measured.takeError()));
    return RunFailed;
  }
  return emitTo(invocation().outputPath,
                [&](raw_ostream &os) { writeDeviceProfile(*measured, os); })
             ? Success
             : WriteFailed;
}
