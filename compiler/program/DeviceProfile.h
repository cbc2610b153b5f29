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

namespace llvm {
class raw_ostream;
}

#include <algorithm>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

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
  /// The device memory's bandwidth, GB/s: what kernels that run together
  /// share (`bytes=`, `bound=memory`). An H200's HBM3e: 4.8 TB/s.
  double memoryGBps = 4800;
  /// A copy to or from pageable host memory (`[pageable]`), either way:
  /// staged through a pinned buffer by the host. Uncalibrated, a rule of
  /// thumb: half the pinned bandwidth (docs/device-model.md).
  double pageableGBps = 26;
  /// A peer copy (`copy p2p`) between two devices, each way: NVLink 4 on
  /// an H200 board, 450 GB/s per direction; PCIe peers get far less.
  double p2pGBps = 450;
  /// A collective (NCCL, ring algorithm): a fixed cost per call, a cost
  /// per step of the ring, and the bus bandwidth NCCL's tests report
  /// (docs/device-model.md).
  double ncclBaseUs = 5;
  double ncclStepUs = 1;
  double ncclBusGBps = 360;
  /// The SMs a collective over several devices holds while it runs: one
  /// block per NCCL channel (16 on 8 H100/H200 over NVLink, NCCL's default
  /// there; 24 on an HGX A100). An import takes it from the recorded
  /// kernels' grids.
  unsigned ncclChannels = 16;

  // Host-side API costs, microseconds (docs/device-model.md: sources).
  double launchUs = 2.6;         ///< a kernel, copy or host-function launch
  double recordUs = 0.25;        ///< cudaEventRecord, timing disabled
  double waitUs = 0.5;           ///< cudaStreamWaitEvent (host side)
  double graphLaunchUs = 3.5;    ///< the host's cudaGraphLaunch call, fixed part
  double graphNodeUs = 0;        ///< cudaGraphLaunch, per node (host)
  double uploadNodeUs = 0.58;    ///< a graph's first launch, per node
  double instantiateNodeUs = 30; ///< cudaGraphInstantiate, per node
  double nodeUpdateUs = 2.6;     ///< updating one node's parameters
  /// A host synchronisation (cudaEventSynchronize): from the event's
  /// completion to the host thread running again.
  double syncLatencyUs = 2.0;
  /// Launches the driver holds for the device before a launch call blocks
  /// the host (its command queue), across all streams.
  unsigned launchQueueDepth = 1024;

  // The device, as the model sees it.
  unsigned sms = 132; ///< streaming multiprocessors
  unsigned maxThreadsPerSM = 2048;
  unsigned maxBlocksPerSM = 32;
  unsigned maxResidentKernels = 128;      ///< concurrent grids
  unsigned sharedMemoryPerSM = 233472;    ///< bytes (228 KiB on cc 9.0)
  unsigned sharedMemoryPerBlock = 232448; ///< the most one block may ask (227 KiB)
  unsigned registersPerSM = 65536;
  unsigned hardwareQueues = 8; ///< CUDA_DEVICE_MAX_CONNECTIONS
  /// Copies of one direction that run at once (each its own engine; they
  /// share the direction's bandwidth). calibrate measures them.
  unsigned copyEnginesH2D = 1;
  unsigned copyEnginesD2H = 1;
  double streamGapUs = 0.9;       ///< between back-to-back items of a stream
  double graphGapUs = 0.5;        ///< between dependent nodes of a graph
  double waitLatencyUs = 1.0;     ///< a cross-stream wait resolving
  double hostFuncLatencyUs = 100; ///< cudaLaunchHostFunc until it runs
  double copyLatencyUs = 1.0;     ///< a copy engine starting a transfer
  /// The resolution of the device timer calibration read (%globaltimer),
  /// nanoseconds; 0 where nothing was measured.
  double timerResolutionNs = 0;

  /// The keys (as a profile file names them) whose values were measured
  /// (`pipec calibrate`, a recording's device) or given by a user's
  /// profile, sorted: every other key is pipec's default, a published
  /// figure or an estimate, and a verdict that rests on one names it.
  std::vector<std::string> measured;
  /// Whether `key` holds pipec's default, not a measured or given value.
  bool assumed(llvm::StringRef key) const {
    return !std::binary_search(measured.begin(), measured.end(), key.str());
  }
  /// The values a profile's count key may take (a real device's, with
  /// room for the next generations); none for a key that is not one.
  static std::optional<std::pair<double, double>> countRange(llvm::StringRef key);
  /// Marks keys measured (kept sorted, each once).
  void markMeasured(std::initializer_list<const char *> keys);

  /// What one block of a kernel holds of an SM while it runs, as the CUDA
  /// occupancy calculator counts it: threads, one block slot, shared memory
  /// (in 128-byte units plus 1 KiB the runtime reserves per block) and
  /// registers (256 per warp unit).
  struct BlockUse {
    uint64_t threads = 0, slots = 1, smem = 0, regs = 0;
  };
  BlockUse blockUse(uint32_t threads, uint64_t smemBytes, uint32_t regs) const;
  /// An SM's capacity in the same units.
  BlockUse smCapacity() const;
  /// Blocks of this shape that fit on one SM at once (0: not even one).
  unsigned blocksPerSM(uint32_t threads, uint64_t smemBytes = 0, uint32_t regs = 0) const;
  /// A kernel's waves when it runs alone: its blocks over what the device
  /// holds at once (at least 1). Each block runs for T / waves.
  uint64_t waves(const program::KernelWork &kernel) const;

  /// The CUDA priority a `high`/`normal`/`low` stream gets; `normal` is the
  /// midpoint rounded towards `low`.
  int priorityFor(program::PriorityClass cls) const;
  /// The copy engines of direction `dir` (d2d has one).
  unsigned copyEngines(program::CopyDirection dir) const;
  /// The bandwidth of direction `dir`, GB/s.
  double copyGBps(program::CopyDirection dir) const;
  /// Microseconds a collective of `bytes` over `ranks` devices takes, by
  /// NCCL's ring formulas: all-reduce moves 2(n-1)/n of the bytes over the
  /// bus in 2(n-1) steps, all-gather and reduce-scatter (n-1)/n in n-1,
  /// broadcast all of them in n-1; on one device it is a copy.
  double collectiveTimeUs(program::CollectiveOp op, uint64_t bytes, uint32_t ranks) const;
  /// The bytes a collective over `ranks` devices moves in `us` by the same
  /// formulas (at least 1): for one given a time, as an import measures it.
  uint64_t collectiveBytes(program::CollectiveOp op, double us, uint32_t ranks) const;
  /// Microseconds to move `bytes` in direction `dir`.
  double copyTimeUs(program::CopyDirection dir, uint64_t bytes) const;
  /// The same for a pageable copy (`[pageable]`): at pageableGBps, but no
  /// faster than a pinned one.
  double pageableCopyTimeUs(program::CopyDirection dir, uint64_t bytes) const;
};

/// Reads a profile from JSON text; keys that are absent keep their defaults.
llvm::Expected<DeviceProfile> parseDeviceProfile(llvm::StringRef json);

/// Writes every key of a profile as JSON that parseDeviceProfile reads back.
void writeDeviceProfile(const DeviceProfile &profile, llvm::raw_ostream &os);

} // namespace pipec

#endif // PIPEC_PROGRAM_DEVICEPROFILE_H
