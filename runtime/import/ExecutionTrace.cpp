//===- ExecutionTrace.cpp - A PyTorch execution trace, read ---------------===//

#include "runtime/import/ExecutionTrace.h"

#include "compiler/support/Fail.h"
#include "runtime/import/JsonStream.h"
#include "runtime/import/Trace.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"

#include <algorithm>
#include <optional>

using namespace pipec;
using namespace pipec::importer;

namespace {

/// A tensor's six numbers, [tensor, storage, offset, elements, size,
/// device]; false for anything else (a list of them is looked into).
bool tensorOf(const llvm::json::Array &a, EtTensor &t) {
  if (a.size() != 6)
    return false;
  llvm::Optional<int64_t> storage = a[1].getAsInteger(), offset = a[2].getAsInteger(),
                          elements = a[3].getAsInteger(), size = a[4].getAsInteger();
  llvm::Optional<llvm::StringRef> device = a[5].getAsString();
  if (!a[0].getAsInteger() || !storage || !offset || !elements || !size || !device)
    return false;
  if (*storage <= 0 || *offset < 0 || *elements <= 0 || *size <= 0 || *size > 64 ||
      *offset > (int64_t(1) << 50) || *elements > (int64_t(1) << 50))
    return false; // no memory (an empty or undefined tensor), or no real one
  t.storage = uint64_t(*storage);
  t.end = uint64_t(*offset + *elements) * uint64_t(*size);
  t.host = device->startswith("cpu");
  return true;
}

/// Every tensor in `v` (a tensor, or lists of them, a few deep).
void collectTensors(const llvm::json::Value &v, std::vector<EtTensor> &out, int depth = 0) {
  const llvm::json::Array *a = v.getAsArray();
  if (!a || depth > 4)
    return;
  EtTensor t;
  if (tensorOf(*a, t)) {
    out.push_back(t);
    return;
  }
  for (const llvm::json::Value &e : *a)
    collectTensors(e, out, depth + 1);
}

/// The tensors of `inputs` or `outputs`: in 1.0.x an array of values beside
/// `input_types`; in 1.1.x an object with `values` and `types`.
void tensorsOf(const llvm::json::Object &node, llvm::StringRef key, llvm::StringRef typesKey,
               std::vector<EtTensor> &out) {
  const llvm::json::Array *values = node.getArray(key), *types = node.getArray(typesKey);
  if (const llvm::json::Object *o = node.getObject(key)) {
    values = o->getArray("values");
    types = o->getArray("types");
  }
  if (!values)
    return;
  for (size_t i = 0; i < values->size(); ++i) {
    if (types && i < types->size())
      if (llvm::Optional<llvm::StringRef> type = (*types)[i].getAsString())
        if (!type->contains("Tensor"))
          continue;
    collectTensors((*values)[i], out);
  }
}

/// `rf_id`: its own key (1.0.x), or an entry of `attrs` (1.1.x).
std::optional<int64_t> rfIdOf(const llvm::json::Object &node) {
  if (llvm::Optional<int64_t> id = node.getInteger("rf_id"))
    return *id;
  if (const llvm::json::Array *attrs = node.getArray("attrs"))
    for (const llvm::json::Value &a : *attrs)
      if (const llvm::json::Object *o = a.getAsObject())
        if (o->getString("name") == llvm::StringRef("rf_id"))
          if (llvm::Optional<int64_t> id = o->getInteger("value"))
            return *id;
  return std::nullopt;
}

} // namespace

namespace {

/// One entry of `nodes`.
llvm::Error readNode(llvm::StringRef entry, uint64_t index, ExecutionTrace &et) {
  if (index >= kMaxEtNodes)
    return fail(llvm::formatv("the execution trace has more than the {0} nodes pipec reads",
                              kMaxEtNodes)
                    .str());
  llvm::Expected<llvm::json::Value> v = llvm::json::parse(entry);
  if (!v)
    return fail("node " + llvm::Twine(index) +
                " of the execution trace is not valid JSON: " + llvm::toString(v.takeError()));
  const llvm::json::Object *node = v->getAsObject();
  if (!node)
    return fail("node " + llvm::Twine(index) + " of the execution trace is not an object");
  llvm::StringRef name = node->getString("name").getValueOr("");
  if (name.startswith("[pytorch|profiler|execution_"))
    return llvm::Error::success(); // the process and thread roots
  std::optional<int64_t> rfId = rfIdOf(*node);
  if (!rfId)
    return fail("node " + llvm::Twine(index) + " ('" + keptName(name) +
                "') of the execution trace has no 'rf_id'");
  EtOp op;
  op.id = node->getInteger("id").getValueOr(-1);
  op.rfId = *rfId;
  auto [known, added] = et.nameIndex.try_emplace(name, uint32_t(et.names.size()));
  if (added)
    et.names.push_back(keptName(name));
  op.name = known->second;
  tensorsOf(*node, "inputs", "input_types", op.inputs);
  tensorsOf(*node, "outputs", "output_types", op.outputs);
  et.ops.push_back(std::move(op));
  return llvm::Error::success();
}

/// The top-level object walked, each node parsed on its own: memory
/// follows the ops kept, not the file's text.
llvm::Expected<ExecutionTrace> readFrom(JsonReader &r) {
  const char *notOne = "not an execution trace: a PyTorch execution trace (from "
                       "torch.profiler.ExecutionTraceObserver) is a JSON object with 'schema' "
                       "and 'nodes'";
  const ObjectWords words{notOne, notOne, "the execution trace is truncated"};
  ExecutionTrace et;
  bool sawNodes = false;
  llvm::Error read = forEachMember(r, words, [&](const std::string &key) -> llvm::Error {
    if (key == "nodes" && !sawNodes) {
      sawNodes = true;
      return forEachEntry(r, "nodes", [&](llvm::StringRef entry, uint64_t index) {
        return readNode(entry, index, et);
      });
    }
    if (key != "schema")
      return skipMember(r, key, words.truncated);
    llvm::Expected<llvm::StringRef> value = r.value(4096);
    if (!value) {
      llvm::consumeError(value.takeError());
      return fail("the execution trace's 'schema' is not a short string");
    }
    llvm::Expected<llvm::json::Value> schema = llvm::json::parse(*value);
    if (!schema)
      return fail("the execution trace's 'schema' is not valid JSON: " +
                  llvm::toString(schema.takeError()));
    et.schema = schema->getAsString().getValueOr("").str();
    return llvm::Error::success();
  });
  if (read)
    return llvm::Error(std::move(read));
  if (!sawNodes)
    return fail(notOne);
  if (!llvm::StringRef(et.schema).startswith("1.0.") &&
      !llvm::StringRef(et.schema).startswith("1.1."))
    return fail("execution trace schema '" + keptName(et.schema) +
                "' is not one pipec reads (1.0.x, 1.1.x)");
  std::stable_sort(et.ops.begin(), et.ops.end(),
                   [](const EtOp &a, const EtOp &b) { return a.rfId < b.rfId; });
  if (et.ops.empty())
    return fail("the execution trace records no op");
  return et;
}

} // namespace

llvm::Expected<ExecutionTrace> importer::parseExecutionTrace(llvm::StringRef text) {
  std::unique_ptr<ByteSource> source = memorySource(text);
  JsonReader reader(*source, kMaxTraceBytes);
  return readFrom(reader);
}

llvm::Expected<ExecutionTrace> importer::readExecutionTrace(llvm::StringRef path) {
  const std::string shown = path == "-" ? "<stdin>" : keptName(path);
  llvm::Expected<std::unique_ptr<ByteSource>> source = openFile(path, shown);
  if (!source)
    return source.takeError();
  JsonReader reader(**source, kMaxTraceBytes);
  llvm::Expected<ExecutionTrace> et = readFrom(reader);
  if (!et)
    return fail("'" + shown + "': " + llvm::toString(et.takeError()));
  return et;
}
