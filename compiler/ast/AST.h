//===- AST.h - The syntax of a .pipe file, with a source range on every node ===//
//
// The AST is pure syntax: names are unresolved, quantities keep their spelling
// (number and unit). compiler/sema/ resolves names and units into a Program.
//
// Text in the AST is not copied: names and amounts are StringRefs into the
// SourceMgr buffer the file was parsed from (as every range is), which must
// outlive the AST. A flat file of a million stages holds its names once.
//
//===----------------------------------------------------------------------===//
#ifndef PIPEC_AST_AST_H
#define PIPEC_AST_AST_H

#include "compiler/support/Kinds.h"
#include "compiler/support/ReleasableList.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace llvm {
class SourceMgr;
class raw_ostream;
} // namespace llvm

namespace pipec::ast {

/// Small nodes keep only their text: their range is where that text lies in
/// the buffer (a million stages hold no second copy of it).
struct Name {
  llvm::StringRef text; ///< into the source buffer; empty where missing
  /// The name's bytes; none for a name missing from the source.
  llvm::SMRange range() const {
    if (text.empty())
      return {};
    return {llvm::SMLoc::getFromPointer(text.begin()),
            llvm::SMLoc::getFromPointer(text.end())};
  }
};

/// Arithmetic over numbers and constants, as written: `T*4096*2B`, `2*L us`,
/// `(A + B) / 2`. Held only where a number is more than one literal: most
/// amounts are one token and keep no expression. The nodes lie flat, each
/// child before its parent and the root last; an expression never changes
/// once built, and copies of an AST share it.
struct ExprNode {
  enum Kind : uint8_t {
    Number,   ///< `12`, `2.5`, `48KiB`: `number` and `unit` as in Amount
    Constant, ///< a `let` constant: `number` holds its name
    Add,      ///< lhs + rhs
    Sub,      ///< lhs - rhs
    Mul,      ///< lhs * rhs
    Div,      ///< lhs / rhs
    Parens,   ///< ( lhs )
    WithUnit, ///< lhs followed by the unit `unit`: `2*L us`
  } kind = Number;
  uint32_t lhs = 0, rhs = 0; ///< indexes of the children in Expr::nodes
  llvm::StringRef number;    ///< into the source buffer
  llvm::StringRef unit;      ///< into the source buffer; may be empty
  llvm::SMRange range;       ///< the whole subexpression
};

struct Expr {
  std::vector<ExprNode> nodes;
  const ExprNode &root() const { return nodes.back(); }
};

/// `e` as pipec fmt writes it: `*` and `/` tight, `+` and `-` spaced, the
/// parentheses and units as written (`(A + B)*2KiB`, `2*L us`).
void print(const Expr &e, llvm::raw_ostream &os);

/// An integer literal (or, with `expr`, an expression sema evaluates to
/// one). Values that overflow saturate at UINT64_MAX; sema reports them
/// against the allowed range.
struct IntLit {
  uint64_t value = 0;
  llvm::SMRange range;
  std::shared_ptr<const Expr> expr; ///< set when more than one literal
};

/// `iterations N;` or `sync inferred|declared;`
struct Setting {
  enum Kind { Iterations, Sync } kind = Iterations;
  IntLit iterations;
  bool syncDeclared = false; ///< `sync declared;`
  llvm::SMRange range;
};

enum class PriorityKind { Default, High, Normal, Low, Raw };

struct Priority {
  PriorityKind kind = PriorityKind::Default;
  int64_t raw = 0; ///< for Raw: the integer, sign applied, saturated
  llvm::SMRange range;
};

/// `stream NAME [priority P];`
/// `device NAME;` (version 4).
struct DeviceDecl {
  Name name;
  llvm::SMRange range;
};

struct StreamDecl {
  Name name;
  std::optional<Name> device; ///< `on DEV` (version 4)
  Priority priority;
  llvm::SMRange range;
};

/// A number as written, with the unit that follows it (empty if none):
/// `12us` is {"12", "us"}, `0.5` is {"0.5", ""}. Anything more (constants,
/// arithmetic, a unit after a space) is `expr`, and number and unit are
/// empty.
struct Amount {
  llvm::StringRef number; ///< into the source buffer, as `unit`, which
  llvm::StringRef unit;   ///< follows it there
  std::shared_ptr<const Expr> expr;
  bool empty() const { return number.empty() && !expr; }
  /// The amount's bytes; none for an amount missing from the source.
  llvm::SMRange range() const {
    if (expr)
      return expr->root().range;
    if (number.empty() && unit.empty())
      return {};
    return {llvm::SMLoc::getFromPointer(number.begin()),
            llvm::SMLoc::getFromPointer(unit.end())};
  }
};

/// `NAME [= VALUE]` inside `[...]`: an integer (`blocks=264`), an amount
/// (`smem=48KiB`, a number with a unit), or none. One of the two is held
/// (an imported file has four attributes on each of a million stages).
struct Attr {
  Name name;
  llvm::SMRange range;
  std::variant<std::monostate, IntLit, Amount> given;
  const IntLit *value() const { return std::get_if<IntLit>(&given); }
  const Amount *amount() const { return std::get_if<Amount>(&given); }
};

/// `@QUALIFIER[(K)]` after a dependency's name: the qualifier as spelt, with
/// its '@' (e.g. "@prev"), and K.
struct Qualifier : Name {
  std::optional<IntLit> distance; ///< the K of `@prev(K)`
};

/// `NAME[@QUALIFIER[(K)]]` inside `depends_on(...)`. Qualifiers are rare and
/// dependencies many (a flat file has millions): it is held out of line.
struct Dep {
  Name stage;
  std::unique_ptr<Qualifier> qualifier; ///< null when there is none
  llvm::SMRange range;

  Dep() = default;
  Dep(Dep &&) = default;
  Dep &operator=(Dep &&) = default;
  /// A deep copy (the qualifier too): a file copies as a value (Edit).
  Dep(const Dep &o)
      : stage(o.stage),
        qualifier(o.qualifier ? std::make_unique<Qualifier>(*o.qualifier) : nullptr),
        range(o.range) {}
  Dep &operator=(const Dep &o) {
    if (this != &o)
      *this = Dep(o);
    return *this;
  }
};

/// `reads(a, b@prev(2))` or `writes(c)` on a stage.
struct Access {
  bool write = false;
  std::vector<Name> buffers;
  /// Per buffer, its `@prev(K)` (a ring's slot K iterations back); empty
  /// when no buffer of the list has one.
  std::vector<std::optional<Qualifier>> qualifiers;
  llvm::SMRange range;
  const Qualifier *qualifierOf(size_t i) const {
    return i < qualifiers.size() && qualifiers[i] ? &*qualifiers[i] : nullptr;
  }
};

/// `stage NAME [on STREAM] WORK [ATTRS] [depends_on(...)];`
struct StageDecl {
  Name name;
  std::optional<Name> stream;
  /// `on (s0, s1, ...)` (a collective, version 4): the streams after the
  /// first, which is `stream`; `streamList` when written in parentheses.
  std::vector<Name> moreStreams;
  bool streamList = false;
  StageKind kind = StageKind::Kernel;
  llvm::SMRange kindRange; ///< the `kernel`/`copy`/`host` keyword
  CopyDirection direction = CopyDirection::H2D;
  Amount amount;            ///< empty number for a copy that takes its buffer's size
  std::optional<Name> peer; ///< a copy's `to DEVICE` (version 4)
  CollectiveOp collective = CollectiveOp::AllReduce;
  std::vector<Attr> attrs;
  std::vector<Access> accesses;
  std::vector<Dep> deps;
  llvm::SMRange range;
};

/// `buffer NAME[[SLOTS]] SIZE [host] [state];`
struct BufferDecl {
  Name name;
  std::optional<IntLit> slots;
  Amount size;
  bool host = false;
  std::optional<Name> device; ///< `on DEV` (version 4)
  bool state = false;         ///< loop-carried state: never ringed
  llvm::SMRange range;
};

/// `let NAME = AMOUNT;`: a constant of the pipeline, for the amounts and
/// counts declared after it.
struct LetDecl {
  Name name;
  Amount value;
  llvm::SMRange range;
};

struct Pipeline {
  Name name;
  std::vector<LetDecl> constants;
  std::vector<Setting> settings;
  std::vector<DeviceDecl> devices;
  std::vector<StreamDecl> streams;
  std::vector<BufferDecl> buffers;
  /// The longest list of a flat file: sema frees it as it reads it.
  ReleasableList<StageDecl> stages;
  llvm::SMRange range;
  /// The parser recovered from a syntax error inside this pipeline; semantic
  /// analysis skips it rather than report errors caused by the recovery.
  bool hasSyntaxErrors = false;
};

struct File {
  std::string path;
  llvm::SMLoc start; ///< the first byte of the file
  /// `version N;`, the file's first line when present.
  std::optional<IntLit> version;
  llvm::SMRange versionRange; ///< the whole line
  std::vector<Pipeline> pipelines;
  /// Every comment, in source order (for `pipec fmt`).
  std::vector<llvm::SMRange> comments;
};

/// An amount as pipec fmt writes it: `12us`, or its expression.
void print(const Amount &a, llvm::raw_ostream &os);
/// A count as pipec fmt writes it: `8`, or its expression.
void print(const IntLit &n, llvm::raw_ostream &os);

/// The indented dump behind `pipec compile --emit=ast`: one node per line,
/// children indented, each with `@file:line:col`.
void dump(const File &file, const llvm::SourceMgr &sm, llvm::raw_ostream &os);

} // namespace pipec::ast

#endif // PIPEC_AST_AST_H
