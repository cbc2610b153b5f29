// The import's data: an execution trace read, linked to a Kineto trace's
// framework ops, and a step's ops given its reads and writes.

#include "compiler/format/Formatter.h"
#include "compiler/schedule/Schedule.h"
#include "runtime/import/ExecutionTrace.h"
#include "runtime/import/PipeFile.h"
#include "runtime/import/StepData.h"

#include <doctest/doctest.h>

#include "FrontendHelpers.h"
#include "ImportedFile.h"
#include "ProgramText.h"
#include "RandomRecording.h"
#include "Seed.h"
#include "SlowHappensBefore.h"

#include <map>
#include <set>

using namespace pipec;
using namespace pipec::importer;

TEST_CASE("execution trace: schemas 1.0.x and 1.1.x read to the same ops") {
  // One op's tensors: a device tensor, a list of a host and a device one,
  // an int list that is no tensor; a view (storage 6 again, further in).
  const char *v10 = R"J({"schema": "1.0.1", "nodes": [
    {"id": 2, "name": "[pytorch|profiler|execution_graph|thread]", "rf_id": 0},
    {"id": 9, "name": "aten::cat", "rf_id": 7, "parent": 2,
     "inputs": [[5, 6, 0, 1024, 4, "cuda:0"], [[1, 7, 0, 8, 2, "cpu"], [2, 8, 4, 4, 4, "cuda:0"]],
                [1024, 1024, 1, 2, 3, "x"]],
     "input_types": ["Tensor(float)", "GenericList[Tensor(half),Tensor(float)]", "GenericList[Int]"],
     "outputs": [[13, 6, 2048, 10, 4, "cuda:0"]], "output_types": ["Tensor(float)"]},
    {"id": 8, "name": "aten::mm", "rf_id": 3, "inputs": [], "input_types": [], "outputs": [], "output_types": []}]})J";
  const char *v11 = R"J({"schema": "1.1.0-chakra.0.0.4", "nodes": [
    {"id": 2, "name": "[pytorch|profiler|execution_trace|thread]", "attrs": [{"name": "rf_id", "value": 0}]},
    {"id": 9, "name": "aten::cat",
     "inputs": {"values": [[5, 6, 0, 1024, 4, "cuda:0"], [[1, 7, 0, 8, 2, "cpu"], [2, 8, 4, 4, 4, "cuda:0"]],
                           [1024, 1024, 1, 2, 3, "x"]], "shapes": [],
                "types": ["Tensor(float)", "GenericList[Tensor(half),Tensor(float)]", "GenericList[Int]"]},
     "outputs": {"values": [[13, 6, 2048, 10, 4, "cuda:0"]], "shapes": [], "types": ["Tensor(float)"]},
     "attrs": [{"name": "tid", "value": 1}, {"name": "rf_id", "type": "uint64", "value": 7}]},
    {"id": 8, "name": "aten::mm", "inputs": {"values": [], "types": []}, "outputs": {"values": []},
     "attrs": [{"name": "rf_id", "value": 3}]}]})J";
  for (const char *text : {v10, v11}) {
    auto et = parseExecutionTrace(text);
    REQUIRE(static_cast<bool>(et));
    REQUIRE(et->ops.size() == 2); // the thread's root left out
    CHECK(et->ops[0].rfId == 3);  // in record order
    CHECK(et->names[et->ops[0].name] == "aten::mm");
    const EtOp &cat = et->ops[1];
    CHECK(cat.rfId == 7);
    REQUIRE(cat.inputs.size() == 3);
    CHECK(cat.inputs[0].storage == 6);
    CHECK(cat.inputs[0].end == 4096);
    CHECK(!cat.inputs[0].host);
    CHECK(cat.inputs[1].storage == 7);
    CHECK(cat.inputs[1].end == 16);
    CHECK(cat.inputs[1].host);
    CHECK(cat.inputs[2].end == 32); // (4 + 4) * 4
    REQUIRE(cat.outputs.size() == 1);
    CHECK(cat.outputs[0].end == (2048 + 10) * 4);
  }
}

TEST_CASE("execution trace: bad input is an error that says what is wrong, never a crash") {
  struct Case {
    const char *text, *message;
  } cases[] = {
      {"", "it is empty"},
      {" ", "not an execution trace: a PyTorch execution trace"},
      {"[1, 2]", "is a JSON object with 'schema' and 'nodes'"},
      {R"J({"traceEvents": []})J", "is a JSON object with 'schema' and 'nodes'"},
      {R"J({"schema": "1.0.1", "nodes": {}})J", "'nodes' is not an array"},
      {R"J({"schema": "1.0.1", "nodes": [)J", "truncated (inside 'nodes')"},
      {R"J({"schema": "1.0.1", "nodes": [{"name": }]})J",
       "node 0 of the execution trace is not "
       "valid JSON"},
      {R"J({"nodes": []})J", "schema '' is not one pipec reads"},
      {R"J({"schema": "1.0.1", "nodes": []})J", "records no op"},
      {R"J({"schema": "1.0.1", "nodes": [3]})J",
       "node 0 of the execution trace is not an object"},
      {R"J({"schema": "1.0.1", "nodes": [{"name": "x", "rf_id": "7"}]})J", "has no 'rf_id'"},
      {R"J({"schema": "1.1.0", "nodes": [{"name": "x", "attrs": [{"name": "rf_id"}]}]})J",
       "has no 'rf_id'"},
  };
  for (const Case &c : cases) {
    INFO(std::string(c.text));
    auto et = parseExecutionTrace(c.text);
    REQUIRE(!et);
    const std::string message = llvm::toString(et.takeError());
    INFO(message);
    CHECK(llvm::StringRef(message).contains(c.message));
  }
  // Tensors pipec cannot place are not tensors: nothing of them is kept.
  auto et = parseExecutionTrace(R"J({"schema": "1.0.1", "nodes": [{"name": "x", "rf_id": 1,
    "inputs": [[1, -6, 0, 4, 4, "cuda:0"], [1, 6, -1, 4, 4, "cuda:0"], [1, 6, 0, 0, 4, "cuda:0"],
               [1, 6, 0, 4, 4000, "cuda:0"], [1, 6, 1152921504606846976, 4, 4, "cuda:0"],
               [1, 6, 0, 4, 4, 7], [1, 6.5, 0, 4, 4, "cpu"]],
    "input_types": ["Tensor", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor", "Tensor"]}]})J");
  REQUIRE(static_cast<bool>(et));
  CHECK(et->ops.at(0).inputs.empty());
}

namespace {

/// A Kineto trace's framework ops, `names` in the order they began (their
/// External ids count them), one per microsecond.
CpuOps cpuOpsNamed(const std::vector<std::string> &names) {
  CpuOps c;
  for (size_t i = 0; i < names.size(); ++i) {
    auto [it, added] = c.nameIndex.try_emplace(names[i], uint32_t(c.names.size()));
    if (added)
      c.names.push_back(names[i]);
    CpuOp op;
    op.name = it->second;
    op.ts = double(i);
    op.dur = 0.5;
    op.thread = 1;
    op.externalId = int64_t(50000 + i);
    c.ops.push_back(op);
  }
  return c;
}

ExecutionTrace etNamed(const std::vector<std::string> &names) {
  ExecutionTrace et;
  for (size_t j = 0; j < names.size(); ++j) {
    auto [it, added] = et.nameIndex.try_emplace(names[j], uint32_t(et.names.size()));
    if (added)
      et.names.push_back(names[j]);
    EtOp op;
    op.rfId = int64_t(j + 1);
    op.name = it->second;
    et.ops.push_back(op);
  }
  return et;
}

} // namespace

TEST_CASE("execution trace: alignment links an op to the one it is, or to none") {
  PIPEC_SEEDED(rng, 61);
  size_t exact = 0, links = 0, wrong = 0, originals = 0, linkedOriginals = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const size_t m = 4 + rng() % 80;
    // A rich vocabulary (real traces: hundreds of op names) or a poor one
    // (21 identical layers: every run of names repeats).
    const unsigned alphabet = trial % 3 == 0 ? 4 : 40;
    std::vector<std::string> e;
    for (size_t j = 0; j < m; ++j)
      e.push_back("aten::op" + std::to_string(rng() % alphabet));
    // The Kineto trace: several iterations of it; noisy ones lack an op, or
    // have one the execution trace never records; confusable ones also
    // have one of its names where it has no op (which of two alike is the
    // inserted one, names cannot tell).
    const bool noisy = trial % 2 == 1, confusable = noisy && trial % 4 == 3;
    std::vector<std::string> k;
    std::vector<int64_t> origin;
    for (size_t r = 1 + rng() % 4; r > 0; --r)
      for (size_t j = 0; j < m; ++j) {
        if (noisy && rng() % 40 == 0) {
          k.push_back(confusable && rng() % 2 ? "aten::op" + std::to_string(rng() % 40)
                                              : "aten::foreign");
          origin.push_back(-1);
        }
        if (noisy && rng() % 40 == 0)
          continue;
        k.push_back(e[j]);
        origin.push_back(int64_t(j));
      }
    uint64_t linked = 0;
    std::vector<int32_t> link =
        linkCpuOps(cpuOpsNamed(k), etNamed(e), DataLink::By::Alignment, linked);
    REQUIRE(link.size() == k.size());
    // Where a run of ops of one name lost one, which of them it lost names
    // cannot tell: a link anywhere in the run is as right.
    auto sameRun = [&](int64_t a, int64_t b) {
      if (a < 0 || b < 0)
        return false;
      for (int64_t x = std::min(a, b); x <= std::max(a, b); ++x)
        if (e[size_t(x)] != e[size_t(a)])
          return false;
      return true;
    };
    size_t wrongHere = 0, linksHere = 0;
    for (size_t i = 0; i < k.size(); ++i) {
      if (link[i] < 0)
        continue;
      ++linksHere;
      CHECK(e[size_t(link[i])] == k[i]); // never two names
      wrongHere += link[i] != origin[i] && !sameRun(link[i], origin[i]);
      if (origin[i] >= 0)
        ++linkedOriginals;
    }
    for (int64_t o : origin)
      originals += o >= 0;
    CHECK(linked == linksHere);
    // The same program, iteration after iteration: every op, rightly, even
    // where every run of names repeats (it follows on from the first).
    if (!noisy && m >= kAlignRun && alphabet > 4) {
      CHECK(wrongHere == 0);
      CHECK(linksHere == k.size());
      exact += linksHere == k.size();
    }
    // A rich vocabulary: no op linked to another's place.
    if (noisy && !confusable && alphabet > 4)
      CHECK(wrongHere == 0);
    links += linksHere;
    wrong += wrongHere;
  }
  CHECK(exact > 50);
  // Over all (poor vocabularies too): few wrong links, most ops linked.
  CHECK(double(wrong) <= 0.02 * double(links));
  CHECK(double(linkedOriginals) >= 0.8 * double(originals));
}

TEST_CASE("execution trace: by ids, a link only where the names agree too") {
  CpuOps c = cpuOpsNamed({"aten::mm", "aten::relu", "aten::add_", "aten::mm"});
  c.ops[0].recordFunctionId = 1;
  c.ops[1].recordFunctionId = 2;
  c.ops[2].recordFunctionId = 2; // relu's id, another name
  c.ops[3].externalId = 3;
  ExecutionTrace et = etNamed({"aten::mm", "aten::relu", "aten::mm"});
  uint64_t linked = 0;
  std::vector<int32_t> byRf = linkCpuOps(c, et, DataLink::By::RecordFunctionId, linked);
  CHECK(byRf == std::vector<int32_t>{0, 1, -1, -1});
  CHECK(linked == 2);
  std::vector<int32_t> byExt = linkCpuOps(c, et, DataLink::By::ExternalId, linked);
  CHECK(byExt == std::vector<int32_t>{-1, -1, -1, 2});
  CHECK(linked == 1);
}

namespace {

/// A framework op around each launch call of `trace` (a graph launch's
/// too), the execution trace's op of each but every tenth, with tensors
/// from a few storages (some on the host).
void frameworkOps(std::mt19937 &rng, const Trace &trace, CpuOps &cpuOps, ExecutionTrace &et) {
  cpuOps.names = {"aten::op", "aten::other"};
  et.names = {"aten::op"};
  et.nameIndex["aten::op"] = 0;
  std::set<int64_t> launching;
  for (const GpuOp &op : trace.ops)
    if (op.launchTs >= 0)
      launching.insert(op.correlation);
  for (const HostCall &call : trace.calls) {
    if (!launching.count(call.correlation))
      continue;
    CpuOp c;
    c.ts = call.ts - 0.25;
    c.dur = call.dur + 0.5;
    c.thread = call.thread;
    c.externalId = int64_t(cpuOps.ops.size());
    if (rng() % 10 == 0) {
      c.name = 1; // an op the execution trace does not hold
    } else {
      c.recordFunctionId = int64_t(et.ops.size() + 1);
      EtOp op;
      op.rfId = c.recordFunctionId;
      auto tensor = [&] {
        EtTensor t;
        t.storage = 1 + rng() % 8;
        t.host = t.storage <= 2;
        t.end = 4096 * (1 + rng() % 4);
        return t;
      };
      for (size_t n = rng() % 4; n > 0; --n)
        op.inputs.push_back(tensor());
      for (size_t n = rng() % 3; n > 0; --n)
        op.outputs.push_back(tensor());
      et.ops.push_back(op);
    }
    cpuOps.ops.push_back(c);
  }
}

} // namespace

TEST_CASE("import --et: random recordings keep every ordering and each read's write, "
          "contradict none, and check clean to the program the importer builds") {
  PIPEC_SEEDED(rng, 62);
  size_t steps = 0, freed = 0, contradicted = 0, conflicts = 0, inferred = 0;
  for (int trial = 0; trial < 300; ++trial) {
    test::Recording rec = test::record(rng, trial % 2 == 0);
    INFO(rec.json);
    auto trace = parseTrace(rec.json);
    REQUIRE(static_cast<bool>(trace));
    CpuOps cpuOps;
    ExecutionTrace et;
    frameworkOps(rng, *trace, cpuOps, et);
    auto step = selectStep(std::move(*trace), std::nullopt);
    REQUIRE(static_cast<bool>(step));
    auto link = addData(*step, cpuOps, et, 0.01);
    if (!link) { // nothing of the step linked: said, and the step untouched
      CHECK(llvm::StringRef(llvm::toString(link.takeError())).contains("short of the 1%"));
      CHECK(step->buffers.empty());
      continue;
    }
    ++steps;
    freed += link->streamOrders;
    contradicted += link->contradicted;
    DeviceProfile profile = profileFor(step->device);
    // Checks clean, laid out as fmt lays it out, to the importer's program.
    std::string text;
    std::unique_ptr<test::FrontendRun> front = test::importedFile(*step, profile, text);
    INFO(text);
    const program::Pipeline &p = front->program.pipelines.at(0);
    Schedule s(p, profile, ScheduleOptions());
    const size_t n = s.instances.size();
    std::vector<uint32_t> instanceOfOp = test::opInstances(s);
    REQUIRE(instanceOfOp.size() == rec.ops.size());
    std::vector<std::vector<uint8_t>> reach = test::happensBefore(s);
    // Every ordering the recorded program had still holds (stream order
    // keeps what the data no longer declares).
    for (auto [a, b] : rec.orderings)
      CHECK(reach[instanceOfOp[a]][instanceOfOp[b]]);
    // No dependency, declared or inferred, that the recording contradicts.
    std::map<uint32_t, uint32_t> opOfInstance;
    for (uint32_t i = 0; i < instanceOfOp.size(); ++i)
      opOfInstance[instanceOfOp[i]] = i;
    for (uint32_t v = 0; v < n; ++v) {
      if (!opOfInstance.count(v))
        continue;
      const uint64_t base = s.instances.deps().begin[v];
      llvm::ArrayRef<uint32_t> row = s.instances.deps().row(v);
      for (size_t i = 0; i < row.size(); ++i) {
        inferred += s.instances.inferredFrom(base + i) >= 0;
        if (opOfInstance.count(row[i]))
          CHECK(rec.ops[opOfInstance[row[i]]].end <= rec.ops[opOfInstance[v]].start + 0.5);
      }
    }
    // Each two accesses of a buffer, one a write, are ordered as declared.
    for (uint32_t u = 0; u < n; ++u)
      for (uint32_t v = u + 1; v < n; ++v) {
        const program::Stage &a = s.instances.stage(u), &b = s.instances.stage(v);
        bool conflict = false;
        for (const program::Access &x : a.accesses)
          for (const program::Access &y : b.accesses)
            conflict |= x.buffer == y.buffer && (x.write || y.write);
        if (!conflict)
          continue;
        ++conflicts;
        CHECK(reach[u][v]);
      }
  }
  CHECK(steps > 250);
  CHECK(freed > 300);        // same-stream order left to the data
  CHECK(contradicted > 100); // accesses the recording contradicts, left out
  CHECK(conflicts > 300);
  CHECK(inferred > 100);
}
