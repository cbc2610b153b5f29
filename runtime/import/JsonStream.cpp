//===- JsonStream.cpp -----------------------------------------------------===//

#include "runtime/import/JsonStream.h"
#include "compiler/support/Fail.h"
#include "compiler/support/Printable.h"
#include "runtime/import/Nsys.h"

#include <zlib.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace pipec;
using namespace pipec::importer;

namespace {

/// A file read with zlib's inflate where it starts as gzip does (every
/// member of a concatenated gzip file in turn), and as it is otherwise.
/// It counts the bytes it takes from the file itself, which gzread's
/// gzoffset cannot do on a pipe.
class FileSource : public ByteSource {
public:
  explicit FileSource(int fd) : fd(fd) { in.resize(1 << 17); }
  ~FileSource() override {
    if (inflating)
      inflateEnd(&z);
    ::close(fd);
  }
  /// Whether the input is a regular file (not a pipe, a FIFO, a terminal).
  bool regular() const {
    struct stat st;
    return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  }
  /// Whether the input starts as an SQLite database does (reads its first
  /// bytes, consuming nothing).
  llvm::Expected<bool> startsSqlite() {
    while (available() < sizeof kSqliteMagic) {
      const size_t had = available();
      if (llvm::Error e = refill())
        return e;
      if (available() == had)
        break;
    }
    return available() >= sizeof kSqliteMagic &&
           std::memcmp(&in[at], kSqliteMagic, sizeof kSqliteMagic) == 0;
  }
  /// Writes the whole input, from where it is, to `out`.
  llvm::Error copyTo(int out, llvm::StringRef outPath) {
    for (;;) {
      if (available() == 0) {
        if (llvm::Error e = refill())
          return e;
        if (available() == 0)
          return llvm::Error::success();
      }
      const ssize_t put = ::write(out, &in[at], available());
      if (put < 0 && errno == EINTR)
        continue;
      if (put <= 0)
        return fail("cannot copy it to '" + outPath +
                    "' for SQLite to read: " + std::strerror(put < 0 ? errno : ENOSPC));
      at += size_t(put);
    }
  }

  llvm::Expected<size_t> read(char *out, size_t n) override {
    if (!started) {
      started = true;
      if (llvm::Error e = refill())
        return e;
      gzip = startsMember();
      // An Nsight Systems export is a database, read from its file
      // (importer::readNsys): here only through a pipe.
      if (available() >= sizeof kSqliteMagic &&
          std::memcmp(&in[at], kSqliteMagic, sizeof kSqliteMagic) == 0)
        return fail("it is an SQLite database (an Nsight Systems export?): pipec reads one "
                    "from a file, not from a pipe or standard input");
      if (gzip && inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
        return fail("cannot read it: zlib has no memory to inflate it");
      inflating = gzip;
    }
    if (!gzip)
      return copyOut(out, n);
    size_t made = 0;
    while (made == 0 && !done) {
      if (available() == 0) {
        if (llvm::Error e = refill())
          return e;
        if (available() == 0) {
          done = true; // the file ends inside a member: finish() says so
          break;
        }
      }
      z.next_in = reinterpret_cast<Bytef *>(&in[at]);
      z.avail_in = static_cast<uInt>(available());
      z.next_out = reinterpret_cast<Bytef *>(out);
      z.avail_out = static_cast<uInt>(std::min<size_t>(n, size_t(1) << 30));
      size_t room = z.avail_out;
      int code = inflate(&z, Z_NO_FLUSH);
      at = end - z.avail_in;
      made = room - z.avail_out;
      if (code == Z_STREAM_END) {
        // Another member may follow, as gzip writes for concatenated
        // files; anything else after one is ignored, as gzip does.
        if (available() < 2)
          if (llvm::Error e = refill())
            return e;
        if (startsMember()) {
          inflateReset(&z);
        } else {
          complete = true;
          done = true;
        }
      } else if (code != Z_OK && code != Z_BUF_ERROR) {
        return fail(llvm::Twine("its gzip stream is truncated or damaged: ") +
                    (z.msg ? z.msg : "inflate failed"));
      }
    }
    return made;
  }
  llvm::Error finish() override {
    if (gzip && !complete)
      return fail("its gzip stream is truncated or damaged: unexpected end of file");
    return llvm::Error::success();
  }
  uint64_t consumed() const override { return taken - available(); }

private:
  size_t available() const { return end - at; }
  bool startsMember() const {
    return available() >= 2 && uint8_t(in[at]) == 0x1f && uint8_t(in[at + 1]) == 0x8b;
  }
  /// Moves what is left to the front and reads more after it.
  llvm::Error refill() {
    if (at > 0) {
      std::memmove(&in[0], &in[at], available());
      end -= at;
      at = 0;
    }
    for (;;) {
      ssize_t got = ::read(fd, &in[end], in.size() - end);
      if (got >= 0) {
        end += size_t(got);
        taken += uint64_t(got);
        return llvm::Error::success();
      }
      if (errno != EINTR)
        return fail(llvm::Twine("cannot read it: ") + std::strerror(errno));
    }
  }
  llvm::Expected<size_t> copyOut(char *out, size_t n) {
    if (available() == 0)
      if (llvm::Error e = refill())
        return e;
    size_t k = std::min(n, available());
    std::memcpy(out, &in[at], k);
    at += k;
    return k;
  }

  int fd;
  std::string in;
  size_t at = 0, end = 0;
  uint64_t taken = 0;
  z_stream z{};
  bool started = false, gzip = false, inflating = false, done = false, complete = false;
};

class MemorySource : public ByteSource {
public:
  explicit MemorySource(llvm::StringRef text) : text(text) {}
  llvm::Expected<size_t> read(char *out, size_t n) override {
    size_t k = std::min(n, text.size());
    std::memcpy(out, text.data(), k);
    text = text.drop_front(k);
    given += k;
    return k;
  }
  llvm::Error finish() override { return llvm::Error::success(); }
  uint64_t consumed() const override { return given; }

private:
  llvm::StringRef text;
  uint64_t given = 0;
};

} // namespace

ByteSource::~ByteSource() = default;

namespace {

/// `path` opened ('-': standard input), or why not.
llvm::Expected<std::unique_ptr<FileSource>> openSource(llvm::StringRef path,
                                                       llvm::StringRef shown) {
  int fd =
      path == "-" ? ::dup(STDIN_FILENO) : ::open(path.str().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail("cannot read '" + shown + "': " + std::strerror(errno));
  return std::make_unique<FileSource>(fd);
}

} // namespace

llvm::Expected<std::unique_ptr<ByteSource>> importer::openFile(llvm::StringRef path,
                                                               llvm::StringRef shown) {
  llvm::Expected<std::unique_ptr<FileSource>> source = openSource(path, shown);
  if (!source)
    return source.takeError();
  return std::unique_ptr<ByteSource>(std::move(*source));
}

std::unique_ptr<ByteSource> importer::memorySource(llvm::StringRef text) {
  return std::make_unique<MemorySource>(text);
}

llvm::Expected<std::unique_ptr<ByteSource>>
importer::openRecording(llvm::StringRef path, llvm::StringRef shown, std::string &spooled) {
  spooled.clear();
  llvm::Expected<std::unique_ptr<FileSource>> opened = openSource(path, shown);
  if (!opened)
    return opened.takeError();
  std::unique_ptr<FileSource> source = std::move(*opened);
  if (source->regular())
    return std::unique_ptr<ByteSource>(std::move(source));
  llvm::Expected<bool> sqlite = source->startsSqlite();
  if (!sqlite)
    return fail("'" + shown + "': " + llvm::toString(sqlite.takeError()));
  if (!*sqlite)
    return std::unique_ptr<ByteSource>(std::move(source));
  const char *tmp = std::getenv("TMPDIR");
  std::string name = std::string(tmp && *tmp ? tmp : "/tmp") + "/pipec-export-XXXXXX";
  int out = ::mkstemp(name.data());
  if (out < 0)
    return fail("'" + shown + "': an Nsight Systems export through a pipe is copied to a " +
                "file for SQLite to read, and no file could be made in '" +
                printable(tmp && *tmp ? tmp : "/tmp") + "': " + std::strerror(errno));
  llvm::Error copied = source->copyTo(out, printable(name));
  if (::close(out) != 0 && !copied)
    copied = fail("cannot copy it to '" + printable(name) + "': " + std::strerror(errno));
  if (copied) {
    ::unlink(name.c_str());
    return fail("'" + shown + "': " + llvm::toString(std::move(copied)));
  }
  spooled = name;
  return std::unique_ptr<ByteSource>();
}

JsonReader::JsonReader(ByteSource &source, uint64_t maxBytes, unsigned maxDepth)
    : source(source), maxBytes(maxBytes), maxDepth(maxDepth) {}

bool JsonReader::more() {
  if (ended)
    return false;
  char chunk[1 << 16];
  llvm::Expected<size_t> got = source.read(chunk, sizeof chunk);
  if (!got) {
    pending = got.takeError();
    ended = true;
    return false;
  }
  if (*got == 0) {
    ended = true;
    pending = source.finish();
    if (!pending && total == 0)
      pending = fail("it is empty");
    return false;
  }
  total += *got;
  if (total > maxBytes) {
    pending = fail("it is too large uncompressed (over " + llvm::Twine(maxBytes >> 20) +
                   " MiB); record fewer steps");
    ended = true;
    return false;
  }
  if (total > kInflateFloor && total / kMaxInflation > source.consumed()) {
    uint64_t from = std::max<uint64_t>(source.consumed(), 1);
    pending = fail("it inflates " + llvm::Twine(total / from) + " times (" +
                   llvm::Twine(total >> 20) + " MiB from " + llvm::Twine(from >> 10) +
                   " KiB of gzip): profiler traces compress 5 to 30 times, and pipec "
                   "refuses more than " +
                   llvm::Twine(kMaxInflation) + " as a gzip bomb");
    ended = true;
    return false;
  }
  window.append(chunk, *got);
  return sniffed || sniff();
}

bool JsonReader::sniff() {
  sniffed = true;
  // The first four bytes, or all there are.
  char chunk[4];
  while (window.size() < 4) {
    llvm::Expected<size_t> got = source.read(chunk, 4 - window.size());
    if (!got) {
      pending = got.takeError();
      ended = true;
      return false;
    }
    if (*got == 0)
      break;
    total += *got;
    window.append(chunk, *got);
  }
  auto starts = [&](llvm::StringRef prefix) {
    return llvm::StringRef(window).startswith(prefix);
  };
  const char *encoding = nullptr, *from = "UTF-16";
  if (starts(llvm::StringRef("\xff\xfe\0\0", 4)) || starts(llvm::StringRef("\0\0\xfe\xff", 4)))
    encoding = "UTF-32 text (it starts with UTF-32's byte-order mark)", from = "UTF-32";
  else if (starts("\xff\xfe") || starts("\xfe\xff"))
    encoding = "UTF-16 text (it starts with UTF-16's byte-order mark)";
  else if (window.size() >= 2 && (window[0] == 0 || window[1] == 0))
    encoding = "UTF-16 or UTF-32 text (its first characters are two or four bytes wide)";
  if (encoding) {
    pending =
        fail(llvm::Twine("it is ") + encoding +
             ": pipec reads JSON as UTF-8; save it as UTF-8 (iconv -f " + from + " -t UTF-8)");
    ended = true;
    window.clear();
    pos = 0;
    return false;
  }
  if (starts("\xef\xbb\xbf")) // a UTF-8 byte-order mark: not JSON's, but harmless
    pos += 3;
  return true;
}

int JsonReader::peek() {
  for (;;) {
    while (pos < window.size() && std::isspace(static_cast<unsigned char>(window[pos])))
      ++pos;
    if (pos < window.size())
      return static_cast<unsigned char>(window[pos]);
    // Nothing left in the window: drop it before reading more.
    window.clear();
    pos = 0;
    if (!more())
      return -1;
  }
}

llvm::Expected<size_t> JsonReader::scan(bool keep, size_t maxValue) {
  cut = false;
  if (peek() < 0) {
    cut = true;
    return fail("the input ends where a value was expected");
  }
  // The value starts at `start` (peek left it in the window); the bytes
  // before it are dropped only when more must be read, not per value.
  start = pos;
  size_t i = start, dropped = 0;
  unsigned depth = 0;
  bool inString = false, escaped = false, literal = false;
  const char first = window[start];
  if (first == '"') {
    inString = true;
    i = start + 1;
  } else if (first != '[' && first != '{') {
    literal = true;
  }
  for (;;) {
    if (i >= window.size()) {
      if (keep && i - start > maxValue)
        return fail("is over " + llvm::Twine(uint64_t(i - start)) + " bytes long");
      if (!keep) {
        // Skipping: what has been passed need not stay.
        dropped += i - start;
        window.clear();
      } else {
        window.erase(0, start);
        i -= start;
      }
      start = 0;
      if (!more()) {
        if (literal && !pending) {
          pos = i;
          return dropped + (i - start);
        }
        cut = true;
        return fail("the input ends inside a value");
      }
      continue;
    }
    const char c = window[i];
    if (literal) {
      if (c == ',' || c == '}' || c == ']' || std::isspace(static_cast<unsigned char>(c)))
        break;
      ++i;
      continue;
    }
    ++i;
    if (inString) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"') {
        inString = false;
        if (depth == 0)
          break;
      }
      continue;
    }
    if (c == '"') {
      inString = true;
    } else if (c == '[' || c == '{') {
      if (++depth > maxDepth)
        return fail("nests more than " + llvm::Twine(maxDepth) + " levels deep");
    } else if (c == ']' || c == '}') {
      if (depth == 0 || --depth == 0)
        break;
    }
  }
  if (keep && i - start > maxValue)
    return fail("is " + llvm::Twine(uint64_t(i - start)) + " bytes long");
  pos = i;
  return dropped + (i - start);
}

llvm::Expected<llvm::StringRef> JsonReader::value(size_t maxValue) {
  llvm::Expected<size_t> n = scan(true, maxValue);
  if (!n)
    return n.takeError();
  return llvm::StringRef(window.data() + start, *n);
}

llvm::Error JsonReader::skip() {
  llvm::Expected<size_t> n = scan(false, SIZE_MAX);
  if (!n)
    return n.takeError();
  return llvm::Error::success();
}

llvm::Error JsonReader::takeError() { return std::move(pending); }

llvm::Error importer::skipMember(JsonReader &r, llvm::StringRef key,
                                 llvm::StringRef truncated) {
  llvm::Error skipped = r.skip();
  if (!skipped)
    return llvm::Error::success();
  llvm::consumeError(std::move(skipped));
  if (llvm::Error input = r.takeError())
    return input;
  return fail(truncated + " (inside '" + printable(key) + "')");
}
