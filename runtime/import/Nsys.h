//===- Nsys.h - An Nsight Systems SQLite export, read for its GPU work ----===//
//
// `nsys export --type sqlite` writes one table per CUPTI activity kind:
// CUPTI_ACTIVITY_KIND_KERNEL, _MEMCPY and _MEMSET (the GPU ops, times in
// nanoseconds), _RUNTIME (the host's API calls, joined to the ops on
// correlationId), _SYNCHRONIZATION (what a sync or a stream wait waited
// for) and, where the recording kept CUDA events, _CUDA_EVENT (which
// record an event id stands for); names are in StringIds, the GPUs in
// TARGET_INFO_GPU, ProfilerStep#N ranges in NVTX_EVENTS. They fill the
// same Trace a Kineto trace does, so that every later step of the import
// is the same for both.
//
// The file is opened read-only and immutable (nothing is written beside
// it), its schema version checked (META_DATA_EXPORT, or EXPORT_META_DATA
// in exports before 3.0), and every table read must be a table (a view or
// a missing one is an error naming it): a missing kernel table is "cannot
// answer", never "no kernels".
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_NSYS_H
#define PIPEC_RUNTIME_IMPORT_NSYS_H

#include "runtime/import/Trace.h"

namespace pipec::importer {

/// How an SQLite database's file begins (with its NUL: 16 bytes).
constexpr char kSqliteMagic[] = "SQLite format 3";

/// Whether `path` is a regular file that starts as an SQLite database does.
bool isSqliteFile(llvm::StringRef path);

/// The export at `path`: one Trace per process that ran GPU work (their
/// correlation and event ids are each process's own), in process order;
/// errors say what is missing and what to record or export again.
llvm::Expected<std::vector<Trace>> readNsys(llvm::StringRef path);

} // namespace pipec::importer

#endif // PIPEC_RUNTIME_IMPORT_NSYS_H
