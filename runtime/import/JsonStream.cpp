//===- JsonStream.cpp -----------------------------------------------------===//

#include "runtime/import/JsonStream.h"
#include "compiler/support/Fail.h"

#include <zlib.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

using namespace pipec;
using namespace pipec::importer;

namespace {

/// zlib's message less the "<fd:3>: " it puts first for a descriptor.
std::string withoutName(llvm::StringRef message) {
  if (message.startswith("<fd:")) {
    size_t colon = message.find(">: ");
    if (colon != llvm::StringRef::npos)
      message = message.drop_front(colon + 3);
  }
  return message.str();
}

/// zlib reads a gzip stream, and anything else as it is.
class GzipSource : public ByteSource {
public:
  explicit GzipSource(gzFile z) : z(z) {}
  ~GzipSource() override {
    if (z)
      gzclose(z);
  }
  llvm::Expected<size_t> read(char *out, size_t n) override {
    int got = gzread(z, out, static_cast<unsigned>(n));
    if (got >= 0)
      return size_t(got);
    int code = 0;
    std::string why = withoutName(gzerror(z, &code));
    if (code == Z_ERRNO)
      return fail(llvm::Twine("cannot read it: ") + std::strerror(errno));
    return fail("its gzip stream is truncated or damaged: " + why);
  }
  llvm::Error finish() override {
    // gzread stops quietly at a truncated stream: gzclose, or the buffer
    // state, tells.
    int code = 0;
    const char *why = gzerror(z, &code);
    bool truncated = code != Z_OK && code != Z_STREAM_END;
    std::string message = withoutName(why ? why : "");
    bool direct = gzdirect(z);
    int closed = gzclose(z);
    z = nullptr;
    if (closed != Z_OK || (truncated && !direct))
      return fail("its gzip stream is truncated or damaged" +
                  (message.empty() ? "" : ": " + message));
    return llvm::Error::success();
  }

private:
  gzFile z;
};

class MemorySource : public ByteSource {
public:
  explicit MemorySource(llvm::StringRef text) : text(text) {}
  llvm::Expected<size_t> read(char *out, size_t n) override {
    size_t k = std::min(n, text.size());
    std::memcpy(out, text.data(), k);
    text = text.drop_front(k);
    return k;
  }
  llvm::Error finish() override { return llvm::Error::success(); }

private:
  llvm::StringRef text;
};

} // namespace

ByteSource::~ByteSource() = default;

llvm::Expected<std::unique_ptr<ByteSource>> importer::openFile(llvm::StringRef path,
                                                               llvm::StringRef shown) {
  int fd =
      path == "-" ? ::dup(STDIN_FILENO) : ::open(path.str().c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail("cannot read '" + shown + "': " + std::strerror(errno));
  gzFile z = gzdopen(fd, "rb");
  if (!z) {
    ::close(fd);
    return fail("cannot read '" + shown + "'");
  }
  gzbuffer(z, 1 << 17);
  return std::make_unique<GzipSource>(z);
}

std::unique_ptr<ByteSource> importer::memorySource(llvm::StringRef text) {
  return std::make_unique<MemorySource>(text);
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
    return false;
  }
  total += *got;
  if (total > maxBytes) {
    pending = fail("it is too large uncompressed (over " + llvm::Twine(maxBytes >> 20) +
                   " MiB); record fewer steps");
    ended = true;
    return false;
  }
  window.append(chunk, *got);
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
