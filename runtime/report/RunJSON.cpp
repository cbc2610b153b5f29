//===- RunJSON.cpp - The run result (docs/scheduling.md) ------------------===//

#include "runtime/report/Reports.h"

#include "compiler/emit/Emitters.h"
#include "model/GraphCost.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace pipec;
using namespace pipec::runtime;

void runtime::writeRunJSON(llvm::ArrayRef<LoweringRun> runs, const Backend &backend,
                           llvm::raw_ostream &os) {
  llvm::json::OStream j(os, 0);
  auto number = [&](llvm::StringRef key, double value) {
    writeNumberAttribute(j, key, value);
  };
  j.object([&] {
    j.attribute("format", "pipec-run");
    j.attribute("version", 3);
    j.attribute("backend", backend.name());
    j.attribute("device", backend.device());
    j.attributeArray("pipelines", [&] {
      for (const LoweringRun &r : runs) {
        const Schedule &s = *r.schedule;
        j.object([&] {
          j.attribute("name", s.pipeline.name);
          j.attribute("lowering", spelling(r.lowering));
          j.attribute("replays", int64_t(r.replays));
          j.attribute("timing", spelling(r.timing));
          j.attributeObject("timings_us", [&] {
            number("capture", r.timings.capture);
            number("instantiate", r.timings.instantiate);
            number("first_launch", r.timings.firstLaunch);
            number("replay_median", r.timings.replayMedian);
            number("replay_p95", r.timings.replayP95);
            number("submit_median", r.timings.submitMedian);
          });
          j.attributeObject("host_us", [&] {
            number("cpu", r.hostUs.cpu);
            number("issue", r.hostUs.issue);
            number("api", r.hostUs.api);
            number("blocked", r.hostUs.blocked);
          });
          // Several devices: each one's host thread (host_us adds them up).
          if (!r.hostThreadsUs.empty())
            j.attributeArray("host_threads_us", [&] {
              for (size_t d = 0; d < r.hostThreadsUs.size(); ++d)
                j.object([&] {
                  j.attribute("device", r.schedule->pipeline.devices[d].name);
                  number("cpu", r.hostThreadsUs[d].cpu);
                  number("issue", r.hostThreadsUs[d].issue);
                  number("api", r.hostThreadsUs[d].api);
                  number("blocked", r.hostThreadsUs[d].blocked);
                });
            });
          number("makespan_us", r.makespanUs);
          if (!r.devices.empty())
            writeDeviceUses(j, r.devices);
          if (!r.objectiveWords.empty())
            j.attributeObject("objective", [&] {
              j.attribute("name", r.objectiveWords);
              number("us", r.objectiveUs);
            });
          if (!r.gap.empty())
            j.attributeArray("gap", [&] {
              for (const GapPart &part : r.gap)
                j.object([&] {
                  j.attribute("cause", part.cause);
                  number("us", part.us);
                  number("share_us", part.shareUs);
                  if (!part.with.empty())
                    j.attribute("with", part.with);
                  if (!part.assumed.empty())
                    j.attribute("assumed", part.assumed);
                });
            });
          j.attributeArray("stages", [&] {
            for (uint32_t v = 0; v < r.start.size(); ++v)
              j.object([&] {
                j.attribute("id", int64_t(v));
                j.attribute("instance", s.instances.name(v));
                if (s.onHost(v))
                  j.attribute("stream", nullptr);
                else
                  j.attribute("stream", s.stream(s.streamOf(v)).name);
                // Several devices: the device it ran on (a cpu stage: whose
                // host thread ran it), as in the schedule.
                if (s.pipeline.devices.size() > 1)
                  j.attribute("device", s.pipeline.devices[s.threadOf(v)].name);
                number("start_us", r.start[v] - r.firstStartUs);
                number("end_us", r.end[v] - r.firstStartUs);
              });
          });
          j.attribute("dependency_violations", int64_t(r.violations));
          if (r.timing != TimingMethod::Model)
            number("violation_slack_us", r.violationSlackUs);
          if (!r.timingNote.empty())
            j.attribute("timing_note", r.timingNote);
          if (!r.notes.empty())
            j.attributeArray("notes", [&] {
              for (const std::string &note : r.notes)
                j.value(note);
            });
          // --lower=both: the one graph verdict, from this pair of runs.
          for (const LoweringRun &other : runs)
            if (other.schedule == r.schedule && other.lowering != r.lowering) {
              const LoweringRun &st = r.lowering == Lowering::Streams ? r : other;
              const LoweringRun &gr = r.lowering == Lowering::Streams ? other : r;
              GraphAdvice g = compareRuns(st, gr, r.replays);
              j.attributeObject("comparison", [&] { writeGraphCosts(j, g); });
            }
          number("lower_bound_us", s.analysis.lowerBoundUs);
          number("sequential_us", s.analysis.sequentialUs);
        });
      }
    });
  });
  os << '\n';
}
