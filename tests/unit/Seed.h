//===- Seed.h - One seed for every randomized test -------------*- C++ -*-===//
//
// Each randomized test has its own seed, so that a failure reproduces as it
// is; PIPEC_TEST_SEED=N runs every one of them with N instead (another set
// of random programs). A failing check names the seed it ran with.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_TESTS_SEED_H
#define PIPEC_TESTS_SEED_H

#include <cstdlib>
#include <random>

namespace pipec::test {

inline unsigned seed(unsigned own) {
  const char *all = std::getenv("PIPEC_TEST_SEED");
  return all && *all ? unsigned(std::strtoul(all, nullptr, 10)) : own;
}

} // namespace pipec::test

/// `std::mt19937 NAME` seeded with OWN (or PIPEC_TEST_SEED), and the seed in
/// every failing check's context.
#define PIPEC_SEEDED(NAME, OWN)                                                               \
  std::mt19937 NAME(::pipec::test::seed(OWN));                                                \
  INFO("seed " << ::pipec::test::seed(OWN)                                                    \
               << " (PIPEC_TEST_SEED=N runs every randomized test with N)")

#endif // PIPEC_TESTS_SEED_H
