//===- Files.cpp ----------------------------------------------------------===//

#include "compiler/driver/Files.h"

#include "compiler/support/Fail.h"
#include "compiler/support/Printable.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <sys/stat.h>
#include <unistd.h>

using namespace pipec;
using namespace pipec::driver;

namespace {

/// `path` made absolute against the working directory, `.` and `..` taken
/// out lexically (after links are resolved, that is what names the file).
std::string absolute(llvm::StringRef path) {
  llvm::SmallString<256> p(path);
  (void)llvm::sys::fs::make_absolute(p);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return std::string(p.str());
}

/// The directory part resolved through links (where it exists), the last
/// component kept: two names of one file-to-be compare equal.
std::string canonicalFor(llvm::StringRef path) {
  llvm::SmallString<256> real;
  if (!llvm::sys::fs::real_path(path, real))
    return std::string(real.str());
  llvm::StringRef parent = llvm::sys::path::parent_path(path);
  llvm::SmallString<256> dir;
  if (!llvm::sys::fs::real_path(parent.empty() ? "." : parent, dir)) {
    llvm::sys::path::append(dir, llvm::sys::path::filename(path));
    return std::string(dir.str());
  }
  return absolute(path);
}

} // namespace

void CommandFiles::input(llvm::StringRef path, llvm::StringRef what) {
  inputs.push_back({path.str(), what.str()});
}

void CommandFiles::output(llvm::StringRef path, llvm::StringRef option) {
  outputs.push_back({path.str(), option.str()});
}

std::vector<std::string> CommandFiles::inputPaths() const {
  std::vector<std::string> paths;
  for (const Entry &e : inputs)
    paths.push_back(e.path);
  return paths;
}

llvm::Expected<std::string> driver::resolveOutputPath(llvm::StringRef path) {
  std::string at = path.str();
  for (int hops = 0; hops <= 40; ++hops) {
    struct stat st {};
    if (::lstat(at.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))
      return at;
    char buffer[PATH_MAX];
    ssize_t n = ::readlink(at.c_str(), buffer, sizeof buffer - 1);
    if (n < 0)
      return fail("cannot write '" + printable(path) + "': " + std::strerror(errno));
    llvm::StringRef target(buffer, size_t(n));
    if (llvm::sys::path::is_absolute(target)) {
      at = target.str();
    } else {
      llvm::SmallString<256> joined(llvm::sys::path::parent_path(at));
      llvm::sys::path::append(joined, target);
      at = std::string(joined.str());
    }
  }
  return fail("cannot write '" + printable(path) + "': too many levels of symbolic links");
}

bool driver::sameFile(llvm::StringRef a, llvm::StringRef b) {
  struct stat sa {
  }, sb{};
  bool hasA = ::stat(a.str().c_str(), &sa) == 0, hasB = ::stat(b.str().c_str(), &sb) == 0;
  if (hasA && hasB)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  if (hasA != hasB)
    return false;
  llvm::Expected<std::string> ra = resolveOutputPath(a), rb = resolveOutputPath(b);
  if (!ra || !rb) {
    llvm::consumeError(ra.takeError());
    llvm::consumeError(rb.takeError());
    return false;
  }
  return canonicalFor(*ra) == canonicalFor(*rb);
}

bool driver::standardInputIs(llvm::StringRef path) {
  struct stat in {
  }, file{};
  if (::fstat(STDIN_FILENO, &in) != 0 || !S_ISREG(in.st_mode))
    return false;
  return ::stat(path.str().c_str(), &file) == 0 && in.st_dev == file.st_dev &&
         in.st_ino == file.st_ino;
}

llvm::Error CommandFiles::check() const {
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Entry &out = outputs[i];
    if (out.path == "-") {
      for (size_t j = 0; j < i; ++j)
        if (outputs[j].path == "-")
          return fail(out.what + " and " + outputs[j].what +
                      " both write to standard output; give one of them a file");
      continue;
    }
    llvm::Expected<std::string> target = resolveOutputPath(out.path);
    if (!target)
      return target.takeError();
    for (const Entry &in : inputs) {
      bool same = in.path == "-" ? standardInputIs(*target) : sameFile(in.path, *target);
      if (same)
        return fail("'" + printable(out.path) + "' (" + out.what + ") is also " +
                    (in.path == "-" ? std::string("standard input") : in.what) +
                    "; pipec does not write an output over an input");
    }
    for (size_t j = 0; j < i; ++j)
      if (outputs[j].path != "-" && sameFile(outputs[j].path, *target))
        return fail("'" + printable(out.path) + "' is given to both " + outputs[j].what +
                    " and " + out.what + "; each output needs a file of its own");
  }
  return llvm::Error::success();
}
