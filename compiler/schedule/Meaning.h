//===- Meaning.h - Does a changed program compute what the original did? --===//
//
// A change pipec suggests (another stream, a priority, a deeper ring, added
// dependencies) must not change what the program computes. Against the
// schedule of the original, the changed one must keep:
//  - every ordering the program states: each declared dependency, and the
//    order of two consecutive stages of one stream unless both declare
//    their data (`reads`/`writes`: then the data says what must follow
//    what); an imported program writes its same-stream order as
//    dependencies, so it is always kept. Host program order is the same in
//    both (changes never move a stage in issue order);
//  - which write each read sees: in program order (declaration order,
//    iteration after iteration), the latest write of the slot it reads —
//    a deeper ring on loop-carried state changes it;
//  - no race: every two accesses of one slot, one a write, ordered.
// The check is linear in instances times chains (vector clocks over the
// changed schedule's streams and host thread, for a window of instances).
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SCHEDULE_MEANING_H
#define PIPEC_SCHEDULE_MEANING_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace pipec {

struct Schedule;

/// An ordering `before` states that `after` does not keep: instances of
/// `before`, `from` ordered before `to` by a declared dependency or by
/// stream order (of stages whose data is not declared).
struct DroppedOrdering {
  uint32_t from, to;
  bool declared;
};

/// The orderings of `before` that `after` drops, up to `limit`, in the
/// changed issue order of their later instance.
std::vector<DroppedOrdering> droppedOrderings(const Schedule &before, const Schedule &after,
                                              size_t limit = SIZE_MAX);

/// Why `after` does not compute what `before` does (naming the first
/// ordering it drops, the read whose write changes, or the race), or none.
/// Both schedule the same stages (by name) and iterations.
std::optional<std::string> changedMeaning(const Schedule &before, const Schedule &after);

} // namespace pipec

#endif // PIPEC_SCHEDULE_MEANING_H
