//===- Suggest.cpp --------------------------------------------------------===//

#include "compiler/sema/Suggest.h"

using namespace pipec::sema;

std::optional<size_t>
pipec::sema::suggestName(llvm::StringRef typo,
                  llvm::ArrayRef<llvm::StringRef> candidates) {
  constexpr unsigned maxDistance = 2;
  std::optional<size_t> best;
  unsigned bestDistance = maxDistance + 1;
  bool tie = false;
  for (size_t i = 0; i < candidates.size(); ++i) {
    unsigned d = typo.edit_distance(candidates[i], /*AllowReplacements=*/true,
                                    /*MaxEditDistance=*/maxDistance + 1);
    if (d == 0 || d > maxDistance)
      continue;
    if (d < bestDistance) {
      best = i;
      bestDistance = d;
      tie = false;
    } else if (d == bestDistance && candidates[i] != candidates[*best]) {
      tie = true;
    }
  }
  if (tie)
    return std::nullopt;
  return best;
}
