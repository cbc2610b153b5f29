//===- OutputFile.h - Write all of an output, or none of it ---------------===//
#ifndef PIPEC_DRIVER_OUTPUTFILE_H
#define PIPEC_DRIVER_OUTPUTFILE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <functional>
#include <string>

namespace llvm {
class raw_ostream;
}

namespace pipec {

/// Calls `write` with a stream to `path` ('-': standard output). A file is
/// written beside its destination and renamed over it only once complete, so
/// on any failure nothing is left at `path` and a file already there is
/// untouched.
/// Written through a symbolic link (a dangling one creates the file it
/// names; a loop is an error); a file with several hard links is rewritten
/// in place once the new contents are complete; the mode and owner of a
/// replaced file are kept; a read-only file, or one of `inputs` ('-':
/// standard input, when it is redirected from a file), is refused. The
/// contents are written into an unnamed file (O_TMPFILE) that is named only
/// once complete, so a signal of any kind leaves nothing behind; where the
/// file system has no O_TMPFILE, a named temporary is removed on every
/// signal that ends the process.
llvm::Error writeOutput(llvm::StringRef path,
                        const std::function<void(llvm::raw_ostream &)> &write,
                        llvm::ArrayRef<std::string> inputs = {});

} // namespace pipec

#endif // PIPEC_DRIVER_OUTPUTFILE_H
