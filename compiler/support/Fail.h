//===- Fail.h - An error that says why, in words --------------------------===//
#ifndef PIPEC_SUPPORT_FAIL_H
#define PIPEC_SUPPORT_FAIL_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

namespace pipec {

/// An llvm::Error whose message is `why` (the reader's words, no code).
inline llvm::Error fail(const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), why.str());
}

} // namespace pipec

#endif // PIPEC_SUPPORT_FAIL_H
