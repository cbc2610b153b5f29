//===- Overloaded.h - Lambdas overloaded into one visitor -----------------===//
//
// `std::visit(Overloaded{[](const KernelWork &) {...}, ...}, stage.work)`:
// one lambda per alternative, and a missing one is a compile error.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SUPPORT_OVERLOADED_H
#define PIPEC_SUPPORT_OVERLOADED_H

namespace pipec {

template <class... Fs> struct Overloaded : Fs... { using Fs::operator()...; };
template <class... Fs> Overloaded(Fs...) -> Overloaded<Fs...>;

} // namespace pipec

#endif // PIPEC_SUPPORT_OVERLOADED_H
