//===- Constants.h - `let` constants and the arithmetic of amounts --------===//
//
// A pipeline's constants are declared in order, each evaluated once; an
// amount or a count that is an expression (`T*4096*2B`, `2*L us`) is
// evaluated against them. Values carry a dimension -- a plain number, a time
// or a size -- and arithmetic keeps it: times add to times, a size divided by
// a size is a number, a time times a time is an error.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_SEMA_CONSTANTS_H
#define PIPEC_SEMA_CONSTANTS_H

#include "compiler/ast/AST.h"
#include "compiler/diag/Diagnostics.h"
#include "compiler/sema/Units.h"

#include "llvm/ADT/StringMap.h"

#include <optional>
#include <vector>

namespace pipec::sema {

/// Whole up to rounding (10^-9 of the value): `3*(1/3)` is 1. The one
/// tolerance for every count: iterations, ring slots, attributes.
bool isWhole(double v);

/// What an expression evaluates to: a number, microseconds or bytes.
struct Value {
  enum Kind { Number, Time, Size } kind = Number;
  double value = 0;
};

/// "a number", "a time", "a size".
const char *describe(Value::Kind kind);

class Constants {
public:
  explicit Constants(DiagnosticEngine &diags) : diags(diags) {}

  /// Declares and evaluates `lets`, in source order: each may use the ones
  /// before it.
  void declare(const std::vector<ast::LetDecl> &lets);

  /// The value of `e`, or none once an error is reported (or was, for a
  /// constant it uses).
  std::optional<Value> evaluate(const ast::Expr &e);

  /// An amount as a quantity: a literal as written, an expression by its
  /// value. Kind Invalid once an error is reported.
  Quantity quantityOf(const ast::Amount &a);

  /// A count (iterations, slots, an attribute's integer): a whole number of
  /// at least 0, saturating at UINT64_MAX; none once an error is reported
  /// (`what`: "iterations", for "iterations must be a whole number").
  std::optional<uint64_t> countOf(const ast::IntLit &lit, llvm::StringRef what);

  /// "unused constant 'T'" for each never used.
  void warnUnused();

private:
  struct Entry {
    std::optional<Value> value; ///< none after an error
    llvm::SMRange name;
    const char *end = nullptr; ///< past the declaration: uses come after
    bool used = false;
  };
  std::optional<Value> constant(const ast::ExprNode &n);
  /// A number with the unit that follows it (maybe none).
  std::optional<Value> literal(llvm::StringRef number, llvm::StringRef unit,
                               llvm::SMRange range);
  /// "unknown unit 'x'", with a hint when 'x' is a constant.
  void unknownUnit(llvm::StringRef unit, llvm::SMRange range);

  DiagnosticEngine &diags;
  llvm::StringMap<Entry> table;
  std::vector<const ast::LetDecl *> order;
};

} // namespace pipec::sema

#endif // PIPEC_SEMA_CONSTANTS_H
