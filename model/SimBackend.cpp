//===- SimBackend.cpp - The device model behind the Backend interface -----===//
//
// The model is deterministic, so every replay takes the same time: one
// replay is simulated and stands for all of them.
//
//===----------------------------------------------------------------------===//

#include "model/SimBackend.h"
#include "compiler/schedule/GraphShapes.h"
#include "model/DeviceModel.h"
#include "runtime/Backend.h"

using namespace pipec;
using namespace pipec::runtime;

namespace {

class SimBackend : public Backend {
public:
  SimBackend(const DeviceProfile &profile, bool dispatch, bool contendUnsaid)
      : profile(profile), dispatch(dispatch), contendUnsaid(contendUnsaid) {}

  const char *name() const override { return "sim"; }
  std::string device() const override { return profile.name; }

  llvm::Expected<LoweringRun> run(const Schedule &s, Lowering lowering,
                                  const RunOptions &options) override {
    sim::ModelOptions model;
    model.priorities = options.priorities;
    model.recordHost = options.recordHost;
    model.extrapolate = options.extrapolate && !options.recordHost;
    model.starts = options.timeline;
    model.dispatch = dispatch;
    model.contendUnsaid = contendUnsaid;
    sim::ReplayTrace trace = sim::simulate(s, lowering, profile, model);
    if (trace.unfinished)
      return deadlock(s, trace);

    LoweringRun r;
    r.schedule = &s;
    r.lowering = lowering;
    r.replays = options.replays;
    r.start = std::move(trace.start);
    r.end = std::move(trace.end);
    r.host = std::move(trace.host);
    r.hostUs = trace.hostTime;
    r.hostThreadsUs = std::move(trace.threadTime);
    r.simulatedEvents = trace.simulatedEvents;
    r.extrapolatedIterations = trace.extrapolatedIterations;
    if (options.timeline)
      summarise(r);
    else
      std::vector<double>().swap(r.end);

    Timings &t = r.timings;
    t.submitMedian = trace.submitUs;
    t.replayMedian = t.replayP95 = trace.doneUs;
    t.firstLaunch = trace.doneUs;
    if (lowering == Lowering::Graph) {
      // One graph per distinct segment (a loop's body, captured once):
      // capturing it issues its stream lowering's calls once, without
      // running them; instantiating it costs per node, and its first
      // launch uploads every node.
      uint32_t graphs = 0;
      const std::vector<uint32_t> same = sameGraphAs(s, graphs);
      auto counted = [&](uint32_t v) {
        const uint32_t g = s.segmentOf[v];
        return g != kNoSegment && same[g] == g;
      };
      double capture = 0;
      for (const Op &op : s.ops)
        if ((op.kind == Op::Launch || op.kind == Op::Record || op.kind == Op::Wait) &&
            counted(op.instance))
          capture += op.kind == Op::Launch   ? profile.launchUs
                     : op.kind == Op::Record ? profile.recordUs
                                             : profile.waitUs;
      size_t nodes = 0;
      for (uint32_t v = 0; v < s.instances.size(); ++v)
        nodes += counted(v);
      t.capture = capture;
      t.instantiate = double(nodes) * profile.instantiateNodeUs;
      t.firstLaunch = trace.doneUs + double(nodes) * profile.uploadNodeUs;
      r.segments = std::max(1u, s.segments);
      r.graphs = graphs;
    }
    return r;
  }

private:
  /// A run that never ends gives no figures: which instance is stuck, and
  /// the mechanism, if the program has one the model knows.
  llvm::Error deadlock(const Schedule &s, const sim::ReplayTrace &trace) const {
    bool collectives = false;
    for (const program::Stage &st : s.pipeline.stages)
      collectives |= program::isCollective(st);
    std::string why =
        collectives
            ? "a collective's part holds its device until every part has begun, and "
              "parts issued in different orders on different devices, sharing "
              "hardware queues (" +
                  std::to_string(profile.hardwareQueues) + "), resident kernels (" +
                  std::to_string(profile.maxResidentKernels) + ") or SMs (" +
                  std::to_string(profile.sms) + ", " + std::to_string(profile.ncclChannels) +
                  " a collective's part), wait for each other (NCCL hangs the same way): "
                  "issue the collectives in one order on every device"
            : "no mechanism of the model explains it: a defect of pipec's";
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the device model deadlocks: %llu of %zu stage instances never end, the first "
        "'%s'; %s",
        static_cast<unsigned long long>(trace.unfinished), s.instances.size(),
        s.instances.name(trace.firstUnfinished).c_str(), why.c_str());
  }

  DeviceProfile profile;
  bool dispatch;      ///< launches pay their `issue=` time
  bool contendUnsaid; ///< ModelOptions::contendUnsaid
};

} // namespace

std::unique_ptr<Backend> runtime::makeSimBackend(const DeviceProfile &profile, bool dispatch,
                                                 bool contendUnsaid) {
  return std::make_unique<SimBackend>(profile, dispatch, contendUnsaid);
}
