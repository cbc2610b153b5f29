// Columns: a line's length as told in advance is the bytes write() appends,
// for random cells (some empty, some columns no line uses) and comments.

#include "compiler/format/Columns.h"

#include "Seed.h"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

using namespace pipec;

TEST_CASE("columns: length() is what write() appends") {
  PIPEC_SEEDED(rng, 253);
  for (int round = 0; round < 300; ++round) {
    const size_t count = 1 + rng() % 6;
    Columns columns(count);
    std::vector<std::vector<std::string>> lines(rng() % 20);
    std::vector<std::string> comments;
    const size_t unused = rng() % (count + 1); // a column no line fills
    for (auto &line : lines) {
      for (size_t c = 0; c < count; ++c)
        line.push_back(c == unused || rng() % 3 == 0 ? ""
                                                     : std::string(1 + rng() % 12, 'a' + c));
      comments.push_back(rng() % 2 ? "" : "// " + std::string(rng() % 30, 'x'));
      columns.fit(std::vector<llvm::StringRef>(line.begin(), line.end()));
    }
    std::string out;
    for (size_t i = 0; i < lines.size(); ++i) {
      std::vector<llvm::StringRef> cells(lines[i].begin(), lines[i].end());
      const size_t before = out.size();
      const size_t told = columns.length("stage", cells, comments[i]);
      columns.write(out, "stage", cells, comments[i]);
      CHECK(out.size() - before == told);
      CHECK(out.back() == '\n');
    }
  }
}
