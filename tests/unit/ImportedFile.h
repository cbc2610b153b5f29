//===- ImportedFile.h - An imported step's file, held to the front end ----===//
#ifndef PIPEC_TESTS_IMPORTEDFILE_H
#define PIPEC_TESTS_IMPORTEDFILE_H

#include "compiler/format/Formatter.h"
#include "compiler/schedule/Schedule.h"
#include "runtime/import/PipeFile.h"

#include <doctest/doctest.h>

#include "FrontendHelpers.h"
#include "ProgramText.h"

#include <memory>
#include <string>
#include <vector>

namespace pipec::test {

/// The step's file, read by the front end: it must check clean (not even
/// a warning), be laid out as fmt lays it out, and read back to exactly
/// the program the importer builds beside it. Null where it could not be
/// written or read (each such failure is a failed check).
inline std::unique_ptr<FrontendRun> importedFile(const importer::ImportedStep &step,
                                                 const DeviceProfile &profile,
                                                 std::string &text) {
  auto written = importer::writePipe(step, "random", profile);
  REQUIRE(static_cast<bool>(written));
  text = *written;
  INFO(text);
  auto front = std::make_unique<FrontendRun>(text);
  REQUIRE(front->errors == 0);
  CHECK(front->all.empty());
  llvm::StringRef parsed = front->sm->getMemoryBuffer(1)->getBuffer();
  CHECK(formatFile(front->file, parsed) == text);
  auto built = importer::programOf(step, profile);
  REQUIRE(static_cast<bool>(built));
  front->program.source = built->source;
  CHECK(programText(*built) == programText(front->program));
  return front;
}

/// Each recorded op's instance: the i-th op stage of the file (issue
/// order), the GPU's unexplained idle (gpu_idle stages) left out.
inline std::vector<uint32_t> opInstances(const Schedule &s) {
  std::vector<uint32_t> out;
  for (uint32_t v = 0; v < s.instances.size(); ++v)
    if (!s.onHost(v) && !llvm::StringRef(s.instances.stage(v).name).startswith("gpu_idle"))
      out.push_back(v);
  return out;
}

} // namespace pipec::test

#endif // PIPEC_TESTS_IMPORTEDFILE_H
