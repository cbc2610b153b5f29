//===- Races.h - `sync declared`: every conflicting access ordered --------===//
//
// Two accesses conflict when they touch one slot of one buffer and at least
// one writes. Under `sync declared` each conflicting pair of stage instances
// must be ordered, either way, by the declared dependencies, stream order
// and the host thread's program order (docs/language.md, versions 2 and 3).
// Taking the accesses of each slot in issue order (a topological order of
// that relation), it is enough that every access
// follows the slot's previous write and every write follows the reads since
// it: all other pairs follow by transitivity. Each check is one vector-clock
// lookup (the clocks over streams that the reduction uses, kept for a window
// of instances). A write that follows every earlier access of its slot
// seals it: a later access that follows the seal is compared only with
// what came since, so an ordered program costs a few lookups per access,
// whatever the streams. Races are looked for up to the number the error
// limit can show.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SCHEDULE_RACES_H
#define PIPEC_SCHEDULE_RACES_H

#include "compiler/diag/Diagnostics.h"
#include "compiler/program/Program.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pipec {

class Instances;
struct Schedule;

/// An unordered conflicting pair: instances `first` (issued first) and
/// `second`, on `buffer`.
struct Race {
  uint32_t first, second;
  uint32_t buffer;
  bool firstWrites, secondWrites;
};

/// Every stage pair's first race (in issue order of its second instance),
/// up to `maxRaces` pairs: it looks no further once it has them (the error
/// limit shows no more). `streamOfStage` and `streams`: the streams the
/// stages run on, kHostStream for a cpu stage (its device's host thread
/// orders it after that thread's cpu stages and before whatever the thread
/// issues after it).
std::vector<Race> findRaces(const Instances &instances,
                            const std::vector<uint32_t> &streamOfStage,
                            const std::vector<program::Stream> &streams,
                            size_t maxRaces = SIZE_MAX);
std::vector<Race> findRaces(const Schedule &schedule, size_t maxRaces = SIZE_MAX);

/// `error: data race on 'x'` for each race, naming both stages and the first
/// iteration, with a note that suggests the dependency that orders them.
void reportRaces(const Instances &instances, const std::vector<Race> &races,
                 DiagnosticEngine &diags);
void reportRaces(const Schedule &schedule, DiagnosticEngine &diags);

} // namespace pipec

#endif // PIPEC_SCHEDULE_RACES_H
