//===- ReadFile.cpp -------------------------------------------------------===//

#include "compiler/support/ReadFile.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

Expected<std::string> pipec::readBounded(StringRef path, uint64_t limit, StringRef display) {
  int fd = 0;
  if (path != "-") {
    fd = ::open(path.str().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return createStringError(inconvertibleErrorCode(), "cannot read '%s': %s",
                               display.str().c_str(), std::strerror(errno));
  }
  std::string text;
  // A regular file's size, as far as the limit: read into one allocation,
  // not grown by doubling (a size that changes while it is read only
  // costs a copy more).
  struct stat st;
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    text.reserve(size_t(std::min<uint64_t>(uint64_t(st.st_size), limit)));
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int saved = errno;
      if (fd != 0)
        ::close(fd);
      return createStringError(inconvertibleErrorCode(), "cannot read '%s': %s",
                               display.str().c_str(), std::strerror(saved));
    }
    if (n == 0)
      break;
    if (text.size() + uint64_t(n) > limit) {
      if (fd != 0)
        ::close(fd);
      return createStringError(inconvertibleErrorCode(),
                               "'%s' is too large (more than %llu bytes); the "
                               "limit is %llu bytes",
                               display.str().c_str(), (unsigned long long)limit,
                               (unsigned long long)limit);
    }
    text.append(chunk, size_t(n));
  }
  if (fd != 0)
    ::close(fd);
  return text;
}
