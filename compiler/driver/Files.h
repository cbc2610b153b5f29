//===- Files.h - Every file a command reads and writes, known up front ----===//
//
// A command says what it will read and write before it writes anything;
// check() then refuses an output that would replace an input (the same
// file by any name: a link, a path through a link, standard input
// redirected from it) or another output (`--trace=X --html=X`). An input
// that is not read yet is still an input: `import t.json -o t.json` would
// replace the recording with its import.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_DRIVER_FILES_H
#define PIPEC_DRIVER_FILES_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace pipec::driver {

class CommandFiles {
public:
  /// `path` ('-': standard input) will be read; `what` names it in a
  /// message ("the trace", "--profile").
  void input(llvm::StringRef path, llvm::StringRef what);
  /// `path` ('-': standard output) will be written, by option `option`
  /// ("-o", "--trace").
  void output(llvm::StringRef path, llvm::StringRef option);

  /// Every output against every input and every other output. Two outputs
  /// to standard output are refused too: they would interleave.
  llvm::Error check() const;

  /// The inputs as given, for writeOutput's last look before it renames.
  std::vector<std::string> inputPaths() const;

private:
  struct Entry {
    std::string path, what;
  };
  std::vector<Entry> inputs, outputs;
};

/// Where writing `path` lands: the file a chain of symbolic links ends at
/// (which need not exist yet), or `path` itself. A loop, or a chain of more
/// than 40 links, is an error ("too many levels of symbolic links").
llvm::Expected<std::string> resolveOutputPath(llvm::StringRef path);

/// Whether two paths name one file: the same device and inode where both
/// exist, else the same resolved absolute path.
bool sameFile(llvm::StringRef a, llvm::StringRef b);

/// Whether standard input is the file at `path` (redirected from it).
bool standardInputIs(llvm::StringRef path);

} // namespace pipec::driver

#endif // PIPEC_DRIVER_FILES_H
