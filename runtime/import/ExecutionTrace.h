//===- ExecutionTrace.h - A PyTorch execution trace: what each op touched -===//
//
// PyTorch's execution trace (torch.profiler.ExecutionTraceObserver; the
// Chakra/PyTorch ET JSON, schemas 1.0.x and 1.1.x) records one iteration's
// ops, each with its inputs and outputs. A tensor is written
// [tensor id, storage id, offset, elements, element size, device]; the
// storage is the memory (views share it). pipec reads, of each op, its
// record-function id (`rf_id`, a key of its own in 1.0.x, an entry of
// `attrs` in 1.1.x), its name and the storages of its tensor inputs and
// outputs, with the bytes of each it reaches.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_EXECUTIONTRACE_H
#define PIPEC_RUNTIME_IMPORT_EXECUTIONTRACE_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace pipec::importer {

/// A tensor as an op saw it: the storage it lives in, and how far into it
/// it reaches.
struct EtTensor {
  uint64_t storage = 0;
  uint64_t end = 0;  ///< bytes from the storage's start: (offset + elements) * size
  bool host = false; ///< on the CPU (its device "cpu"), else on a GPU
};

struct EtOp {
  int64_t id = 0;    ///< the node's id
  int64_t rfId = -1; ///< its record function's id
  uint32_t name = 0; ///< index into ExecutionTrace::names
  std::vector<EtTensor> inputs, outputs;
};

struct ExecutionTrace {
  std::string schema;
  std::vector<std::string> names;
  llvm::StringMap<uint32_t> nameIndex;
  /// The ops in record order (by rf_id), the profiler's own nodes
  /// (`[pytorch|profiler|execution_...]`) left out.
  std::vector<EtOp> ops;
};

/// The most nodes read (a bigger trace is refused).
constexpr size_t kMaxEtNodes = size_t(1) << 22;

/// Reads `path` (JSON, or gzip-compressed): errors say what is wrong (not
/// JSON, no `nodes`, a schema pipec does not read, a node without `rf_id`).
llvm::Expected<ExecutionTrace> readExecutionTrace(llvm::StringRef path);
/// The same, from text in memory (tests, the fuzzer).
llvm::Expected<ExecutionTrace> parseExecutionTrace(llvm::StringRef text);

} // namespace pipec::importer

#endif // PIPEC_RUNTIME_IMPORT_EXECUTIONTRACE_H
