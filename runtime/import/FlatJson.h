//===- FlatJson.h - One trace event's fields, read without a DOM ----------===//
//
// A trace is millions of small objects, and building an llvm::json::Value
// for each (a map, a string per key) was most of an import's time. A
// FlatObject reads one object's own fields as spans of its text. It takes
// only plain JSON — strings of printable ASCII without escapes, numbers in
// JSON's grammar that a double or int64 holds as llvm::json would, no key
// twice in any object — and says no to anything else, which the caller
// then reads with llvm::json: both readers agree on everything the fast one
// takes (tests/unit/ImportTest.cpp cross-checks them on random events).
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_RUNTIME_IMPORT_FLATJSON_H
#define PIPEC_RUNTIME_IMPORT_FLATJSON_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>

namespace pipec::importer {

struct FlatValue {
  enum Kind : uint8_t { String, Number, Object, Array, Literal } kind = Literal;
  /// A string's characters (no quotes: it has no escapes); anything else
  /// as written.
  llvm::StringRef text;
};

/// A number's value as llvm::json reads it (an integer literal as int64,
/// anything else as a double), or none where that reading could differ
/// (a literal past 18 digits, past a double's range).
struct FlatNumber {
  bool integer = false;
  int64_t i = 0;
  double d = 0;
};
std::optional<FlatNumber> flatNumber(llvm::StringRef text);

class FlatObject {
public:
  /// Reads `text`, which must be one whole object in the plain JSON above
  /// (nested values are checked too); false when it is not.
  bool parse(llvm::StringRef text);

  const FlatValue *get(llvm::StringRef key) const;
  std::optional<llvm::StringRef> getString(llvm::StringRef key) const;
  /// As llvm::json::Object::getNumber and getInteger: a number's value; an
  /// integer also from a whole double.
  std::optional<double> getNumber(llvm::StringRef key) const;
  std::optional<int64_t> getInteger(llvm::StringRef key) const;

private:
  llvm::SmallVector<std::pair<llvm::StringRef, FlatValue>, 16> fields;
};

/// The elements of an array value's text (as FlatObject returned it).
llvm::SmallVector<FlatValue, 4> flatElements(llvm::StringRef array);

/// A number as llvm::json's getAsInteger reads it.
std::optional<int64_t> flatInteger(const FlatValue &v);

} // namespace pipec::importer

#endif // PIPEC_RUNTIME_IMPORT_FLATJSON_H
