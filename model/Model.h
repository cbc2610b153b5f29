//===- Model.h - Every "what will it do, what would a change do", one place ===//
//
// The device and host model of one profile, built once per invocation: the
// run (a Backend), the graph verdict and the assignment's makespan that
// compile's choices ask, and the gap between a run and its bound. Commands
// take their answers from here, so that one question has one answer in
// every command. The pieces behind it:
//
//   DeviceModel   the event loop that simulates one replay
//   Periodic      skipping ahead in a settled periodic replay
//   SimBackend    the model behind the Backend interface
//   GraphCost     "does a graph pay?", from two runs
//   AssignmentCost  a candidate stream assignment's makespan
//   Gap           the gap cause by cause, each a mode of the model
//   Objective     what advise and run --objective minimise
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_MODEL_MODEL_H
#define PIPEC_MODEL_MODEL_H

#include "model/AssignmentCost.h"
#include "model/Gap.h"
#include "model/GraphCost.h"
#include "model/SimBackend.h"

#include <memory>

namespace pipec::model {

class Model {
public:
  explicit Model(const DeviceProfile &profile)
      : device(profile), graph(profile), assignment(profile) {}
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;

  const DeviceProfile &profile() const { return device; }

  /// A run of a schedule on the model.
  std::unique_ptr<runtime::Backend> backend() const { return runtime::makeSimBackend(device); }
  /// The same run where each kernel whose file does not say what bounds it
  /// needs the whole device's memory bandwidth and issue throughput: what
  /// overlapping such kernels gains at the least (a what-if's range).
  std::unique_ptr<runtime::Backend> contendedBackend() const {
    return runtime::makeSimBackend(device, /*dispatch=*/true, /*contendUnsaid=*/true);
  }
  /// The same run with the launches' recorded dispatch (issue=) left out:
  /// an imported step's launches as the runtime alone would issue them.
  std::unique_ptr<runtime::Backend> backendWithoutDispatch() const {
    return runtime::makeSimBackend(device, /*dispatch=*/false);
  }
  /// Each instance's start and end on the model, and nothing else kept
  /// (the import's inversion of recorded contention runs it again and
  /// again); `issueAt`, where given: each launch or cpu stage no sooner
  /// than the host made it in a recording.
  struct Times {
    std::vector<double> start, end;
    bool unfinished = false; ///< some instance never ended (a deadlock)
  };
  Times times(const Schedule &schedule, const std::vector<double> *issueAt = nullptr) const;
  /// Kernel stage `st` given `blocks` blocks for the same work: each block
  /// does more, its waves (of `wave` blocks) each take as long as one of
  /// the stage's took; the stage's new time (advise's wave-cliff what-if).
  static double timeWithBlocks(const program::Stage &st, uint64_t blocks, uint64_t wave) {
    auto waves = [&](uint64_t b) { return double((b + wave - 1) / wave); };
    const uint64_t had = st.kernel().blocks;
    return st.durationUs * (double(had) / double(blocks)) * (waves(blocks) / waves(had));
  }
  /// A run on this device with `queues` hardware queues, as
  /// CUDA_DEVICE_MAX_CONNECTIONS sets them (advise's connections what-if).
  std::unique_ptr<runtime::Backend> backendWithQueues(unsigned queues) const {
    DeviceProfile changed = device;
    changed.hardwareQueues = queues;
    return runtime::makeSimBackend(changed);
  }

  /// `options` asking this model its questions: the graph verdict and the
  /// makespan of a stream assignment (where the caller set none).
  void answerFor(ScheduleOptions &options) const {
    if (!options.graphCost)
      options.graphCost = &graph;
    if (!options.assignEvaluator)
      options.assignEvaluator = &assignment;
  }
  const GraphCostModel &graphCost() const { return graph; }
  const AssignmentEvaluator &assignmentCost() const { return assignment; }

  /// The gap between the model's run of `schedule` and its bound, cause by
  /// cause; none past kMaxGapInstances (a dozen more runs of the model:
  /// not for the largest programs), in every command alike.
  std::vector<runtime::GapPart> explainGap(const Schedule &schedule) const {
    if (schedule.instances.size() > runtime::kMaxGapInstances)
      return {};
    return runtime::explainGap(schedule, device);
  }

private:
  DeviceProfile device;
  runtime::SimGraphCost graph;
  runtime::SimAssignmentCost assignment;
};

} // namespace pipec::model

#endif // PIPEC_MODEL_MODEL_H
