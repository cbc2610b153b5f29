//===- JsonStream.h - JSON read a value at a time, never whole ------------===//
//
// A profiler trace can be a gigabyte of JSON (a kilobyte of gzip can be a
// gigabyte too). Its reader walks the top-level object and takes each entry
// of `traceEvents` and `deviceProperties` on its own: JsonReader keeps a
// window of the input that holds the value being looked at, reads more as
// it needs, and skips what it does not want without keeping it. Memory
// follows the largest entry, not the file.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_JSONSTREAM_H
#define PIPEC_RUNTIME_IMPORT_JSONSTREAM_H

#include "compiler/support/Fail.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>

namespace pipec::importer {

/// Where a trace's bytes come from.
class ByteSource {
public:
  virtual ~ByteSource();
  /// Up to `n` bytes into `out`; 0 at the end.
  virtual llvm::Expected<size_t> read(char *out, size_t n) = 0;
  /// At the end: whether the input ended as it should (a gzip stream that
  /// is not cut short).
  virtual llvm::Error finish() = 0;
  /// The bytes taken from the file so far: less than those read where it
  /// is compressed.
  virtual uint64_t consumed() const = 0;
};

/// A compressed input may inflate at most this many times (past
/// kInflateFloor bytes): profiler traces compress 5 to 30 times (the shared
/// real ones 32 at most, over any prefix past a MiB), a gzip bomb a
/// thousand, and what it inflates to costs CPU and memory to parse: a bomb
/// of small events is refused before it is a few MiB, not at the size cap.
constexpr uint64_t kMaxInflation = 200;
constexpr uint64_t kInflateFloor = uint64_t(1) << 20;

/// A file ('-': standard input), gunzipped when it is gzip and read as it
/// is otherwise; opened once, so a pipe or /dev/stdin reads too. `shown` is
/// its name in the message when it cannot be opened; later errors do not
/// name it (the caller does).
llvm::Expected<std::unique_ptr<ByteSource>> openFile(llvm::StringRef path,
                                                     llvm::StringRef shown);
/// Text already in memory (tests, the fuzzer).
std::unique_ptr<ByteSource> memorySource(llvm::StringRef text);
/// A recording to read: `path` opened as openFile does, except that an
/// SQLite database coming through a pipe (standard input, a FIFO: an
/// Nsight Systems export streamed in) is copied whole to a temporary file,
/// which SQLite needs, and `spooled` gets its path (the source is then
/// null; the caller reads that file and removes it).
llvm::Expected<std::unique_ptr<ByteSource>>
openRecording(llvm::StringRef path, llvm::StringRef shown, std::string &spooled);

class JsonReader {
public:
  /// `maxBytes`: the most the input may hold in all (an error past it);
  /// `maxDepth`: the deepest nesting taken.
  JsonReader(ByteSource &source, uint64_t maxBytes, unsigned maxDepth = 64);

  /// Skips white space; the next byte, or -1 at the end of the input.
  int peek();
  /// Past the byte peek() returned.
  void advance() { ++pos; }
  /// The whole value that starts here (object, array, string, number or
  /// literal), at most `maxValue` bytes; valid until the next call.
  llvm::Expected<llvm::StringRef> value(size_t maxValue);
  /// Skips the value that starts here, however long, keeping none of it.
  llvm::Error skip();
  /// An error the input gave (a damaged gzip stream, too large), if any;
  /// peek() returns -1 after one.
  llvm::Error takeError();
  /// Whether the input was cut short inside the last value asked for.
  bool truncated() const { return cut; }
  /// The input's bytes read so far.
  uint64_t bytesRead() const { return total; }

private:
  /// Reads more; false at the end of the input (or on an error).
  bool more();
  /// Scans a value from `pos`; `keep`: whether its bytes must stay in the
  /// window (value) or may be dropped as they are passed (skip).
  llvm::Expected<size_t> scan(bool keep, size_t maxValue);

  ByteSource &source;
  uint64_t maxBytes, total = 0;
  unsigned maxDepth;
  std::string window;
  size_t pos = 0;
  size_t start = 0; ///< where the value scan() read starts in the window
  bool ended = false, cut = false;
  bool sniffed = false; ///< the start looked at: a UTF-8 BOM skipped, UTF-16 named
  llvm::Error pending = llvm::Error::success();
  /// At the input's first bytes: skips a UTF-8 byte-order mark, and fails
  /// on UTF-16 or UTF-32 text (which no JSON reader takes as it is).
  bool sniff();
};

/// The largest event or device entry parsed: an event of a real trace is a
/// few hundred bytes, and one of a gigabyte (a gzip bomb's name) would be
/// parsed into as much again.
constexpr size_t kMaxEntryBytes = size_t(16) << 20;

/// Calls `each(entry text, index)` for every entry of the array that
/// starts here, one at a time. `what` names it in an error.
template <typename Each>
llvm::Error forEachEntry(JsonReader &r, llvm::StringRef what, Each each) {
  if (r.peek() != '[') {
    if (llvm::Error e = r.takeError())
      return e;
    return pipec::fail("'" + what + "' is not an array");
  }
  r.advance();
  for (uint64_t index = 0;;) {
    int c = r.peek();
    if (c == ',') {
      r.advance();
      continue;
    }
    if (c == ']') {
      r.advance();
      return llvm::Error::success();
    }
    if (c < 0) {
      if (llvm::Error e = r.takeError())
        return e;
      return pipec::fail("the trace is truncated (inside '" + what + "')");
    }
    llvm::Expected<llvm::StringRef> entry = r.value(kMaxEntryBytes);
    if (!entry) {
      llvm::Error why = entry.takeError();
      if (llvm::Error e = r.takeError()) {
        llvm::consumeError(std::move(why));
        return e;
      }
      if (r.truncated()) {
        llvm::consumeError(std::move(why));
        return pipec::fail("the trace is truncated (inside '" + what + "', entry " +
                           llvm::Twine(index) + ")");
      }
      return pipec::fail("entry " + llvm::Twine(index) + " of '" + what + "' " +
                         llvm::toString(std::move(why)) +
                         "; pipec reads entries of at most 16 MiB and 64 levels deep");
    }
    if (llvm::Error e = each(*entry, index))
      return e;
    ++index;
  }
}

/// What a reader of a top-level object says when its input is not one.
struct ObjectWords {
  llvm::StringRef notObject; ///< the input is not a JSON object
  llvm::StringRef badMember; ///< a member is not `"key": value`
  llvm::StringRef truncated; ///< the input ends inside it
};

/// The longest key forEachMember reads: no trace, export or profile has a
/// longer one.
constexpr size_t kMaxKeyBytes = 4096;

/// Calls `each(key)` for every member of the object that starts here, the
/// reader at the member's value, which `each` reads or skips (skipMember).
template <typename Each>
llvm::Error forEachMember(JsonReader &r, const ObjectWords &words, Each each) {
  if (r.peek() != '{') {
    if (llvm::Error e = r.takeError())
      return e;
    return pipec::fail(words.notObject);
  }
  r.advance();
  for (;;) {
    int c = r.peek();
    if (c == ',') {
      r.advance();
      continue;
    }
    if (c == '}')
      return llvm::Error::success();
    if (c < 0) {
      if (llvm::Error e = r.takeError())
        return e;
      return pipec::fail(words.truncated);
    }
    if (c != '"')
      return pipec::fail(words.badMember);
    llvm::Expected<llvm::StringRef> quoted = r.value(kMaxKeyBytes);
    if (!quoted) {
      llvm::consumeError(quoted.takeError());
      if (llvm::Error e = r.takeError())
        return e;
      if (!r.truncated()) // a key that goes on: no key a trace has
        return pipec::fail("it has a key over " + llvm::Twine(kMaxKeyBytes) +
                           " bytes long: no trace, export or profile has one");
      return pipec::fail(words.truncated);
    }
    std::string key = quoted->drop_front().drop_back().str();
    if (r.peek() != ':')
      return pipec::fail(words.badMember);
    r.advance();
    if (llvm::Error e = each(key))
      return e;
  }
}

/// Skips the member `key`'s value (forEachMember's `each`, for a key it
/// does not read): an error where the input ends inside it.
llvm::Error skipMember(JsonReader &r, llvm::StringRef key, llvm::StringRef truncated);

} // namespace pipec::importer

#endif // PIPEC_RUNTIME_IMPORT_JSONSTREAM_H
