//===- OutputFile.cpp -----------------------------------------------------===//
//
// An output file is written whole beside its destination, then put in
// place, keeping what the user expects of the file that was there: written
// through a symbolic link to its target, its mode and owner kept, a file
// with several hard links rewritten in place (once the new contents are
// complete) so that every link sees them, a read-only file left alone. The
// temporary is removed on SIGINT and SIGTERM, and on any failure.
//
//===----------------------------------------------------------------------===//

#include "OutputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace {

Error cannot(StringRef path, const Twine &why) {
  return createStringError(inconvertibleErrorCode(), "cannot write '%s': %s",
                           path.str().c_str(), why.str().c_str());
}

/// Copies `from` over the contents of `to`, in place (same inode).
Error copyInPlace(StringRef from, StringRef to) {
  int in = ::open(from.str().c_str(), O_RDONLY | O_CLOEXEC);
  int out = ::open(to.str().c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (in < 0 || out < 0) {
    int saved = errno;
    if (in >= 0)
      ::close(in);
    if (out >= 0)
      ::close(out);
    return cannot(to, std::strerror(saved));
  }
  char chunk[1 << 16];
  for (;;) {
    ssize_t n = ::read(in, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(out, chunk + done, size_t(n - done));
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0) {
        int saved = errno;
        ::close(in);
        ::close(out);
        return cannot(to, std::strerror(saved));
      }
      done += w;
    }
  }
  ::close(in);
  if (::close(out) != 0)
    return cannot(to, std::strerror(errno));
  return Error::success();
}

} // namespace

Error pipec::writeOutput(StringRef path,
                         const std::function<void(raw_ostream &)> &write,
                         ArrayRef<std::string> inputs) {
  if (path == "-") {
    write(outs());
    outs().flush();
    return Error::success(); // a failure is reported once, at exit
  }
  // A symbolic link is written through, to the file it names.
  SmallString<256> target(path);
  bool isLink = false;
  {
    sys::fs::file_status link;
    if (!sys::fs::status(path, link, /*follow=*/false) &&
        link.type() == sys::fs::file_type::symlink_file) {
      isLink = true;
      SmallString<256> resolved;
      if (!sys::fs::real_path(path, resolved))
        target = resolved;
    }
  }
  // Never over an input: `compile a.pipe -o a.pipe` would lose the source.
  for (const std::string &input : inputs) {
    bool same = false;
    if (input != "-" && !sys::fs::equivalent(input, target, same) && same)
      return createStringError(inconvertibleErrorCode(),
                               "'%s' is also an input; pipec does not write its "
                               "output over it",
                               path.str().c_str());
  }
  sys::fs::file_status status;
  bool exists = !sys::fs::status(target, status) && sys::fs::exists(status);
  // A device or a pipe (/dev/null, /dev/stdout) is written as it is.
  if (exists && !sys::fs::is_regular_file(status)) {
    std::error_code ec;
    raw_fd_ostream os(target, ec);
    if (ec)
      return cannot(path, ec.message());
    os.SetBufferSize(1 << 20);
    write(os);
    os.close();
    if (os.has_error()) {
      std::error_code error = os.error();
      os.clear_error();
      return cannot(path, error.message());
    }
    return Error::success();
  }
  // Read-only: no write permission for us, or none for anyone (root may
  // write anything, but a 0444 file says "do not").
  if (exists && (::access(target.c_str(), W_OK) != 0 ||
                 (status.permissions() & sys::fs::perms::all_write) == 0))
    return createStringError(inconvertibleErrorCode(),
                             "'%s' is read-only; pipec does not rewrite it",
                             path.str().c_str());
  int fd = -1;
  SmallString<256> temporary;
  if (std::error_code ec =
          sys::fs::createUniqueFile(target + ".tmp-%%%%%%", fd, temporary))
    return cannot(path, ec.message());
  sys::RemoveFileOnSignal(temporary);
  auto discard = [&] {
    sys::fs::remove(temporary);
    sys::DontRemoveFileOnSignal(temporary);
  };
  std::error_code writeError;
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.SetBufferSize(1 << 20); // schedules of millions of instances
    write(os);
    os.close();
    if (os.has_error())
      writeError = os.error();
    os.clear_error();
  }
  if (writeError) {
    discard();
    return cannot(path, writeError.message());
  }
  if (exists && status.getLinkCount() > 1) {
    // Hard links: the new contents go into the one inode they share.
    Error e = copyInPlace(temporary, target);
    discard();
    return e;
  }
  if (exists) {
    // The mode and owner of the file being replaced.
    (void)sys::fs::setPermissions(temporary, status.permissions());
    (void)::chown(temporary.c_str(), status.getUser(), status.getGroup());
  }
  std::error_code ec = sys::fs::rename(temporary, target);
  if (ec) {
    discard();
    return cannot(path, ec.message());
  }
  sys::DontRemoveFileOnSignal(temporary);
  (void)isLink;
  return Error::success();
}
