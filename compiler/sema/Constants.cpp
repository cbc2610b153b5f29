//===- Constants.cpp ------------------------------------------------------===//
//
// An expression's nodes lie children first, so one pass from the first node
// to the root evaluates it, however deep it nests (a chain of 10^5 terms
// would overflow a recursive walk's stack).
//
//===----------------------------------------------------------------------===//

#include "compiler/sema/Constants.h"

#include "compiler/program/TimeFormat.h"
#include "compiler/sema/Suggest.h"

#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <string>

using namespace pipec;
using namespace pipec::sema;
using llvm::formatv;

const char *pipec::sema::describe(Value::Kind kind) {
  switch (kind) {
  case Value::Number:
    return "a number";
  case Value::Time:
    return "a time";
  case Value::Size:
    return "a size";
  }
  return "a number";
}

bool sema::isWhole(double v) {
  return std::abs(v - std::round(v)) <= 1e-9 * std::max(1.0, std::abs(v));
}

namespace {

/// A value as a user would write it: `2.5`, `40us`, `4096B`.
std::string spell(const Value &v) {
  switch (v.kind) {
  case Value::Time:
    return formatTime(v.value);
  case Value::Size:
    return formatv("{0}B",
                   llvm::StringRef(formatv("{0}", v.value).str()).rtrim('0').rtrim('.'))
        .str();
  case Value::Number:
    break;
  }
  return llvm::StringRef(formatv("{0:f6}", v.value).str()).rtrim('0').rtrim('.').str();
}

/// "add", "subtract", ... for the operator of `n`.
const char *verb(ast::ExprNode::Kind kind) {
  switch (kind) {
  case ast::ExprNode::Add:
    return "add";
  case ast::ExprNode::Sub:
    return "subtract";
  case ast::ExprNode::Mul:
    return "multiply";
  default:
    return "divide";
  }
}

} // namespace

void Constants::declare(const std::vector<ast::LetDecl> &lets) {
  for (const ast::LetDecl &let : lets) {
    if (let.name.text.empty())
      continue;
    auto [it, inserted] = table.try_emplace(let.name.text);
    if (inserted && unitScale(let.name.text).scale != 0) {
      // Kept without a value: its uses are no further errors.
      it->second.name = let.name.range();
      it->second.used = true;
      diags.error(
          let.name.range(),
          formatv("a constant may not be called '{0}', which is a unit", let.name.text));
      continue;
    }
    if (!inserted) {
      diags.error(let.name.range(), formatv("redefinition of constant '{0}'", let.name.text))
          .attachNote(it->second.name, "previous definition is here");
      continue;
    }
    it->second.name = let.name.range();
    it->second.end = let.range.End.getPointer();
    order.push_back(&let);
  }
  // In source order: a constant's value may use those declared before it.
  for (const ast::LetDecl *let : order) {
    const ast::Amount &a = let->value;
    table[let->name.text].value =
        a.expr ? evaluate(*a.expr) : literal(a.number, a.unit, a.range());
  }
}

void Constants::unknownUnit(llvm::StringRef unit, llvm::SMRange range) {
  std::string hint;
  if (table.count(unit))
    hint = formatv("; '{0}' is a constant: multiply with '*'", unit).str();
  diags.error(range, formatv("unknown unit '{0}'; expected a time ({1}) or a size ({2}){3}",
                             unit, timeUnitList(), sizeUnitList(), hint));
}

std::optional<Value> Constants::literal(llvm::StringRef number, llvm::StringRef unit,
                                        llvm::SMRange range) {
  Quantity q = parseQuantity(number, unit);
  switch (q.kind) {
  case Quantity::UnknownUnit:
  case Quantity::Invalid:
    unknownUnit(unit, range);
    return std::nullopt;
  case Quantity::Bare:
    return Value{Value::Number, q.number};
  case Quantity::Time:
    return Value{Value::Time, q.micros};
  case Quantity::Size:
    break;
  }
  // Exact where whole; else as near as a double holds it.
  if (q.fractionalBytes || q.tooLarge)
    return Value{Value::Size,
                 std::strtod(std::string(number).c_str(), nullptr) * unitScale(unit).scale};
  return Value{Value::Size, double(q.bytes)};
}

std::optional<Value> Constants::constant(const ast::ExprNode &n) {
  auto it = table.find(n.number);
  if (it == table.end()) {
    std::vector<llvm::StringRef> names;
    for (const ast::LetDecl *let : order)
      names.push_back(let->name.text);
    std::optional<size_t> near = suggestName(n.number, names);
    if (near)
      diags
          .error(n.range, formatv("use of undeclared constant '{0}'; did you mean '{1}'?",
                                  n.number, names[*near]))
          .attachNote(order[*near]->name.range(),
                      formatv("'{0}' declared here", names[*near]));
    else
      diags.error(n.range, formatv("use of undeclared constant '{0}'", n.number));
    return std::nullopt;
  }
  Entry &e = it->second;
  e.used = true;
  if (std::less<const char *>()(n.range.Start.getPointer(), e.end)) {
    diags
        .error(n.range, formatv("constant '{0}' is used before its declaration; a "
                                "constant is declared before the amounts that use it",
                                n.number))
        .attachNote(e.name, formatv("'{0}' declared here", n.number));
    return std::nullopt;
  }
  return e.value;
}

std::optional<Value> Constants::evaluate(const ast::Expr &e) {
  std::vector<std::optional<Value>> values(e.nodes.size());
  for (size_t i = 0; i < e.nodes.size(); ++i) {
    const ast::ExprNode &n = e.nodes[i];
    std::optional<Value> &out = values[i];
    switch (n.kind) {
    case ast::ExprNode::Number:
      out = literal(n.number, n.unit, n.range);
      break;
    case ast::ExprNode::Constant:
      out = constant(n);
      break;
    case ast::ExprNode::Parens:
      out = values[n.lhs];
      break;
    case ast::ExprNode::WithUnit: {
      const std::optional<Value> &inner = values[n.lhs];
      if (!inner)
        break;
      UnitScale unit = unitScale(n.unit);
      if (unit.scale == 0) {
        unknownUnit(n.unit, n.range);
        break;
      }
      if (inner->kind != Value::Number) {
        diags.error(n.range, formatv("unit '{0}' after {1}: a unit goes after a plain "
                                     "number, as in '2*L us'",
                                     n.unit, describe(inner->kind)));
        break;
      }
      out = Value{unit.time ? Value::Time : Value::Size, inner->value * unit.scale};
      break;
    }
    case ast::ExprNode::Add:
    case ast::ExprNode::Sub:
    case ast::ExprNode::Mul:
    case ast::ExprNode::Div: {
      const std::optional<Value> &l = values[n.lhs], &r = values[n.rhs];
      if (!l || !r)
        break;
      const bool additive = n.kind == ast::ExprNode::Add || n.kind == ast::ExprNode::Sub;
      Value::Kind kind = Value::Number;
      bool fits = true;
      if (additive) {
        fits = l->kind == r->kind;
        kind = l->kind;
      } else if (n.kind == ast::ExprNode::Mul) {
        fits = l->kind == Value::Number || r->kind == Value::Number;
        kind = l->kind == Value::Number ? r->kind : l->kind;
      } else {
        fits = r->kind == Value::Number || l->kind == r->kind;
        kind = r->kind == Value::Number ? l->kind : Value::Number;
      }
      if (!fits) {
        diags.error(n.range,
                    formatv("cannot {0} {1} {2} {3}{4}", verb(n.kind), describe(l->kind),
                            n.kind == ast::ExprNode::Add   ? "and"
                            : n.kind == ast::ExprNode::Sub ? "and"
                            : n.kind == ast::ExprNode::Mul ? "by"
                                                           : "by",
                            describe(r->kind),
                            additive ? "" : ": only one side may have a unit"));
        break;
      }
      if (n.kind == ast::ExprNode::Div && r->value == 0) {
        diags.error(e.nodes[n.rhs].range, "division by zero");
        break;
      }
      double v = n.kind == ast::ExprNode::Add   ? l->value + r->value
                 : n.kind == ast::ExprNode::Sub ? l->value - r->value
                 : n.kind == ast::ExprNode::Mul ? l->value * r->value
                                                : l->value / r->value;
      out = Value{kind, v};
      break;
    }
    }
  }
  return values.back();
}

Quantity Constants::quantityOf(const ast::Amount &a) {
  if (!a.expr)
    return parseQuantity(a.number, a.unit);
  Quantity q;
  q.kind = Quantity::Invalid;
  std::optional<Value> v = evaluate(*a.expr);
  if (!v)
    return q;
  if (v->value < 0) {
    diags.error(a.range(),
                formatv("{0} is negative here ({1})", describe(v->kind), spell(*v)));
    return q;
  }
  switch (v->kind) {
  case Value::Number:
    q.kind = Quantity::Bare;
    q.number = v->value;
    break;
  case Value::Time:
    q.kind = Quantity::Time;
    q.micros = v->value;
    q.tooLarge = !(v->value <= kMaxTimeUs);
    break;
  case Value::Size:
    q.kind = Quantity::Size;
    q.tooLarge = !(v->value <= double(kMaxBytes));
    q.fractionalBytes = !q.tooLarge && !isWhole(v->value);
    q.bytes = q.tooLarge ? kMaxBytes : static_cast<uint64_t>(std::llround(v->value));
    break;
  }
  return q;
}

std::optional<uint64_t> Constants::countOf(const ast::IntLit &lit, llvm::StringRef what) {
  if (!lit.expr)
    return lit.value;
  std::optional<Value> v = evaluate(*lit.expr);
  if (!v)
    return std::nullopt;
  if (v->kind != Value::Number) {
    diags.error(lit.range, formatv("{0} must be a whole number, not {1} ({2})", what,
                                   describe(v->kind), spell(*v)));
    return std::nullopt;
  }
  if (v->value < 0 || !isWhole(v->value)) {
    diags.error(lit.range,
                formatv("{0} must be a whole number of at least 0, not {1}", what, spell(*v)));
    return std::nullopt;
  }
  if (!(v->value < 18446744073709551615.0))
    return UINT64_MAX;
  return static_cast<uint64_t>(std::round(v->value));
}

void Constants::warnUnused() {
  for (const ast::LetDecl *let : order)
    if (!table[let->name.text].used)
      diags.warning(let->name.range(), formatv("unused constant '{0}'", let->name.text));
}
