//===- ReadFile.h - Read a file, or standard input, up to a limit ---------===//
#ifndef PIPEC_SUPPORT_READFILE_H
#define PIPEC_SUPPORT_READFILE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace pipec {

/// The contents of `path` ('-': standard input), read, never mapped: a file
/// truncated while it is read gives what was there, not SIGBUS; a device
/// (/dev/zero), a pipe or a growing file is read only up to `limit` bytes,
/// and more is an error that says so, before anything larger is allocated.
llvm::Expected<std::string> readBounded(llvm::StringRef path, uint64_t limit,
                                        llvm::StringRef display);

} // namespace pipec

#endif // PIPEC_SUPPORT_READFILE_H
