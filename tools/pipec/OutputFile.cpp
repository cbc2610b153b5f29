//===- OutputFile.cpp -----------------------------------------------------===//

#include "OutputFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

Error pipec::writeOutput(StringRef path,
                         const std::function<void(raw_ostream &)> &write) {
  if (path == "-") {
    write(outs());
    outs().flush();
    if (outs().has_error())
      return createStringError(inconvertibleErrorCode(),
                               "cannot write to standard output");
    return Error::success();
  }
  // A device or a pipe (/dev/null, /dev/stdout) is written as it is.
  sys::fs::file_status status;
  if (!sys::fs::status(path, status) && sys::fs::exists(status) &&
      !sys::fs::is_regular_file(status)) {
    std::error_code ec;
    raw_fd_ostream os(path, ec);
    if (ec)
      return createStringError(ec, "cannot write '%s': %s", path.str().c_str(),
                               ec.message().c_str());
    os.SetBufferSize(1 << 20);
    write(os);
    os.close();
    if (os.has_error()) {
      os.clear_error();
      return createStringError(inconvertibleErrorCode(), "cannot write '%s'",
                               path.str().c_str());
    }
    return Error::success();
  }
  int fd = -1;
  SmallString<256> temporary;
  if (std::error_code ec = sys::fs::createUniqueFile(path + ".tmp-%%%%%%", fd,
                                                     temporary))
    return createStringError(ec, "cannot write '%s': %s", path.str().c_str(),
                             ec.message().c_str());
  bool failed;
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os.SetBufferSize(1 << 20); // schedules of millions of instances
    write(os);
    os.close();
    failed = os.has_error();
    os.clear_error();
  }
  std::error_code ec;
  if (!failed)
    ec = sys::fs::rename(temporary, path);
  if (failed || ec) {
    sys::fs::remove(temporary);
    return createStringError(inconvertibleErrorCode(), "cannot write '%s'%s%s",
                             path.str().c_str(), ec ? ": " : "",
                             ec ? ec.message().c_str() : "");
  }
  return Error::success();
}
