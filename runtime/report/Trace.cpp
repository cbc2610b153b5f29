//===- Trace.cpp - Chrome trace-event JSON, for Perfetto ------------------===//

#include "runtime/report/Reports.h"

#include "compiler/emit/Emitters.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace pipec;
using namespace pipec::runtime;

void runtime::writeTrace(llvm::ArrayRef<LoweringRun> runs, llvm::raw_ostream &os) {
  llvm::json::OStream j(os, 0);
  auto number = [&](llvm::StringRef key, double value) {
    writeNumberAttribute(j, key, value);
  };
  auto metadata = [&](const char *what, int64_t pid, int64_t tid, const std::string &name) {
    j.object([&] {
      j.attribute("name", what);
      j.attribute("ph", "M");
      j.attribute("pid", pid);
      j.attribute("tid", tid);
      j.attributeObject("args", [&] { j.attribute("name", name); });
    });
  };
  j.object([&] {
    j.attributeArray("traceEvents", [&] {
      int64_t nextPid = 1;
      for (size_t i = 0; i < runs.size(); ++i) {
        const LoweringRun &r = runs[i];
        const Schedule &s = *r.schedule;
        const int64_t pid = nextPid++;
        const std::string process = s.pipeline.name + " (" + spelling(r.lowering) + ")";
        metadata("process_name", pid, 0, process);
        // Several devices: each one's host thread (tid 0) and streams in a
        // process of its own, after the pipeline's, as one process a rank.
        std::vector<int64_t> devicePid;
        if (s.pipeline.devices.size() > 1)
          for (const program::Device &d : s.pipeline.devices) {
            devicePid.push_back(nextPid++);
            metadata("process_name", devicePid.back(), 0, process + " device " + d.name);
            metadata("thread_name", devicePid.back(), 0, "host");
          }
        else
          metadata("thread_name", pid, 0, "host");
        auto streamPid = [&](uint32_t st) {
          return devicePid.empty() ? pid : devicePid[s.stream(st).device];
        };
        auto hostPid = [&](uint32_t thread) {
          return devicePid.empty() ? pid : devicePid[thread];
        };
        for (uint32_t st = 0; st < s.streamPlan.streams.size(); ++st)
          metadata("thread_name", streamPid(st), int64_t(st) + 1,
                   "stream " + s.stream(st).name);
        const uint32_t shown =
            static_cast<uint32_t>(std::min<size_t>(r.start.size(), kMaxTraceInstances));
        if (shown < r.start.size())
          j.object([&] {
            j.attribute("name", llvm::formatv("pipec: the first {0} of {1} stage "
                                              "instances (and their host calls) are "
                                              "shown",
                                              shown, r.start.size())
                                    .str());
            j.attribute("ph", "i");
            j.attribute("s", "p");
            j.attribute("pid", pid);
            j.attribute("tid", 0);
            number("ts", r.firstStartUs);
          });
        size_t calls = 0;
        for (const HostCall &h : r.host) {
          if (h.instance != UINT32_MAX && h.instance >= shown)
            continue;
          if (++calls > kMaxTraceInstances)
            break;
          j.object([&] {
            j.attribute("name", h.instance == UINT32_MAX ? std::string(h.what)
                                                         : std::string(h.what) + " " +
                                                               s.instances.name(h.instance));
            j.attribute("cat", "api");
            j.attribute("ph", "X");
            j.attribute("pid", hostPid(h.thread));
            j.attribute("tid", 0);
            number("ts", h.start);
            number("dur", h.end - h.start);
          });
        }
        for (uint32_t v = 0; v < shown; ++v) {
          const program::Stage &stage = s.instances.stage(v);
          j.object([&] {
            j.attribute("name", s.instances.name(v));
            j.attribute("cat", spelling(stage.kind()));
            j.attribute("ph", "X");
            j.attribute("pid",
                        s.onHost(v) ? hostPid(s.threadOf(v)) : streamPid(s.streamOf(v)));
            // A cpu stage runs on its host thread, beside its calls.
            j.attribute("tid", s.onHost(v) ? int64_t(0) : int64_t(s.streamOf(v)) + 1);
            number("ts", r.start[v]);
            number("dur", r.end[v] - r.start[v]);
            j.attributeObject("args", [&] {
              j.attribute("stage", stage.name);
              j.attribute("iteration", int64_t(s.instances.iterationOf(v)));
              j.attribute("stream",
                          s.onHost(v) ? std::string("host") : s.stream(s.streamOf(v)).name);
              if (!devicePid.empty())
                j.attribute("device", s.pipeline.devices[s.threadOf(v)].name);
            });
          });
        }
      }
    });
    j.attribute("displayTimeUnit", "ns");
  });
  os << '\n';
}
