// Reading Kineto traces as PyTorch writes them, and recovering orderings.

#include "compiler/program/Communication.h"
#include "runtime/import/PipeFile.h"
#include "runtime/import/Ranks.h"
#include "runtime/import/Step.h"
#include "runtime/import/Trace.h"

#include "llvm/Support/FormatVariadic.h"

#include <doctest/doctest.h>

#include "ImportedFile.h"
#include "RandomRecording.h"
#include "Seed.h"

using namespace pipec;
using namespace pipec::importer;

namespace {
std::string kernel(const char *cat, int stream, int corr, double ts, double dur,
                   int device = 0) {
  return llvm::formatv("{{\"ph\":\"X\",\"cat\":\"{0}\",\"name\":\"k{2}\",\"pid\":{5},"
                       "\"ts\":{3},\"dur\":{4},\"args\":{{\"stream\":{1},"
                       "\"correlation\":{2},\"device\":{5},\"grid\":[2,2,1],"
                       "\"block\":[64,2,1]}}",
                       cat, stream, corr, ts, dur, device)
      .str();
}
std::string runtime(const char *cat, const char *name, int corr, double ts) {
  return llvm::formatv("{{\"ph\":\"X\",\"cat\":\"{0}\",\"name\":\"{1}\",\"ts\":{3},"
                       "\"dur\":1,\"args\":{{\"correlation\":{2}}}",
                       cat, name, corr, ts)
      .str();
}
} // namespace

TEST_CASE("import: PyTorch 1.x categories read as 2.x ones; grid and block multiply") {
  std::string text = "{\"traceEvents\":[" + runtime("Runtime", "cudaLaunchKernel", 1, 10) +
                     "," + kernel("Kernel", 7, 1, 20, 5) + "]}";
  auto trace = parseTrace(text);
  REQUIRE(static_cast<bool>(trace));
  REQUIRE(trace->ops.size() == 1);
  CHECK(trace->ops[0].blocks == 4);
  CHECK(trace->ops[0].threads == 128);
  CHECK(trace->ops[0].launchTs == 10);
}

TEST_CASE("import: a multi-GPU trace keeps the busiest device") {
  std::string text = "{\"traceEvents\":[" + kernel("kernel", 7, 1, 0, 1, 0) + "," +
                     kernel("kernel", 7, 2, 0, 1, 1) + "," + kernel("kernel", 7, 3, 2, 1, 1) +
                     "]}";
  auto trace = parseTrace(text);
  REQUIRE(static_cast<bool>(trace));
  CHECK(trace->ops.size() == 2);
  CHECK(trace->otherDevices == 1);
  for (const GpuOp &op : trace->ops)
    CHECK(op.device == 1);
}

TEST_CASE("import: ids at int64's edge are ids like any other") {
  // The two largest int64 values are the reserved keys of LLVM's hash
  // maps: a stream or device so numbered must still be itself, and a
  // correlation so numbered is none (no call links to it). A stream id at
  // int64's very ends is no id: JSON readers saturate a literal past them
  // there, so 2^63 and 2^63 + 1 would share a stream.
  const char *big = "9223372036854775807", *big1 = "9223372036854775806",
             *low1 = "-9223372036854775807";
  auto op = [](const char *stream, const char *corr, double ts) {
    return llvm::formatv("{{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"k\",\"ts\":{2},"
                         "\"dur\":1,\"args\":{{\"stream\":{0},\"correlation\":{1},"
                         "\"device\":9223372036854775807}}",
                         stream, corr, ts)
        .str();
  };
  std::string text = "{\"traceEvents\":[" + op(big1, "1", 0) + "," + op(low1, "2", 1) + "," +
                     op(big1, big, 2) + "," + op("3", big1, 3) + "]}";
  auto trace = parseTrace(text);
  REQUIRE(static_cast<bool>(trace));
  REQUIRE(trace->ops.size() == 4);
  CHECK(trace->device == INT64_MAX);
  CHECK(trace->otherDevices == 0);
  CHECK(trace->ops[2].correlation == -1);
  CHECK(trace->ops[3].correlation == -1);
  auto step = selectStep(std::move(*trace), std::nullopt);
  REQUIRE(static_cast<bool>(step));
  DeviceProfile profile = profileFor(step->device);
  auto program = programOf(*step, profile);
  REQUIRE(static_cast<bool>(program));
  const program::Pipeline &p = program->pipelines.at(0);
  REQUIRE(p.streams.size() == 3);
  CHECK(p.streams[0].name == "s9223372036854775806");
  CHECK(p.streams[1].name == "s_neg9223372036854775807");
  CHECK(p.streams[2].name == "s3");
  std::vector<int32_t> streams;
  for (const program::Stage &st : p.stages)
    streams.push_back(st.stream);
  CHECK(streams == std::vector<int32_t>{0, 1, 0, 2});

  for (const char *end :
       {big, "9223372036854775808", "-9223372036854775808", "-9223372036854775809"}) {
    CAPTURE(end);
    auto saturated = parseTrace("{\"traceEvents\":[" + op(end, "1", 0) + "]}");
    REQUIRE_FALSE(static_cast<bool>(saturated));
    CHECK(llvm::toString(saturated.takeError()).find("not a stream id") != std::string::npos);
  }
}

TEST_CASE("import: a stream wait depends on the last op before the record") {
  // Stream 1: A (corr 1), B (corr 3); record at corr 2 (after A, before B).
  // Stream 2: C (corr 5) after the wait (corr 4): C depends on A, not B.
  std::string events =
      runtime("cuda_runtime", "cudaLaunchKernel", 1, 1) + "," + kernel("kernel", 1, 1, 10, 5) +
      "," + runtime("cuda_runtime", "cudaEventRecord", 2, 2) + "," +
      runtime("cuda_runtime", "cudaLaunchKernel", 3, 3) + "," + kernel("kernel", 1, 3, 16, 5) +
      "," + runtime("cuda_runtime", "cudaStreamWaitEvent", 4, 4) + "," +
      "{\"ph\":\"X\",\"cat\":\"cuda_sync\",\"name\":\"Stream Wait Event\",\"ts\":15,"
      "\"dur\":0,\"args\":{\"cuda_sync_kind\":\"Stream Wait Event\",\"stream\":2,"
      "\"correlation\":4,\"wait_on_stream\":1,\"wait_on_cuda_event_record_corr_id\":2}}," +
      runtime("cuda_runtime", "cudaLaunchKernel", 5, 5) + "," + kernel("kernel", 2, 5, 16, 5);
  auto trace = parseTrace("{\"traceEvents\":[" + events + "]}");
  REQUIRE(static_cast<bool>(trace));
  auto step = selectStep(std::move(*trace), std::nullopt);
  REQUIRE(static_cast<bool>(step));
  REQUIRE(step->stages.size() == 3);
  CHECK(step->stages[2].deps == std::vector<uint32_t>{0});
  CHECK(step->waitsIssued == 1);
}

TEST_CASE("import: deep nesting is refused before JSON's parser recurses on it") {
  std::string deep = "{\"traceEvents\":[" + std::string(100000, '[') + "]}";
  auto trace = parseTrace(deep);
  REQUIRE(!trace);
  CHECK(llvm::toString(trace.takeError()).find("nests more than 64 levels") !=
        std::string::npos);
}

TEST_CASE("import: bad input is an error, never a crash") {
  for (const char *bad : {"", "[", "{", "{\"traceEvents\":", "{\"traceEvents\":[{",
                          "{\"traceEvents\":[{\"cat\":\"kernel\"", "{\"traceEvents\":[1,2]}",
                          "{\"traceEvents\":{}}", "{\"deviceProperties\":[{\"name\":3}"}) {
    auto trace = parseTrace(bad);
    CHECK(!trace);
    llvm::consumeError(trace.takeError());
  }
}

// ---- Random recordings ------------------------------------------------------
//
// A recorded program made up as a GPU would run it: one host thread issues
// launches (after some dispatch), event records and stream waits, stream and
// device syncs, blocking copies to pageable memory and stretches of host
// work; each stream runs its ops in order, an op no sooner than its call, a
// wait's next op no sooner than the record's op ended, a sync returns once
// what it waits for ended. Then the import must keep every ordering the
// program had (the reduction's relation, host order included, reaches each
// one), state none the recording contradicts, and check clean.

#include "FrontendHelpers.h"
#include "ProgramText.h"
#include "SlowHappensBefore.h"

#include "compiler/format/Formatter.h"
#include "compiler/schedule/Schedule.h"

#include "llvm/Support/JSON.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <map>
#include <random>
#include <set>

using test::record;
using test::Recording;

TEST_CASE("import: random recordings keep every ordering, contradict none, check clean, "
          "are laid out as fmt lays them out, to the program the importer builds") {
  PIPEC_SEEDED(rng, 27);
  size_t orderings = 0, cpu = 0, idles = 0, queued = 0, polls = 0, pollSyncs = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const bool syncEvents = trial % 2 == 0;
    Recording rec = record(rng, syncEvents);
    queued += rec.queued;
    polls += rec.polls;
    INFO(rec.json);
    auto trace = parseTrace(rec.json);
    REQUIRE(static_cast<bool>(trace));
    // Recorded stream priorities (an Nsight Systems export's), some past
    // the device's range: the file and the program must say the same.
    if (trial % 3 == 0)
      for (const GpuOp &op : trace->ops)
        trace->streamPriority[op.stream] = -int64_t(rng() % 8);
    auto step = selectStep(std::move(*trace), std::nullopt);
    REQUIRE(static_cast<bool>(step));
    DeviceProfile profile = profileFor(step->device);
    // Checks clean, laid out as fmt lays it out, to the importer's program.
    std::string text;
    std::unique_ptr<test::FrontendRun> front = test::importedFile(*step, profile, text);
    INFO(text);
    size_t pollSyncsHere = 0;
    for (size_t at = text.find("stage sync_poll"); at != std::string::npos;
         at = text.find("stage sync_poll", at + 1))
      ++pollSyncsHere;
    // Each run of polls a sync (the orderings check what it waited for).
    CHECK(pollSyncsHere >= rec.polls);
    pollSyncs += pollSyncsHere;
    const program::Pipeline &p = front->program.pipelines.at(0);
    Schedule s(p, profile, ScheduleOptions());
    const size_t n = s.instances.size();
    std::vector<uint32_t> instanceOfOp = test::opInstances(s);
    for (uint32_t v = 0; v < n; ++v)
      idles +=
          !s.onHost(v) && llvm::StringRef(s.instances.stage(v).name).startswith("gpu_idle");
    REQUIRE(instanceOfOp.size() == rec.ops.size());
    // Happens-before by brute force: dependencies, stream order, host order.
    std::vector<std::vector<uint8_t>> reach = test::happensBefore(s);
    // Every ordering the program had is kept.
    for (auto [a, b] : rec.orderings) {
      INFO("recorded op " << a << " before op " << b);
      CHECK(reach[instanceOfOp[a]][instanceOfOp[b]]);
      ++orderings;
    }
    // No dependency between two ops that the recording contradicts.
    std::map<uint32_t, uint32_t> opOfInstance;
    for (uint32_t i = 0; i < instanceOfOp.size(); ++i)
      opOfInstance[instanceOfOp[i]] = i;
    for (uint32_t v = 0; v < n; ++v) {
      cpu += s.onHost(v);
      if (s.onHost(v) || !opOfInstance.count(v))
        continue;
      for (uint32_t u : s.instances.deps().row(v))
        if (!s.onHost(u) && opOfInstance.count(u))
          CHECK(rec.ops[opOfInstance[u]].end <= rec.ops[opOfInstance[v]].start + 0.5);
    }
  }
  CHECK(orderings > 1000);
  CHECK(cpu > 100);
  CHECK(idles > 10);  // graph launches' unexplained idle is kept
  CHECK(queued > 20); // ops whose call is missing, each kept behind what it waited for
  CHECK(polls > 20);
  CHECK(pollSyncs >=
        polls); // each run of polls a sync (the orderings check what it waited for)
}

// ---- The fast event reader against llvm::json's DOM ------------------------
//
// Random events, plain and not (escapes, non-ASCII, repeated keys, numbers
// at the edges of int64 and double, arrays of non-integers, JSON errors):
// the trace read with the flat fast path must equal the one read with every
// event through llvm::json, or both must fail with the same message.

namespace {

std::string describe(const Trace &t) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << "device " << t.device << " other " << t.otherDevices << "\n";
  for (const DeviceInfo &d : t.devices)
    os << "dev " << d.id << " " << d.name << " " << d.sms << "\n";
  for (const GpuOp &op : t.ops)
    os << "op " << int(op.kind) << " '" << t.names[op.name] << "' " << op.stream << " "
       << op.device << " " << llvm::formatv("{0:e} {1:e}", op.ts, op.dur) << " "
       << op.correlation << " " << op.blocks << " " << op.threads << " " << op.regs << " "
       << op.smem << " " << op.bytes << " " << int(op.direction) << " " << op.launchTs << " "
       << op.launchDur << " " << op.thread << " " << op.event << "\n";
  for (const SyncEvent &s : t.syncs)
    os << "sync " << int(s.kind) << " " << s.stream << " " << s.waitOnStream << " "
       << s.recordCorrelation << " " << s.correlation << " " << s.ts << "\n";
  for (const Step &s : t.steps)
    os << "step " << s.number << " " << s.ts << " " << s.dur << "\n";
  for (const HostCall &c : t.calls)
    os << "call " << int(c.kind) << " " << c.ts << " " << c.dur << " " << c.correlation << " "
       << c.thread << "\n";
  return os.str();
}

std::string randomNumber(std::mt19937 &rng) {
  static const char *edges[] = {"0",
                                "-0",
                                "1",
                                "7",
                                "2.5",
                                "3.0",
                                "1e3",
                                "1E+2",
                                "2e-1",
                                "-4",
                                "9223372036854775807",
                                "-9223372036854775808",
                                "18446744073709551615",
                                "123456789012345678",
                                "1234567890123456789",
                                "1e400",
                                "-1e400",
                                "4.9e-324",
                                "0.1",
                                "1.7976931348623157e308",
                                "01",
                                "+1",
                                "1.",
                                ".5",
                                "1.2.3",
                                "--1",
                                "1e",
                                "2147483647",
                                "2147483648",
                                "1024",
                                "1025",
                                "64.0",
                                "64.5"};
  if (rng() % 2)
    return edges[rng() % (sizeof edges / sizeof *edges)];
  return std::to_string(int(rng() % 2000) - 100) +
         (rng() % 3 ? "" : "." + std::to_string(rng() % 1000));
}

std::string randomString(std::mt19937 &rng) {
  static const char *names[] = {"cudaLaunchKernel",
                                "cudaStreamSynchronize",
                                "k",
                                "ProfilerStep#3",
                                "Memcpy HtoD (Pageable -> Device)",
                                "Stream Wait Event",
                                "Event Sync",
                                "kernel",
                                "gpu_memcpy",
                                "cuda_runtime",
                                "cuda_sync",
                                "gpu_memset",
                                "Kernel",
                                "Runtime",
                                "void f<\\\"a\\\">()",
                                "caf\xc3\xa9",
                                "tab\\there",
                                "\\u00e9t\\u00e9",
                                "ctl\x01",
                                "bad\xff",
                                "hipLaunchKernel",
                                "cudaMemcpy"};
  return std::string("\"") + names[rng() % (sizeof names / sizeof *names)] + "\"";
}

std::string randomValue(std::mt19937 &rng, int depth);

std::string randomArray(std::mt19937 &rng, int depth) {
  std::string out = "[";
  for (unsigned i = 0, n = rng() % 4; i < n; ++i)
    out += (i ? "," : "") + (rng() % 4 ? randomNumber(rng) : randomValue(rng, depth + 1));
  return out + "]";
}

std::string randomValue(std::mt19937 &rng, int depth) {
  switch (rng() % (depth > 2 ? 4 : 6)) {
  case 0:
    return randomNumber(rng);
  case 1:
    return randomString(rng);
  case 2:
    return rng() % 2 ? "true" : "null";
  case 3:
    return rng() % 8 ? randomNumber(rng) : "tru";
  case 4:
    return randomArray(rng, depth);
  default: {
    std::string out = "{";
    for (unsigned i = 0, n = rng() % 3; i < n; ++i)
      out += std::string(i ? "," : "") + "\"k" + std::to_string(rng() % 3) +
             "\":" + randomValue(rng, depth + 1);
    return out + "}";
  }
  }
}

std::string randomEvent(std::mt19937 &rng) {
  static const char *keys[] = {"cat", "name", "ts", "dur", "tid", "pid", "ph"};
  static const char *argKeys[] = {"stream",
                                  "correlation",
                                  "correlation_id",
                                  "device",
                                  "grid",
                                  "block",
                                  "registers per thread",
                                  "shared memory",
                                  "dynamic shared memory",
                                  "bytes",
                                  "cuda_sync_kind",
                                  "wait_on_stream",
                                  "wait_on_cuda_event_record_corr_id"};
  std::vector<std::string> fields;
  for (const char *k : keys)
    if (rng() % 6) {
      std::string v =
          !std::strcmp(k, "cat") || !std::strcmp(k, "name") || !std::strcmp(k, "ph")
              ? (rng() % 8 ? randomString(rng) : randomValue(rng, 1))
              : (rng() % 8 ? randomNumber(rng) : randomValue(rng, 1));
      fields.push_back("\"" + std::string(k) + "\":" + v);
    }
  if (rng() % 5) {
    std::string args = "{";
    bool first = true;
    for (const char *k : argKeys)
      if (rng() % 3 == 0) {
        std::string key = k;
        std::string v = key == "grid" || key == "block"
                            ? (rng() % 6 ? randomArray(rng, 1) : randomValue(rng, 1))
                        : key == "cuda_sync_kind" ? randomString(rng)
                        : rng() % 8               ? randomNumber(rng)
                                                  : randomValue(rng, 1);
        args += (first ? "" : ",") + ("\"" + key + "\":" + v);
        first = false;
      }
    if (rng() % 20 == 0)
      args += first ? "\"stream\":1,\"stream\":2" : ",\"stream\":3"; // a key twice
    fields.push_back("\"args\":" + (rng() % 10 ? args + "}" : randomValue(rng, 1)));
  }
  if (rng() % 25 == 0 && !fields.empty())
    fields.push_back(fields.front()); // a key twice at the top
  std::shuffle(fields.begin(), fields.end(), rng);
  std::string out = "{";
  for (size_t i = 0; i < fields.size(); ++i)
    out += (i ? (rng() % 10 ? "," : " , ") : "") + fields[i];
  return out + (rng() % 40 ? "}" : "");
}

} // namespace

TEST_CASE("import: several ranks' file checks clean to the program built beside it") {
  // Each rank a random recording whose first kernels are NCCL collectives
  // (two all-reduces on every rank, an all-gather on some: matched, then
  // left unmatched); the file parses, checks without a warning, is in
  // fmt's layout, and reads back to exactly the program writeRanks built.
  PIPEC_SEEDED(rng, 47);
  const char *allReduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)";
  const char *allGather = "ncclDevKernel_AllGather_RING_LL(ncclDevComm*)";
  size_t files = 0, collectives = 0, unmatched = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const size_t n = 2 + rng() % 3;
    std::vector<Rank> ranks;
    for (size_t r = 0; r < n; ++r) {
      Recording rec = record(rng, /*syncEvents=*/trial % 2 == 0);
      // Its kernels' names, in the file's order: "k<op>".
      std::vector<std::string> names;
      for (size_t at = rec.json.find("\"name\":\"k"); at != std::string::npos;
           at = rec.json.find("\"name\":\"k", at + 1))
        names.push_back(rec.json.substr(at + 8, rec.json.find('"', at + 8) - at - 8));
      for (size_t i = 0; i < names.size() && i < 3; ++i) {
        if (i == 2 && r % 2)
          break; // the all-gather: on even ranks only
        const std::string from = "\"name\":\"" + names[i] + "\"";
        const std::string to =
            std::string("\"name\":\"") + (i < 2 ? allReduce : allGather) + "\"";
        rec.json.replace(rec.json.find(from), from.size(), to);
      }
      auto trace = parseTrace(rec.json);
      REQUIRE(static_cast<bool>(trace));
      auto step = selectStep(std::move(*trace), std::nullopt);
      REQUIRE(static_cast<bool>(step));
      ranks.push_back({"rank" + std::to_string(r) + ".json", std::move(*step)});
    }
    DeviceProfile profile = profileFor(ranks[0].step.device);
    RanksSummary summary;
    auto file = writeRanks(ranks, profile, summary);
    REQUIRE(static_cast<bool>(file));
    INFO(file->text());
    ++files;
    collectives += summary.collectives;
    unmatched += summary.unmatched;
    test::FrontendRun front(file->text());
    REQUIRE(front.errors == 0);
    CHECK(front.all.empty()); // not even a warning
    llvm::StringRef parsed = front.sm->getMemoryBuffer(1)->getBuffer();
    CHECK(formatFile(front.file, parsed) == file->text());
    front.program.source = file->program.source;
    CHECK(test::programText(file->program) == test::programText(front.program));
  }
  CHECK(files == 60);
  CHECK(collectives > 60);
  CHECK(unmatched > 10);
}

TEST_CASE("import: the fast event reader reads what llvm::json reads, on random events") {
  PIPEC_SEEDED(rng, 29);
  unsigned agreedOk = 0, agreedError = 0;
  for (int round = 0; round < 3000; ++round) {
    std::string text = "{\"traceEvents\":[";
    const unsigned n = 1 + rng() % 4;
    for (unsigned i = 0; i < n; ++i)
      text += (i ? "," : "") + randomEvent(rng);
    // A kernel that always reads, so that most traces have a GPU op.
    text +=
        ",{\"cat\":\"kernel\",\"name\":\"k\",\"ts\":1,\"dur\":2,\"args\":{\"stream\":7}}]}";
    auto fast = parseTrace(text);
    auto slow = parseTraceSlowly(text);
    CAPTURE(text);
    REQUIRE(bool(fast) == bool(slow));
    if (fast) {
      CHECK(describe(*fast) == describe(*slow));
      ++agreedOk;
    } else {
      CHECK(llvm::toString(fast.takeError()) == llvm::toString(slow.takeError()));
      ++agreedError;
    }
  }
  // Both kinds of outcome were exercised.
  CHECK(agreedOk > 500);
  CHECK(agreedError > 100);
}

TEST_CASE("import: times are written as printf's %.3f writes them") {
  // writePipe formats with std::to_chars (fixed, 3 decimals), which rounds
  // the binary value exactly as glibc's printf does: the files stay the
  // same bytes. Random times of every magnitude, and halves at the edge.
  std::mt19937_64 rng(test::seed(3));
  INFO("seed " << test::seed(3) << " (PIPEC_TEST_SEED=N runs every randomized test with N)");
  std::uniform_real_distribution<double> unit(0, 1);
  size_t differ = 0;
  for (int i = 0; i < 200000; ++i) {
    double us = i % 4 == 0 ? double(rng() % 100000) / 2000 + 0.0005 // ties in decimal
                           : unit(rng) * std::pow(10.0, double(rng() % 12) - 3);
    char a[64], b[64];
    auto end = std::to_chars(a, a + sizeof a, us, std::chars_format::fixed, 3).ptr;
    std::snprintf(b, sizeof b, "%.3f", us);
    differ += std::string(a, end) != b;
  }
  CHECK(differ == 0);
}

TEST_CASE("import: a long step's file is laid out on two threads, with the first error") {
  // 2 x 70,000 stages: past the size where lay() splits the stages in two
  // halves. A kernel whose block cannot fit the recorded GPU is an error;
  // with one in each half, the first in the file is the one reported.
  ImportedStep step;
  step.names = {"void k<float>(float*)"};
  step.streams = {7};
  const uint32_t n = 140000;
  for (uint32_t i = 0; i < n; ++i) {
    GpuOp op;
    op.stream = 7;
    op.threads = 256;
    op.dur = 1.5;
    op.event = 1000 + i;
    step.ops.push_back(op);
    ImportedStage st;
    st.op = i;
    st.durUs = op.dur;
    st.name = "k_" + std::to_string(i);
    if (i)
      st.deps = {i - 1};
    step.stages.push_back(st);
  }
  DeviceProfile profile;
  profile.maxThreadsPerSM = 512;
  auto whole = writePipe(step, "long", profile);
  REQUIRE(static_cast<bool>(whole));
  // Every line laid out to the widest name: the last stage's.
  CHECK(whole->find("  stage k_0      on s7 kernel 1.5us") != std::string::npos);
  test::FrontendRun front(*whole, 0, profile);
  CHECK(front.errors == 0);
  llvm::StringRef parsed = front.sm->getMemoryBuffer(1)->getBuffer();
  CHECK(formatFile(front.file, parsed) == *whole);

  step.ops[120000].threads = 1024;
  auto late = writePipe(step, "long", profile);
  REQUIRE(!late);
  CHECK(llvm::toString(late.takeError()).find("event 121000") != std::string::npos);
  step.ops[30000].threads = 1024;
  auto early = writePipe(step, "long", profile);
  REQUIRE(!early);
  CHECK(llvm::toString(early.takeError()).find("event 31000") != std::string::npos);
}

TEST_CASE("import: NCCL kernels name their collective; nothing else does") {
  using importer::ncclCollective;
  using program::CollectiveOp;
  CHECK(ncclCollective("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)") ==
        CollectiveOp::AllReduce);
  CHECK(ncclCollective(
            "ncclDevKernel_AllGather_RING_LL(ncclDevComm*, unsigned long, ncclWork*)") ==
        CollectiveOp::AllGather);
  CHECK(ncclCollective("void ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevComm*)") ==
        CollectiveOp::ReduceScatter);
  CHECK(ncclCollective("ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclWorkElem)") ==
        CollectiveOp::Broadcast);
  // Point-to-point and reductions to one rank are no collective pipec has.
  CHECK(!ncclCollective("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"));
  CHECK(!ncclCollective("ncclKernel_Reduce_RING_LL_Sum_float(ncclWorkElem)"));
  CHECK(!ncclCollective("void at::native::vectorized_elementwise_kernel<4>(int)"));
  CHECK(!ncclCollective("my_ncclKernel_AllReduce"));
}

TEST_CASE("communication: one list of kernel names, the analysis's and the import's") {
  using program::isCommunicationKernel;
  CHECK(isCommunicationKernel("ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)"));
  CHECK(
      isCommunicationKernel("ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)"));
  CHECK(
      isCommunicationKernel("void ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*)"));
  CHECK(isCommunicationKernel("void deep_ep::intranode::dispatch<8, 768>(int4*, float*)"));
  CHECK(isCommunicationKernel("void deep_ep::internode::combine<true>(int4*)"));
  CHECK(isCommunicationKernel("pplx::a2a_dispatch_kernel(...)"));
  CHECK(isCommunicationKernel("all_to_all_kernel"));
  CHECK(isCommunicationKernel("void AllToAllV<float>(float*)"));
  CHECK(isCommunicationKernel("nvshmemi_transfer_kernel"));
  // As real traces name them: DualPipe's DeepEP build, vLLM's custom
  // all-reduce, TensorRT-LLM's, NVSHMEM's in a scope.
  CHECK(isCommunicationKernel("void dpsk::ep::internode::dispatch<true, 8>(int4*, float*)"));
  CHECK(isCommunicationKernel("void dpsk::ep::intranode::combine<float>(float*)"));
  CHECK(isCommunicationKernel("void dpsk::ep::internode::notify_dispatch<4>(int const*)"));
  CHECK(isCommunicationKernel("void vllm::cross_device_reduce_1stage<c10::BFloat16, 8>()"));
  CHECK(isCommunicationKernel("void vllm::cross_device_reduce_2stage<float, 4>()"));
  CHECK(isCommunicationKernel("void tensorrt_llm::kernels::oneShotAllReduceKernel<half>()"));
  CHECK(isCommunicationKernel("void at::cuda::(anonymous)::nvshmemi_putmem_kernel()"));
  CHECK_FALSE(isCommunicationKernel("void deep_ep::layout::get_dispatch_layout_helper"));
  CHECK_FALSE(isCommunicationKernel("void dpsk::ep::internode::get_dispatch_layout<8>()"));
  CHECK_FALSE(isCommunicationKernel("void vllm::reduce_kernel<float>()"));
  CHECK_FALSE(
      isCommunicationKernel("void vllm::moe::topk_softmax<8>()")); // routing, no data moved
  // A user's own, by --comm-kernels' pattern; a bad one is an error and
  // leaves none set.
  CHECK_FALSE(isCommunicationKernel("my_ring_exchange<float>"));
  REQUIRE(!llvm::errorToBool(program::setUserCommunicationKernels("ring_exchange|halo_")));
  CHECK(isCommunicationKernel("my_ring_exchange<float>"));
  CHECK(isCommunicationKernel("void halo_swap()"));
  CHECK_FALSE(isCommunicationKernel("void halo()"));
  llvm::Error bad = program::setUserCommunicationKernels("ring(");
  CHECK(llvm::toString(std::move(bad)).find("is not a regular expression") !=
        std::string::npos);
  CHECK_FALSE(isCommunicationKernel("my_ring_exchange<float>"));
  REQUIRE(!llvm::errorToBool(program::setUserCommunicationKernels("")));
  CHECK_FALSE(isCommunicationKernel("void at::native::vectorized_elementwise_kernel<4>"));
  CHECK_FALSE(isCommunicationKernel("dispatch_gemm")); // not an expert-parallel library's
  CHECK_FALSE(isCommunicationKernel("volta_sgemm_128x64_nn"));
}

TEST_CASE("import: a step past sema's limits is an error, as its file would be") {
  // The vector clocks: stages x streams past 2^26 (one iteration, no
  // @prev: each stage's instance is one a dependency can reach back over).
  sema::PipelineSize size;
  size.stages = 300'000;
  size.streams = 256;
  llvm::Error e = checkSize(size, "the 2 ranks' step");
  REQUIRE(static_cast<bool>(e));
  const std::string why = llvm::toString(std::move(e));
  CHECK(why.find("the 2 ranks' step is more than a .pipe pipeline may hold") == 0);
  CHECK(why.find("vector-clock entries") != std::string::npos);
  size.streams = 200; // 6 x 10^7: within
  CHECK_FALSE(static_cast<bool>(checkSize(size, "the step")));
  size.edges = kMaxInstanceEdges + 1;
  e = checkSize(size, "the step");
  REQUIRE(static_cast<bool>(e));
  CHECK(llvm::toString(std::move(e)).find("too many dependencies") != std::string::npos);
}

TEST_CASE("import: a trace's profile takes its part's peer link and NCCL's bandwidth on it") {
  struct Part {
    const char *name;
    uint32_t major, minor;
    double p2p;
  } parts[] = {
      {"Tesla V100-SXM2-32GB", 7, 0, 150},
      {"NVIDIA A100-SXM4-80GB", 8, 0, 300},
      {"NVIDIA A100-PCIE-40GB", 8, 0, 25},
      {"NVIDIA H100 80GB HBM3", 9, 0, 450},
      {"NVIDIA H200", 9, 0, 450},
      {"NVIDIA B200", 10, 0, 900},
      {"NVIDIA GeForce RTX 2080 Ti", 7, 5, 12},
      {"NVIDIA GeForce RTX 4090", 8, 9, 25},
  };
  for (const Part &part : parts) {
    DeviceInfo d;
    d.name = part.name;
    d.major = part.major;
    d.minor = part.minor;
    d.sms = 80;
    INFO(part.name);
    DeviceProfile p = profileFor(d);
    CHECK(p.p2pGBps == part.p2p);
    CHECK(p.ncclBusGBps == doctest::Approx(0.8 * part.p2p));
  }
}

TEST_CASE("import: a recorded GPU's links and memory bandwidth are its part's") {
  auto device = [](const char *name, unsigned major, unsigned minor) {
    DeviceInfo d;
    d.name = name;
    d.major = major;
    d.minor = minor;
    return d;
  };
  const DeviceProfile a100 = profileFor(device("NVIDIA A100-SXM4-80GB", 8, 0));
  CHECK(a100.p2pGBps == 300);
  CHECK(a100.memoryGBps == 2039);
  CHECK(a100.assumed("memory_GBps")); // a published figure, not measured
  CHECK(profileFor(device("NVIDIA A100-SXM4-40GB", 8, 0)).memoryGBps == 1555);
  const DeviceProfile h100 = profileFor(device("NVIDIA H100 80GB HBM3", 9, 0));
  CHECK(h100.p2pGBps == 450);
  CHECK(h100.memoryGBps == 3350);
  CHECK(profileFor(device("NVIDIA H100 PCIe", 9, 0)).memoryGBps == 2000);
  CHECK(profileFor(device("NVIDIA H100 PCIe", 9, 0)).p2pGBps == 52);
  CHECK(profileFor(device("NVIDIA H200", 9, 0)).memoryGBps == 4800);
  CHECK(profileFor(device("Tesla V100-SXM2-16GB", 7, 0)).memoryGBps == 900);
  // A part it does not know keeps the default.
  CHECK(profileFor(device("NVIDIA GeForce RTX 4090", 8, 9)).memoryGBps ==
        DeviceProfile().memoryGBps);
}
