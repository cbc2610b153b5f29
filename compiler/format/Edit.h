//===- Edit.h - Changes to a .pipe file, written as pipec fmt would -------===//
//
// What `pipec advise` changes in a program, as edits of its syntax: a
// stage's stream, a new stream, a stream's priority, a ring's slots, one
// more dependency. Applied to a copy of the AST and formatted, they give the
// file a suggestion describes, comments and all; the advisor measures that
// very file (parsed and checked again), and `advise --apply` writes it.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_FORMAT_EDIT_H
#define PIPEC_FORMAT_EDIT_H

#include "compiler/ast/AST.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>

namespace pipec {

struct Edit {
  enum Kind : uint8_t {
    SetStream,       ///< `stage` on `stream` (empty: no `on`, pipec assigns it)
    AddStream,       ///< `stream` declared, with `priority` ("" for none), on
                     ///< `device` ("" for none)
    SetPriority,     ///< `stream`'s priority: "high", "normal", "low", "-3"
    SetSlots,        ///< `buffer[slots]`
    AddDependency,   ///< `stage` depends_on(`dependency`), e.g. "A", "A@prev(2)"
    RemoveStream,    ///< `stream`'s declaration (no stage is on it)
    RemoveAttribute, ///< `stage`'s attribute `attribute` (`[pageable]`)
  } kind = SetStream;
  std::string stage, stream, priority, buffer, dependency, device, attribute;
  uint32_t slots = 1;

  static Edit setStream(std::string stage, std::string stream) {
    Edit e;
    e.kind = SetStream;
    e.stage = std::move(stage), e.stream = std::move(stream);
    return e;
  }
  static Edit addStream(std::string stream, std::string priority, std::string device = {}) {
    Edit e;
    e.kind = AddStream;
    e.stream = std::move(stream), e.priority = std::move(priority);
    e.device = std::move(device);
    return e;
  }
  static Edit setPriority(std::string stream, std::string priority) {
    Edit e;
    e.kind = SetPriority;
    e.stream = std::move(stream), e.priority = std::move(priority);
    return e;
  }
  static Edit setSlots(std::string buffer, uint32_t slots) {
    Edit e;
    e.kind = SetSlots;
    e.buffer = std::move(buffer), e.slots = slots;
    return e;
  }
  static Edit addDependency(std::string stage, std::string dependency) {
    Edit e;
    e.kind = AddDependency;
    e.stage = std::move(stage), e.dependency = std::move(dependency);
    return e;
  }
  static Edit removeAttribute(std::string stage, std::string attribute) {
    Edit e;
    e.kind = RemoveAttribute;
    e.stage = std::move(stage), e.attribute = std::move(attribute);
    return e;
  }
  static Edit removeStream(std::string stream) {
    Edit e;
    e.kind = RemoveStream;
    e.stream = std::move(stream);
    return e;
  }
};

/// The formatted text of `file` (parsed from `source`, without errors)
/// with `edits` applied to its pipeline `pipeline`. An edit naming
/// something the pipeline does not have is an error.
llvm::Expected<std::string> applyEdits(const ast::File &file, llvm::StringRef source,
                                       llvm::StringRef pipeline, llvm::ArrayRef<Edit> edits);

} // namespace pipec

#endif // PIPEC_FORMAT_EDIT_H
