//===- RandomPrograms.h - Random .pipe programs for cross-checks ----------===//
#ifndef PIPEC_TESTS_RANDOMPROGRAMS_H
#define PIPEC_TESTS_RANDOMPROGRAMS_H

#include <random>
#include <string>
#include <vector>

namespace pipec::test {

/// ` depends_on(A, B@prev)` for a non-empty list, else nothing.
inline std::string dependsOnClause(const std::vector<std::string> &deps) {
  if (deps.empty())
    return "";
  std::string text = " depends_on(";
  for (size_t k = 0; k < deps.size(); ++k)
    text += (k ? ", " : "") + deps[k];
  return text + ")";
}

/// A random program with every kind of stage and resource: kernels of many
/// shapes (waves, shared memory, registers), copies in every direction,
/// host stages, priorities, iterations, @prev. With `hostThread`, also `cpu`
/// stages (whose dependencies on device stages are host synchronisations)
/// and `issue=` dispatch on launches.
inline std::string randomWorkload(std::mt19937 &rng, bool hostThread = false) {
  uint32_t t = 1 + rng() % 10, streams = 1 + rng() % 5;
  uint32_t iterations = 1 + rng() % 3;
  std::string text = "pipeline r {\n  iterations " + std::to_string(iterations) + ";\n";
  const char *priorities[] = {"", " priority high", " priority low", " priority -2"};
  for (uint32_t s = 0; s < streams; ++s)
    text += "  stream s" + std::to_string(s) + priorities[rng() % 4] + ";\n";
  for (uint32_t i = 0; i < t; ++i) {
    text += "  stage X" + std::to_string(i);
    if (hostThread && rng() % 4 == 0) {
      text += " cpu " + std::to_string(rng() % 80) + "us";
    } else {
    if (rng() % 4)
      text += " on s" + std::to_string(rng() % streams);
    switch (rng() % 6) {
    case 5:
      text += " memset " + std::to_string(1 + rng() % 4000) + "KB";
      break;
    case 0:
      text += " copy " + std::string(rng() % 2 ? "h2d" : rng() % 2 ? "d2h" : "d2d") +
              " " + std::to_string(1 + rng() % 4000) + "KB";
      break;
    case 1:
      text += " host " + std::to_string(1 + rng() % 50) + "us";
      break;
    default: {
      static const unsigned threads[] = {32, 128, 256, 1024};
      text += " kernel " + std::to_string(1 + rng() % 300) + "us [blocks=" +
              std::to_string(1 + rng() % 3000) +
              ", threads=" + std::to_string(threads[rng() % 4]);
      if (rng() % 3 == 0)
        text += ", smem=" + std::to_string(rng() % 100) + "KiB";
      if (rng() % 3 == 0)
        text += ", regs=" + std::to_string(16 + rng() % 48);
      if (hostThread && rng() % 3 == 0)
        text += ", issue=" + std::to_string(rng() % 40) + "us";
      text += "]";
    }
    }
    }
    std::vector<std::string> deps;
    for (uint32_t j = 0; j < i; ++j)
      if (rng() % 3 == 0)
        deps.push_back("X" + std::to_string(j));
      else if (iterations > 1 && rng() % 8 == 0)
        deps.push_back("X" + std::to_string(j) + "@prev");
    text += dependsOnClause(deps) + ";\n";
  }
  return text + "}\n";
}

} // namespace pipec::test

#endif // PIPEC_TESTS_RANDOMPROGRAMS_H
