// How a kernel stage is stood in for on a GPU (compiler/emit/SpinShape.inc,
// compiled into the CUDA backend and written into every emitted program),
// against the device model's own counts, without a GPU: the occupancy
// calculator is played by the profile's blocksPerSM, which counts as CUDA's
// does.

#include "compiler/emit/SpinShape.inc"
#include "compiler/program/DeviceProfile.h"

#include <doctest/doctest.h>

#include "Seed.h"

#include <random>

using namespace pipec;

TEST_CASE("spin: each block spins the kernel's time over its waves") {
  DeviceProfile p;
  // samples/priority.pipe's Wide: 1056 blocks of 1024 threads, 2 per SM on
  // 132 SMs: 4 waves of 200 us, not 4 x 800 us.
  program::Stage wide;
  wide.kernel().blocks = 1056;
  wide.kernel().threads = 1024;
  wide.durationUs = 800;
  unsigned perSM = p.blocksPerSM(wide.kernel().threads);
  CHECK(perSM == 2);
  unsigned long long waves = pipec_spin::spinWaves(wide.kernel().blocks, perSM, p.sms);
  CHECK(waves == 4);
  CHECK(waves == p.waves(wide.kernel()));
  CHECK(pipec_spin::spinBlockNanoseconds(wide.durationUs, waves) == 200'000);
  // One wave: the whole time. A partial last wave counts as a wave.
  CHECK(pipec_spin::spinWaves(132, 16, 132) == 1);
  CHECK(pipec_spin::spinWaves(2113, 16, 132) == 2);
  CHECK(pipec_spin::spinBlockNanoseconds(10, 1) == 10'000);
  CHECK(pipec_spin::spinBlockNanoseconds(0.0004, 1) == 0);
  CHECK(pipec_spin::spinBlockNanoseconds(1, 3) == 333);
  // A device that fits none: one wave, as DeviceProfile::waves says.
  CHECK(pipec_spin::spinWaves(500, 0, 132) == 1);
}

TEST_CASE("spin: regs= is stood in for by shared memory, to the model's blocks per SM") {
  DeviceProfile p;
  PIPEC_SEEDED(rng, 25);
  const unsigned threadChoices[] = {32, 64, 96, 128, 256, 512, 1024};
  unsigned matched = 0, padded = 0;
  for (int round = 0; round < 3000; ++round) {
    unsigned threads = threadChoices[rng() % 7];
    uint64_t smem = rng() % 3 == 0 ? 0 : rng() % 120'000;
    uint32_t regs = rng() % 2 ? 0 : 16 + rng() % 240;
    unsigned target = p.blocksPerSM(threads, smem, regs);
    if (target == 0)
      continue;
    // The calculator, for the spin kernel: it asks no registers to speak of.
    unsigned calls = 0;
    auto occupancy = [&](unsigned long long bytes) {
      ++calls;
      return p.blocksPerSM(threads, bytes, 0);
    };
    bool exact = false;
    unsigned long long chosen =
        pipec_spin::spinSharedMemory(target, smem, p.sharedMemoryPerBlock, occupancy, &exact);
    INFO("threads ", threads, " smem ", smem, " regs ", regs, " target ", target);
    CHECK(chosen >= smem);
    CHECK(chosen <= std::max<unsigned long long>(smem, p.sharedMemoryPerBlock));
    CHECK(calls < 40); // a bisection, not a scan
    unsigned got = p.blocksPerSM(threads, chosen, 0);
    CHECK(got <= target);
    CHECK(exact == (got == target));
    if (chosen > smem) {
      ++padded;
      // The least padding that does it.
      CHECK(p.blocksPerSM(threads, chosen - 1, 0) > target);
    }
    // Whenever some amount of shared memory gives the model's count, the
    // chosen one does.
    bool reachable = false;
    for (uint64_t b = smem; b <= p.sharedMemoryPerBlock && !reachable; b += 128)
      reachable = p.blocksPerSM(threads, b, 0) == target;
    if (reachable) {
      CHECK(exact);
      ++matched;
    }
    // Without regs= there is nothing to stand in for.
    if (!regs)
      CHECK(chosen == smem);
  }
  CHECK(matched > 1000);
  CHECK(padded > 300);
}

TEST_CASE("spin: a device that already fits fewer blocks is left as it is") {
  // The calculator gives 3 where the model counts 4: no padding can add a
  // block, and the run says the shapes differ.
  auto occupancy = [](unsigned long long) { return 3u; };
  bool exact = true;
  CHECK(pipec_spin::spinSharedMemory(4, 1000, 200'000, occupancy, &exact) == 1000);
  CHECK(!exact);
  // Padding to the most a block may have still leaves too many: the most.
  auto stubborn = [](unsigned long long) { return 8u; };
  CHECK(pipec_spin::spinSharedMemory(4, 0, 50'000, stubborn, &exact) == 50'000);
  CHECK(!exact);
  // A target of 0 (the model fits none) is taken as 1.
  auto one = [](unsigned long long b) { return b >= 100'000 ? 1u : 2u; };
  CHECK(pipec_spin::spinSharedMemory(0, 0, 200'000, one, &exact) == 100'000);
  CHECK(exact);
}
