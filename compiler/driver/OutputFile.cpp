//===- OutputFile.cpp -----------------------------------------------------===//
//
// An output file is written whole beside its destination, then put in
// place, keeping what the user expects of the file that was there: written
// through a symbolic link to its target, its mode and owner kept, a file
// with several hard links rewritten in place (once the new contents are
// complete) so that every link sees them, a read-only file left alone. The
// contents go first into an unnamed file (O_TMPFILE), named beside the
// destination only once complete; elsewhere into a named temporary that is
// removed on any failure and on every terminating signal.
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/OutputFile.h"

#include "compiler/driver/Files.h"
#include "compiler/support/Printable.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <mutex>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

using namespace llvm;

namespace {

Error cannot(StringRef path, const Twine &why) {
  return createStringError(inconvertibleErrorCode(), "cannot write '%s': %s",
                           pipec::printable(path).c_str(), why.str().c_str());
}

/// The signals that end a process by default and that LLVM's handlers
/// (which remove the files registered with RemoveFileOnSignal) leave out:
/// they remove them too, then end the process as the signal would.
void onOtherTerminatingSignal(int sig) {
  sys::RunInterruptHandlers();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void handleOtherTerminatingSignals() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : {SIGALRM, SIGVTALRM, SIGPROF, SIGPWR, SIGSTKFLT, SIGUSR1})
      std::signal(sig, onOtherTerminatingSignal);
  });
}

/// A name beside `target` that does not exist yet.
std::string freshName(StringRef target) {
  static std::mt19937_64 rng(std::random_device{}() ^ uint64_t(::getpid()));
  static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
  std::string name = target.str() + ".tmp-";
  for (int i = 0; i < 10; ++i)
    name += digits[rng() % 36];
  return name;
}

/// An unnamed file in `target`'s directory (O_TMPFILE), or -1 where the
/// file system has none.
int openUnnamed(StringRef target) {
#ifdef O_TMPFILE
  SmallString<256> dir(sys::path::parent_path(target));
  if (dir.empty())
    dir = ".";
  return ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
#else
  return -1;
#endif
}

/// Gives the unnamed file `fd` a fresh name beside `target`.
std::error_code nameUnnamed(int fd, StringRef target, SmallString<256> &named) {
  std::string self = "/proc/self/fd/" + std::to_string(fd);
  for (int tries = 0; tries < 100; ++tries) {
    std::string name = freshName(target);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, name.c_str(), AT_SYMLINK_FOLLOW) == 0) {
      named = name;
      return {};
    }
    if (errno != EEXIST)
      return std::error_code(errno, std::generic_category());
  }
  return std::make_error_code(std::errc::file_exists);
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

Error pipec::writeOutput(StringRef path, const std::function<void(raw_ostream &)> &write,
                         ArrayRef<std::string> inputs) {
  if (path == "-") {
    write(outs());
    outs().flush();
    return Error::success(); // a failure is reported once, at exit
  }
  handleOtherTerminatingSignals();
  // A symbolic link is written through, to the file its chain ends at.
  Expected<std::string> resolved = driver::resolveOutputPath(path);
  if (!resolved)
    return resolved.takeError();
  SmallString<256> target(*resolved);
  // Never over an input: `compile a.pipe -o a.pipe` would lose the source.
  for (const std::string &input : inputs) {
    bool same =
        input == "-" ? driver::standardInputIs(target) : driver::sameFile(input, target);
    if (same)
      return createStringError(inconvertibleErrorCode(),
                               "'%s' is also an input; pipec does not write its "
                               "output over it",
                               printable(path).c_str());
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
                             printable(path).c_str());
  int fd = openUnnamed(target);
  const bool unnamed = fd >= 0;
  SmallString<256> temporary;
  if (!unnamed) {
    if (std::error_code ec = sys::fs::createUniqueFile(target + ".tmp-%%%%%%", fd, temporary))
      return cannot(path, ec.message());
    sys::RemoveFileOnSignal(temporary);
  }
  auto discard = [&] {
    if (temporary.empty())
      return;
    sys::fs::remove(temporary);
    sys::DontRemoveFileOnSignal(temporary);
  };
  std::error_code writeError;
  {
    raw_fd_ostream os(fd, /*shouldClose=*/false);
    os.SetBufferSize(1 << 20); // schedules of millions of instances
    write(os);
    os.flush();
    if (os.has_error())
      writeError = os.error();
    os.clear_error();
  }
  if (!writeError && unnamed) {
    // Complete: now it gets a name, removed on a signal until renamed.
    if (std::error_code ec = nameUnnamed(fd, target, temporary))
      writeError = ec;
    else
      sys::RemoveFileOnSignal(temporary);
  }
  if (::close(fd) != 0 && !writeError)
    writeError = std::error_code(errno, std::generic_category());
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
  return Error::success();
}
