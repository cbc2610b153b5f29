//===- Nsys.cpp -----------------------------------------------------------===//

#include "runtime/import/Nsys.h"

#include "compiler/support/Fail.h"
#include "compiler/support/Printable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <sqlite3.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <limits>
#include <map>
#include <optional>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>
#include <unordered_map>

using namespace pipec;
using namespace pipec::importer;
using llvm::formatv;

namespace {

/// The export schema's major versions read: 2.x (Nsight Systems before
/// 2023) and 3.x. A major version changes what tables mean.
constexpr int kLeastMajor = 2, kMostMajor = 3;
/// CUPTI's "none" for a stream or event id (a device sync's row).
constexpr int64_t kNoId = 0xFFFFFFFF;

/// One prepared statement over the export, finalized when it goes.
class Query {
public:
  Query(sqlite3 *db, const std::string &sql) {
    rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &s, nullptr);
  }
  ~Query() { sqlite3_finalize(s); }
  Query(const Query &) = delete;
  Query &operator=(const Query &) = delete;

  bool prepared() const { return rc == SQLITE_OK && s; }
  /// Steps to the next row: false at the end, or on an error (failed()).
  bool next() {
    rc = sqlite3_step(s);
    return rc == SQLITE_ROW;
  }
  bool failed() const { return rc != SQLITE_DONE && rc != SQLITE_ROW; }
  bool isNull(int c) const { return sqlite3_column_type(s, c) == SQLITE_NULL; }
  int64_t integer(int c) const { return sqlite3_column_int64(s, c); }
  llvm::StringRef text(int c) const {
    const unsigned char *t = sqlite3_column_text(s, c);
    if (!t)
      return {};
    return llvm::StringRef(reinterpret_cast<const char *>(t),
                           size_t(sqlite3_column_bytes(s, c)));
  }

private:
  sqlite3_stmt *s = nullptr;
  int rc = SQLITE_OK;
};

/// A correlation id, or -1: the largest two int64 values are no id (they
/// are the hash maps' reserved keys), as in a Kineto trace.
int64_t correlationOf(const Query &q, int c) {
  if (q.isNull(c))
    return -1;
  const int64_t id = q.integer(c);
  return id < 0 || id >= std::numeric_limits<int64_t>::max() - 1 ? -1 : id;
}

/// `path` as an SQLite URI: read-only and immutable, so that nothing is
/// written beside the user's file (no journal, no lock, no -shm).
std::string uriOf(llvm::StringRef path) {
  // An absolute path after an empty authority ("file:///..."): "file://x"
  // would read x as a host.
  std::string uri = path.startswith("/") ? "file://" : "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '.' || c == '_' || c == '-')
      uri += char(c);
    else {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", unsigned(c));
      uri += escaped;
    }
  }
  return uri + "?mode=ro&immutable=1";
}

/// `cudaLaunchKernel_v7000` -> `cudaLaunchKernel`: nsys records a runtime
/// call under its versioned entry point (a suffix of four digits or more;
/// a driver call's `_v2` is part of its name).
llvm::StringRef unversioned(llvm::StringRef name) {
  size_t at = name.rfind("_v");
  if (at == llvm::StringRef::npos)
    return name;
  llvm::StringRef digits = name.drop_front(at + 2);
  if (digits.size() < 4 || !std::all_of(digits.begin(), digits.end(), ::isdigit))
    return name;
  return name.take_front(at);
}

/// What ENUM_CUDA_MEM_KIND calls a copy's source or destination, as a
/// Kineto trace names it ("Memcpy HtoD (Pageable -> Device)").
const char *memoryKind(int64_t kind) {
  switch (kind) {
  case 0:
    return "Pageable";
  case 1:
    return "Pinned";
  case 2:
  case 5:
    return "Device";
  case 3:
    return "Array";
  case 4:
  case 6:
    return "Managed";
  default:
    return "Unknown";
  }
}

/// ENUM_CUDA_MEMCPY_OPER, as Kineto spells it.
const char *copyKind(int64_t kind) {
  switch (kind) {
  case 1:
  case 11:
    return "HtoD";
  case 2:
  case 12:
    return "DtoH";
  case 3:
    return "HtoA";
  case 4:
    return "AtoH";
  case 5:
    return "AtoA";
  case 6:
    return "AtoD";
  case 7:
    return "DtoA";
  case 8:
  case 13:
    return "DtoD";
  case 9:
    return "HtoH";
  case 10:
    return "PtoP";
  default:
    return "Unknown";
  }
}

class Reader {
public:
  ~Reader() {
    if (db)
      sqlite3_close(db);
  }

  llvm::Expected<std::vector<Trace>> read(llvm::StringRef path) {
    if (llvm::Error e = open(path))
      return e;
    if (llvm::Error e = checkSchema())
      return e;
    for (const char *t :
         {"CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY",
          "CUPTI_ACTIVITY_KIND_MEMSET", "CUPTI_ACTIVITY_KIND_RUNTIME",
          "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION", "CUPTI_ACTIVITY_KIND_CUDA_EVENT", "StringIds",
          "TARGET_INFO_GPU", "NVTX_EVENTS", "TARGET_INFO_CUDA_STREAM"}) {
      llvm::Expected<bool> is = has(t);
      if (!is)
        return is.takeError();
      present[t] = *is;
    }
    if (!present["CUPTI_ACTIVITY_KIND_KERNEL"])
      return fail(
          "it has no CUPTI_ACTIVITY_KIND_KERNEL table, so what ran on the GPU is not "
          "known (not that nothing did): record with `nsys profile --trace=cuda` (some "
          "Nsight Systems versions write no kernel table unless CUDA's raw GPU "
          "timestamps are off: CuptiUseRawGpuTimestamps=false in its config) and "
          "export again with `nsys export --type sqlite`");
    if (!present["StringIds"])
      return fail("it has no StringIds table, so its kernels and runtime calls have no names "
                  "(and what each call did is not known): export again with `nsys export "
                  "--type sqlite`");
    using Part = llvm::Error (Reader::*)();
    for (Part part :
         {&Reader::strings, &Reader::devices, &Reader::streams, &Reader::calls,
          &Reader::kernels, &Reader::copies, &Reader::memsets, &Reader::syncs, &Reader::steps})
      if (llvm::Error e = (this->*part)())
        return e;
    if (procs.count(kNoProcess) && procs.size() > 1)
      return fail("some of its rows name no process (a NULL globalPid or globalTid) beside "
                  "rows that do, so which process made them is not known: export again");
    // One recording per process with GPU work (correlation ids are each
    // process's own), in process order: a program's ranks.
    std::vector<Trace> out;
    uint64_t calls = 0;
    for (auto &[pid, p] : procs) {
      calls += p.trace.calls.size();
      if (p.trace.ops.empty())
        continue;
      // In time order, as a Kineto trace lists them (each table is its own).
      std::stable_sort(p.trace.ops.begin(), p.trace.ops.end(),
                       [](const GpuOp &a, const GpuOp &b) { return a.ts < b.ts; });
      p.trace.devices = devicesRead;
      p.trace.process = pid == kNoProcess ? -1 : (pid >> 24) & 0xFFFFFF;
      auto prio = priorities.find(p.trace.process);
      if (prio != priorities.end())
        p.trace.streamPriority = std::move(prio->second);
      finishTrace(p.trace);
      out.push_back(std::move(p.trace));
    }
    if (out.empty())
      return fail(formatv("the export has no GPU op (its kernel, memcpy and memset tables are "
                          "empty) and {0} runtime call(s): the device's activity was not "
                          "recorded; record with `nsys profile --trace=cuda`",
                          calls));
    return out;
  }

private:
  llvm::Error open(llvm::StringRef path) {
    struct stat st;
    if (::stat(path.str().c_str(), &st) == 0)
      fileBytes = uint64_t(st.st_size);
    int rc =
        sqlite3_open_v2(uriOf(path).c_str(), &db,
                        SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK)
      return fail(llvm::Twine("it cannot be opened as an SQLite database: ") +
                  printable(db ? sqlite3_errmsg(db) : sqlite3_errstr(rc)));
    // The file is someone else's: its schema runs no function of ours,
    // and nothing in it may write.
    sqlite3_db_config(db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    // No value of an export is a megabyte (a name is kept to a kilobyte).
    sqlite3_limit(db, SQLITE_LIMIT_LENGTH, 1 << 20);
    // Reading costs work in proportion to the file: a table whose values
    // are computed (a generated column) could cost any amount. SQLite
    // calls back every 1,000 of its instructions; past the budget it stops.
    budget = (fileBytes * kStepsPerByte + kLeastSteps) / 1000;
    sqlite3_progress_handler(
        db, 1000,
        [](void *self) {
          Reader &r = *static_cast<Reader *>(self);
          return int(++r.spent > r.budget);
        },
        this);
    return checkFile(path);
  }

  /// What SQLite, opened immutable, would not say: a file cut inside a
  /// page (its last rows read as NULLs), a write-ahead log not yet
  /// checkpointed (its changes not seen).
  llvm::Error checkFile(llvm::StringRef path) {
    unsigned char head[100] = {};
    int fd = ::open(path.str().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return fail(llvm::Twine("cannot read it: ") + std::strerror(errno));
    const ssize_t got = ::pread(fd, head, sizeof head, 0);
    ::close(fd);
    if (got != ssize_t(sizeof head))
      return fail("it is cut short inside the SQLite header: export it again");
    auto be = [&](int at, int n) {
      uint64_t v = 0;
      for (int i = 0; i < n; ++i)
        v = v << 8 | head[at + i];
      return v;
    };
    const uint64_t page = be(16, 2) == 1 ? 65536 : be(16, 2);
    const uint64_t pages = be(28, 4);
    // The header's page count holds when its "version valid for" matches
    // the change counter (SQLite's file format, 1.3.7).
    const bool countValid = pages != 0 && be(92, 4) == be(24, 4);
    // A page is a power of two from 512 to 65536 bytes (1 stands for 65536).
    if (page < 512 || page > 65536 || (page & (page - 1)) != 0)
      return fail(llvm::formatv("its header gives pages of {0} bytes, which SQLite never "
                                "writes (a power of two from 512 to 65536): a damaged "
                                "export; export it again",
                                page)
                      .str());
    if (fileBytes % page != 0 || (countValid && pages * page != fileBytes))
      return fail(llvm::formatv("it is cut short or padded: {0} bytes, not the {1} pages of "
                                "{2} bytes its header says; export it again",
                                fileBytes, countValid ? pages : fileBytes / page + 1, page)
                      .str());
    // A hot rollback journal: a writer stopped inside a transaction, and the
    // file holds part of it; SQLite rolls it back on the next open that may
    // write, which an immutable one is not.
    const std::string journalPath = path.str() + "-journal";
    if (int j = ::open(journalPath.c_str(), O_RDONLY | O_CLOEXEC); j >= 0) {
      static const unsigned char kMagic[8] = {0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7};
      unsigned char magic[8] = {};
      const bool hot = ::pread(j, magic, sizeof magic, 0) == ssize_t(sizeof magic) &&
                       std::memcmp(magic, kMagic, sizeof magic) == 0;
      ::close(j);
      if (hot)
        return fail("it holds an unfinished transaction ('" + printable(journalPath) +
                    "' beside it is a rollback journal still to be played back), which "
                    "pipec does not read (it opens the export read-only and changes "
                    "nothing): open it once with sqlite3 or nsys, which rolls it back, or "
                    "export again");
    }
    if (head[18] == 2 || head[19] == 2) { // write-ahead logging
      struct stat wal;
      const std::string walPath = path.str() + "-wal";
      if (::stat(walPath.c_str(), &wal) == 0 && wal.st_size > 0)
        return fail("its changes are partly in '" + printable(walPath) +
                    "', a write-ahead log not yet written back, which pipec does not read "
                    "(it opens the export read-only and changes nothing): write it back "
                    "with `sqlite3 FILE 'PRAGMA wal_checkpoint'`, or export again");
    }
    return llvm::Error::success();
  }

  llvm::Error dbError(const llvm::Twine &what) {
    return fail(what + ": " + printable(sqlite3_errmsg(db)) +
                " (a damaged, truncated or encrypted file: export it again)");
  }

  /// Whether the export has table `name`; an error when the name is
  /// something else (a view runs what its author wrote).
  llvm::Expected<bool> has(llvm::StringRef name) {
    Query q(db, "SELECT type FROM sqlite_master WHERE name = '" + name.str() + "'");
    if (!q.prepared())
      return dbError("it cannot be read as an SQLite database");
    bool table = false, other = false;
    while (q.next())
      (q.text(0) == "table" ? table : other) = true;
    if (q.failed())
      return dbError("it cannot be read as an SQLite database");
    if (other && !table)
      return fail("its " + name + " is not a table: not an export Nsight Systems wrote");
    if (!table)
      return false;
    // A table whose values are computed (generated columns, a virtual
    // table's module) runs what its author wrote on every read.
    Query sql(db, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = '" +
                      name.str() + "'");
    if (sql.prepared() && sql.next() &&
        llvm::StringRef(sql.text(0).str()).trim().startswith_insensitive("CREATE VIRTUAL"))
      return fail("its " + name + " is a virtual table: not an export Nsight Systems wrote");
    Query columns(db, "PRAGMA table_xinfo('" + name.str() + "')");
    if (!columns.prepared())
      return dbError("its " + name + " table cannot be read");
    while (columns.next())
      if (columns.integer(6) != 0) // hidden: generated or virtual
        return fail("its " + name + " table computes its column '" +
                    printable(columns.text(1)) +
                    "' (a generated column): not an export Nsight Systems wrote");
    if (columns.failed())
      return dbError("its " + name + " table cannot be read");
    return true;
  }

  llvm::Error checkSchema() {
    llvm::Expected<bool> current = has("META_DATA_EXPORT");
    if (!current)
      return current.takeError();
    llvm::Expected<bool> older = *current ? true : has("EXPORT_META_DATA");
    if (!older)
      return older.takeError();
    if (!*current && !*older) {
      // Some Nsight Systems versions wrote no metadata table. An export is
      // one by the tables pipec reads: its kernels and their names (a
      // column the schema lacks is still its own error, naming it).
      llvm::Expected<bool> kernels = has("CUPTI_ACTIVITY_KIND_KERNEL");
      if (!kernels)
        return kernels.takeError();
      llvm::Expected<bool> strings = *kernels ? has("StringIds") : false;
      if (!strings)
        return strings.takeError();
      if (*kernels && *strings) {
        schema = "unknown (no metadata table)";
        return llvm::Error::success();
      }
      return fail("an SQLite database, but not an Nsight Systems export: it has no "
                  "META_DATA_EXPORT (or EXPORT_META_DATA) table, nor the kernel and "
                  "string tables an export holds; export a report with "
                  "`nsys export --type sqlite REPORT.nsys-rep`");
    }
    const std::string table = *current ? "META_DATA_EXPORT" : "EXPORT_META_DATA";
    Query q(db, "SELECT value FROM " + table + " WHERE name = 'EXPORT_SCHEMA_VERSION'");
    if (!q.prepared())
      return dbError("its " + table + " table cannot be read");
    std::string version;
    if (q.next())
      version = q.text(0).str();
    if (q.failed())
      return dbError("its " + table + " table cannot be read");
    int major = 0;
    if (version.empty() || llvm::StringRef(version).split('.').first.getAsInteger(10, major))
      return fail("its " + table + " table gives no EXPORT_SCHEMA_VERSION: not an export " +
                  "pipec can read; export it again with `nsys export --type sqlite`");
    if (major < kLeastMajor || major > kMostMajor)
      return fail(formatv("its export schema is version {0}; pipec reads versions {1}.x to "
                          "{2}.x (Nsight Systems 2021 to 2024): export the report with an "
                          "nsys of those years",
                          printable(version), kLeastMajor, kMostMajor));
    schema = version;
    return llvm::Error::success();
  }

  /// A query over a table the schema has; its error names the table.
  llvm::Error each(llvm::StringRef table, const std::string &sql,
                   llvm::function_ref<llvm::Error(const Query &, uint64_t)> row) {
    Query q(db, sql);
    if (!q.prepared())
      return fail("its " + table + " table cannot be read: " + printable(sqlite3_errmsg(db)) +
                  " (export schema " + printable(schema) + ")");
    uint64_t index = 0;
    while (q.next())
      if (llvm::Error e = row(q, index++))
        return e;
    if (q.failed())
      return dbError("its " + table + " table cannot be read");
    return llvm::Error::success();
  }

  llvm::Error strings() {
    if (!present["StringIds"])
      return llvm::Error::success();
    return each("StringIds", "SELECT id, value FROM StringIds", [&](const Query &q, uint64_t) {
      text[q.integer(0)] = q.text(1).take_front(4096).str();
      return llvm::Error::success();
    });
  }
  llvm::StringRef stringOf(int64_t id) const {
    auto it = text.find(id);
    return it == text.end() ? llvm::StringRef() : llvm::StringRef(it->second);
  }

  /// Each process's streams' priorities (stored as CUDA's int, read back
  /// as an unsigned 32-bit number: 4294967291 is -5).
  llvm::Error streams() {
    if (!present["TARGET_INFO_CUDA_STREAM"])
      return llvm::Error::success();
    return each("TARGET_INFO_CUDA_STREAM",
                "SELECT streamId, processId, priority FROM TARGET_INFO_CUDA_STREAM",
                [&](const Query &q, uint64_t) {
                  const int64_t priority = int64_t(int32_t(uint32_t(q.integer(2))));
                  priorities[q.integer(1)][q.integer(0)] = priority;
                  return llvm::Error::success();
                });
  }

  /// A runtime call's name and what it does, once per StringIds id.
  struct CallName {
    uint32_t index = 0; ///< in trace.callNames
    HostCall::Kind kind = HostCall::Other;
  };
  /// A row without its process (a NULL globalPid or globalTid).
  static constexpr int64_t kNoProcess = std::numeric_limits<int64_t>::min();
  /// What one process recorded, and its lookups.
  struct Proc {
    Trace trace;
    std::unordered_map<int64_t, uint32_t> nameOfId;  ///< StringIds id -> trace.names
    std::unordered_map<int64_t, CallName> callNames; ///< StringIds id -> call
    std::map<std::tuple<const char *, const char *, const char *>, uint32_t> copyNames;
  };
  /// The process of a row: its globalPid, or its globalTid less the thread
  /// (the low 24 bits of nsys's serialized ids); 0 where it has none.
  static int64_t processOf(const Query &q, int c, bool) {
    if (q.isNull(c))
      return kNoProcess;
    // The thread's bits (a globalTid's, or junk in a globalPid's) are not
    // the process's.
    return q.integer(c) & ~int64_t(0xFFFFFF);
  }
  Proc &proc(int64_t pid) {
    auto [it, added] = procs.try_emplace(pid);
    if (added)
      it->second.trace.exactWaitsAdvice =
          "record with CUDA event tracing on (`nsys profile --trace=cuda "
          "--cuda-event-trace=true`, where the nsys version offers it) for the exact ones";
    return it->second;
  }

  /// The index in the process's names of `name`, added once.
  static uint32_t nameIndex(Proc &p, llvm::StringRef name) {
    Trace &trace = p.trace;
    auto [known, added] = trace.nameIndex.try_emplace(name, uint32_t(trace.names.size()));
    if (added)
      trace.names.push_back(keptName(name));
    return known->second;
  }
  /// The same for a StringIds id, looked up once per id (a step runs the
  /// same kernels many times).
  uint32_t nameOfString(Proc &p, int64_t id) {
    auto [known, added] = p.nameOfId.try_emplace(id, 0);
    if (added)
      known->second = nameIndex(p, stringOf(id));
    return known->second;
  }

  /// Room for the rows a table holds, known from its largest rowid (no
  /// scan), but never more than its file could hold.
  size_t rowsOf(llvm::StringRef table) {
    if (!present[table.str()])
      return 0;
    Query q(db, "SELECT max(rowid) FROM " + table.str());
    const int64_t rows = q.prepared() && q.next() ? q.integer(0) : 0;
    const uint64_t most = std::min<uint64_t>(fileBytes / 8, uint64_t(1) << 26);
    return size_t(std::clamp<int64_t>(rows, 0, int64_t(most)));
  }

  llvm::Error devices() {
    if (!present["TARGET_INFO_GPU"])
      return llvm::Error::success();
    std::map<int64_t, bool> seen;
    return each(
        "TARGET_INFO_GPU",
        "SELECT id, name, smCount, maxShmemPerSm, maxShmemPerBlockOptin, maxRegistersPerSm, "
        "maxWarpsPerSm, threadsPerWarp, maxThreadsPerBlock, computeMajor, computeMinor FROM "
        "TARGET_INFO_GPU",
        [&](const Query &q, uint64_t) -> llvm::Error {
          if (!seen.emplace(q.integer(0), true).second)
            return llvm::Error::success(); // one row per process that used it
          if (devicesRead.size() >= kMaxTraceDevices)
            return fail("its TARGET_INFO_GPU table lists more than " +
                        llvm::Twine(kMaxTraceDevices) + " devices");
          auto u32 = [&](int c) {
            return uint32_t(std::clamp<int64_t>(q.integer(c), 0, int64_t(1) << 30));
          };
          DeviceInfo d;
          d.id = q.integer(0);
          d.name = keptName(q.text(1));
          d.sms = u32(2);
          d.sharedMemoryPerSM = u32(3);
          d.sharedMemoryPerBlock = u32(4);
          d.registersPerSM = u32(5);
          d.maxThreadsPerSM =
              uint32_t(std::min<uint64_t>(uint64_t(u32(6)) * u32(7), 1u << 30));
          d.maxThreadsPerBlock = u32(8);
          d.major = u32(9);
          d.minor = u32(10);
          devicesRead.push_back(std::move(d));
          return llvm::Error::success();
        });
  }

  const CallName &callName(Proc &p, int64_t id) {
    auto [known, added] = p.callNames.try_emplace(id);
    if (added) {
      llvm::StringRef name = unversioned(stringOf(id));
      Trace &trace = p.trace;
      auto [at, fresh] =
          trace.callNameIndex.try_emplace(name, uint32_t(trace.callNames.size()));
      if (fresh)
        trace.callNames.push_back(keptName(name));
      known->second = {at->second, callKindOf(name)};
    }
    return known->second;
  }

  llvm::Error calls() {
    if (!present["CUPTI_ACTIVITY_KIND_RUNTIME"])
      return llvm::Error::success();
    return each("CUPTI_ACTIVITY_KIND_RUNTIME",
                "SELECT start, end, globalTid, correlationId, nameId FROM "
                "CUPTI_ACTIVITY_KIND_RUNTIME ORDER BY start",
                [&](const Query &q, uint64_t) {
                  const int64_t start = q.integer(0), end = q.integer(1);
                  if (end < start)
                    return llvm::Error::success(); // not a call pipec can place
                  const int64_t corr = correlationOf(q, 3);
                  Proc &p = proc(processOf(q, 2, /*thread=*/true));
                  Trace &trace = p.trace;
                  if (trace.calls.empty() && procs.size() == 1) { // most exports are one
                    const size_t rows = rowsOf("CUPTI_ACTIVITY_KIND_RUNTIME");
                    trace.calls.reserve(rows);
                    trace.callOf.reserve(unsigned(std::min<size_t>(rows, size_t(1) << 30)));
                  }
                  const CallName &name = callName(p, q.integer(4));
                  // A call and its versioned entry point are two rows of one
                  // correlation (cudaMalloc, cudaMalloc_v3020): one call,
                  // as long as the outer one.
                  if (corr >= 0) {
                    auto known = trace.callOf.find(corr);
                    if (known != trace.callOf.end()) {
                      HostCall &c = trace.calls[known->second];
                      const double endUs = std::max(c.ts + c.dur, double(end) / 1e3);
                      c.ts = std::min(c.ts, double(start) / 1e3);
                      c.dur = endUs - c.ts;
                      return llvm::Error::success();
                    }
                  }
                  HostCall call;
                  call.ts = double(start) / 1e3;
                  call.dur = (double(end) - double(start)) / 1e3;
                  call.correlation = corr;
                  call.thread = q.isNull(2) ? 0 : q.integer(2);
                  call.kind = name.kind;
                  call.name = name.index;
                  if (corr >= 0)
                    trace.callOf[corr] = uint32_t(trace.calls.size());
                  trace.calls.push_back(call);
                  return llvm::Error::success();
                });
  }

  /// A GPU op's common columns (start, end, deviceId, streamId,
  /// correlationId: the first five), checked as a Kineto event's are.
  static llvm::Expected<GpuOp> op(const Query &q, OpKind kind, llvm::StringRef table,
                                  uint64_t index, const Trace &trace, uint32_t name) {
    GpuOp op;
    op.kind = kind;
    op.name = name;
    const int64_t start = q.integer(0), end = q.integer(1);
    auto bad = [&](const llvm::Twine &why) {
      llvm::StringRef kept = trace.names[op.name];
      return fail("row " + llvm::Twine(index + 1) + " of " + table + " ('" +
                  kept.take_front(80) + (kept.size() > 80 ? "..." : "") + "') " + why);
    };
    if (end < start)
      return bad("ends before it starts");
    op.ts = double(start) / 1e3;
    op.dur = (double(end) - double(start)) / 1e3;
    if (op.dur > kMaxStageUs)
      return bad(formatv("lasts {0:f1} s: more than the 3600 s a .pipe stage may take",
                         op.dur / 1e6));
    op.device = q.integer(2);
    op.stream = q.integer(3);
    op.correlation = correlationOf(q, 4);
    op.event = index;
    return op;
  }

  llvm::Error kernels() {
    const char *table = "CUPTI_ACTIVITY_KIND_KERNEL";
    return each(
        table,
        "SELECT start, end, deviceId, streamId, correlationId, demangledName, "
        "registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, "
        "dynamicSharedMemory, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL",
        [&](const Query &q, uint64_t index) -> llvm::Error {
          Proc &p = proc(processOf(q, 15, /*thread=*/false));
          Trace &trace = p.trace;
          if (trace.ops.empty() && procs.size() == 1) // most exports are one process
            trace.ops.reserve(rowsOf(table) + rowsOf("CUPTI_ACTIVITY_KIND_MEMCPY") +
                              rowsOf("CUPTI_ACTIVITY_KIND_MEMSET"));
          llvm::Expected<GpuOp> k =
              op(q, OpKind::Kernel, table, index, trace, nameOfString(p, q.integer(5)));
          if (!k)
            return k.takeError();
          auto product = [&](int first, uint64_t limit) -> std::optional<uint64_t> {
            uint64_t all = 1;
            for (int c = first; c < first + 3; ++c) {
              const int64_t n = q.integer(c);
              if (n < 1 || uint64_t(n) > limit || all * uint64_t(n) > limit)
                return std::nullopt;
              all *= uint64_t(n);
            }
            return all;
          };
          std::optional<uint64_t> blocks = product(7, 2147483647), threads = product(10, 1024);
          auto bad = [&](const char *why) {
            return fail("row " + llvm::Twine(index + 1) + " of " + table + " ('" +
                        llvm::StringRef(trace.names[k->name]).take_front(80) + "') " + why);
          };
          if (!blocks)
            return bad("has a grid that is not 1 to 2147483647 blocks");
          if (!threads)
            return bad("has a block that is not 1 to 1024 threads");
          k->blocks = *blocks;
          k->threads = *threads;
          k->regs = uint32_t(std::clamp<int64_t>(q.integer(6), 0, 1 << 20));
          k->smem = uint64_t(std::clamp<int64_t>(q.integer(13), 0, int64_t(1) << 40)) +
                    uint64_t(std::clamp<int64_t>(q.integer(14), 0, int64_t(1) << 40));
          trace.ops.push_back(std::move(*k));
          return llvm::Error::success();
        });
  }

  llvm::Error copies() {
    const char *table = "CUPTI_ACTIVITY_KIND_MEMCPY";
    if (!present[table])
      return llvm::Error::success();
    return each(table,
                "SELECT start, end, deviceId, streamId, correlationId, bytes, copyKind, "
                "srcKind, dstKind, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY",
                [&](const Query &q, uint64_t index) -> llvm::Error {
                  Proc &p = proc(processOf(q, 9, /*thread=*/false));
                  Trace &trace = p.trace;
                  const int64_t kind = q.integer(6);
                  const char *from = memoryKind(q.isNull(7) ? -1 : q.integer(7)),
                             *to = memoryKind(q.isNull(8) ? -1 : q.integer(8));
                  auto [known, added] =
                      p.copyNames.try_emplace(std::make_tuple(copyKind(kind), from, to), 0);
                  if (added)
                    known->second = nameIndex(
                        p, formatv("Memcpy {0} ({1} -> {2})", copyKind(kind), from, to).str());
                  llvm::Expected<GpuOp> c =
                      op(q, OpKind::Memcpy, table, index, trace, known->second);
                  if (!c)
                    return c.takeError();
                  c->bytes = uint64_t(std::max<int64_t>(0, q.integer(5)));
                  c->direction = kind == 1 || kind == 11   ? CopyDirection::H2D
                                 : kind == 2 || kind == 12 ? CopyDirection::D2H
                                                           : CopyDirection::D2D;
                  trace.ops.push_back(std::move(*c));
                  return llvm::Error::success();
                });
  }

  llvm::Error memsets() {
    const char *table = "CUPTI_ACTIVITY_KIND_MEMSET";
    if (!present[table])
      return llvm::Error::success();
    return each(table,
                "SELECT start, end, deviceId, streamId, correlationId, bytes, globalPid FROM "
                "CUPTI_ACTIVITY_KIND_MEMSET",
                [&](const Query &q, uint64_t index) -> llvm::Error {
                  Proc &p = proc(processOf(q, 6, /*thread=*/false));
                  Trace &trace = p.trace;
                  llvm::Expected<GpuOp> m = op(q, OpKind::Memset, table, index, trace,
                                               nameIndex(p, "Memset (Device)"));
                  if (!m)
                    return m.takeError();
                  m->bytes = uint64_t(std::max<int64_t>(0, q.integer(5)));
                  trace.ops.push_back(std::move(*m));
                  return llvm::Error::success();
                });
  }

  /// The syncs, each with what it waited for: a stream wait's or an event
  /// sync's event is the latest record of its id issued before it
  /// (CUPTI_ACTIVITY_KIND_CUDA_EVENT, where the recording kept events).
  llvm::Error syncs() {
    if (!present["CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"])
      return llvm::Error::success();
    struct Record {
      int64_t correlation, stream;
    };
    // By process, then event id (each process numbers its own).
    std::map<std::pair<int64_t, int64_t>, std::vector<Record>> records;
    if (present["CUPTI_ACTIVITY_KIND_CUDA_EVENT"])
      if (llvm::Error e =
              each("CUPTI_ACTIVITY_KIND_CUDA_EVENT",
                   "SELECT streamId, correlationId, eventId, globalPid FROM "
                   "CUPTI_ACTIVITY_KIND_CUDA_EVENT WHERE correlationId IS NOT NULL",
                   [&](const Query &q, uint64_t) {
                     records[{processOf(q, 3, false), q.integer(2)}].push_back(
                         {correlationOf(q, 1), q.integer(0)});
                     return llvm::Error::success();
                   }))
        return e;
    for (auto &[id, list] : records)
      std::sort(list.begin(), list.end(), [](const Record &a, const Record &b) {
        return a.correlation < b.correlation;
      });
    std::map<int64_t, uint64_t> unresolved; // by process
    llvm::Error e =
        each("CUPTI_ACTIVITY_KIND_SYNCHRONIZATION",
             "SELECT start, streamId, correlationId, syncType, eventId, globalPid FROM "
             "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION ORDER BY start",
             [&](const Query &q, uint64_t) {
               const int64_t pid = processOf(q, 5, false);
               Trace &trace = proc(pid).trace;
               SyncEvent s;
               s.correlation = correlationOf(q, 2);
               // The call tells best (a device sync's row reads "event sync"
               // with no event); its sync type otherwise.
               HostCall::Kind call = HostCall::Other;
               auto known = trace.callOf.find(s.correlation);
               if (s.correlation >= 0 && known != trace.callOf.end())
                 call = trace.calls[known->second].kind;
               switch (call) {
               case HostCall::DeviceSync:
                 s.kind = SyncEvent::ContextSync;
                 break;
               case HostCall::StreamSync:
                 s.kind = SyncEvent::StreamSync;
                 break;
               case HostCall::EventSync:
                 s.kind = SyncEvent::EventSync;
                 break;
               case HostCall::StreamWait:
                 s.kind = SyncEvent::StreamWait;
                 break;
               default:
                 switch (q.integer(3)) {
                 case 1:
                   s.kind = SyncEvent::EventSync;
                   break;
                 case 2:
                   s.kind = SyncEvent::StreamWait;
                   break;
                 case 3:
                   s.kind = SyncEvent::StreamSync;
                   break;
                 case 4:
                   s.kind = SyncEvent::ContextSync;
                   break;
                 default:
                   return llvm::Error::success();
                 }
               }
               const int64_t stream = q.integer(1), event = q.integer(4);
               s.stream = stream == kNoId ? -1 : stream;
               if (s.kind == SyncEvent::StreamWait || s.kind == SyncEvent::EventSync) {
                 // The latest record before it: a binary search of the
                 // id's records, sorted by correlation (not a scan: a
                 // step may record one event id for every wait).
                 auto list = records.find({pid, event});
                 const Record *latest = nullptr;
                 if (event != kNoId && list != records.end() && !list->second.empty()) {
                   const std::vector<Record> &r = list->second;
                   auto after = s.correlation < 0
                                    ? r.end()
                                    : std::lower_bound(r.begin(), r.end(), s.correlation,
                                                       [](const Record &a, int64_t c) {
                                                         return a.correlation < c;
                                                       });
                   if (after != r.begin())
                     latest = &*std::prev(after);
                 }
                 if (latest) {
                   s.recordCorrelation = latest->correlation;
                   s.waitOnStream = latest->stream;
                 } else if (s.kind == SyncEvent::StreamWait) {
                   ++unresolved[pid];
                 }
               }
               s.ts = double(q.integer(0)) / 1e3;
               trace.syncs.push_back(s);
               return llvm::Error::success();
             });
    if (e)
      return e;
    // A stream wait whose event's record is not known orders nothing: with
    // none of the sync rows, the import orders each wait after everything
    // issued before it (a safe superset), as for a Kineto trace recorded
    // without sync events.
    for (auto [pid, count] : unresolved)
      proc(pid).trace.syncs.clear();

    return llvm::Error::success();
  }

  /// NVTX ranges named as PyTorch names its steps (ProfilerStep#N).
  llvm::Error steps() {
    if (!present["NVTX_EVENTS"])
      return llvm::Error::success();
    return each("NVTX_EVENTS",
                "SELECT start, end, text, textId, globalTid FROM NVTX_EVENTS WHERE end IS NOT "
                "NULL",
                [&](const Query &q, uint64_t) {
                  Trace &trace = proc(processOf(q, 4, /*thread=*/true)).trace;
                  llvm::StringRef name =
                      q.isNull(2) ? stringOf(q.isNull(3) ? -1 : q.integer(3)) : q.text(2);
                  int64_t number = 0;
                  const int64_t start = q.integer(0), end = q.integer(1);
                  if (end < start)
                    return llvm::Error::success();
                  const double ts = double(start) / 1e3,
                               dur = (double(end) - double(start)) / 1e3;
                  llvm::StringRef rest = name;
                  if (rest.consume_front("ProfilerStep#") && !rest.getAsInteger(10, number))
                    trace.steps.push_back({number, ts, dur});
                  else
                    addRange(trace, name, ts, dur);
                  return llvm::Error::success();
                });
  }

  /// SQLite's instructions per byte of the file that reading may take (a
  /// real export takes some tens), and the least for a small one.
  static constexpr uint64_t kStepsPerByte = 200, kLeastSteps = uint64_t(1) << 27;
  uint64_t budget = 0, spent = 0; ///< in thousands of instructions

  sqlite3 *db = nullptr;
  std::string schema;
  std::map<std::string, bool> present;
  std::unordered_map<int64_t, std::string> text; ///< StringIds
  uint64_t fileBytes = 0;
  std::vector<DeviceInfo> devicesRead; ///< TARGET_INFO_GPU, every process's
  std::map<int64_t, Proc> procs;       ///< by globalPid
  /// Stream priorities by process id, then stream id.
  std::map<int64_t, std::map<int64_t, int64_t>> priorities;
};

} // namespace

bool importer::isSqliteFile(llvm::StringRef path) {
  int fd = ::open(path.str().c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return false;
  struct stat st;
  char head[16] = {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  const bool magic = regular && ::pread(fd, head, sizeof head, 0) == ssize_t(sizeof head) &&
                     std::memcmp(head, kSqliteMagic, sizeof kSqliteMagic) == 0;
  ::close(fd);
  return magic;
}

llvm::Expected<std::vector<Trace>> importer::readNsys(llvm::StringRef path) {
  return Reader().read(path);
}
