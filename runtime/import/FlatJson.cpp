//===- FlatJson.cpp -------------------------------------------------------===//

#include "runtime/import/FlatJson.h"

#include <charconv>
#include <cmath>
#include <limits>

using namespace pipec;
using namespace pipec::importer;

namespace {

/// The most keys one object may have on the fast path (duplicates are
/// looked for pairwise).
constexpr size_t kMaxKeys = 64;
constexpr unsigned kMaxDepth = 64;

class Reader {
public:
  explicit Reader(llvm::StringRef text) : p(text.begin()), end(text.end()) {}

  bool atEnd() {
    space();
    return p == end;
  }
  bool skipComma() {
    space();
    if (p == end || *p != ',')
      return false;
    ++p;
    return true;
  }

  /// One value; `fields`: where an object's own fields go (the top level).
  bool value(FlatValue &out, unsigned depth,
             llvm::SmallVectorImpl<std::pair<llvm::StringRef, FlatValue>> *fields = nullptr) {
    space();
    if (p == end || depth > kMaxDepth)
      return false;
    const char *from = p;
    switch (*p) {
    case '"':
      out.kind = FlatValue::String;
      return string(out.text);
    case '{':
      out.kind = FlatValue::Object;
      if (!object(depth, fields))
        return false;
      break;
    case '[':
      out.kind = FlatValue::Array;
      if (!array(depth))
        return false;
      break;
    case 't':
      out.kind = FlatValue::Literal;
      if (!word("true"))
        return false;
      break;
    case 'f':
      out.kind = FlatValue::Literal;
      if (!word("false"))
        return false;
      break;
    case 'n':
      out.kind = FlatValue::Literal;
      if (!word("null"))
        return false;
      break;
    default:
      out.kind = FlatValue::Number;
      if (!number())
        return false;
      break;
    }
    out.text = llvm::StringRef(from, p - from);
    return true;
  }

private:
  void space() {
    while (p != end && (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r'))
      ++p;
  }

  bool word(llvm::StringRef w) {
    if (size_t(end - p) < w.size() || llvm::StringRef(p, w.size()) != w)
      return false;
    p += w.size();
    return true;
  }

  /// Printable ASCII, no escape: anything else goes to llvm::json.
  bool string(llvm::StringRef &out) {
    const char *from = ++p;
    while (p != end && *p != '"') {
      const unsigned char c = static_cast<unsigned char>(*p);
      if (c < 0x20 || c > 0x7e || c == '\\')
        return false;
      ++p;
    }
    if (p == end)
      return false;
    out = llvm::StringRef(from, p - from);
    ++p;
    return true;
  }

  static bool digit(char c) { return c >= '0' && c <= '9'; }

  /// JSON's grammar exactly: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  bool number() {
    if (p != end && *p == '-')
      ++p;
    if (p == end || !digit(*p))
      return false;
    if (*p == '0')
      ++p;
    else
      while (p != end && digit(*p))
        ++p;
    if (p != end && *p == '.') {
      ++p;
      if (p == end || !digit(*p))
        return false;
      while (p != end && digit(*p))
        ++p;
    }
    if (p != end && (*p == 'e' || *p == 'E')) {
      ++p;
      if (p != end && (*p == '+' || *p == '-'))
        ++p;
      if (p == end || !digit(*p))
        return false;
      while (p != end && digit(*p))
        ++p;
    }
    // llvm::json reads any run of number characters: "1.2.3" is its error,
    // and not ours to judge.
    return p == end ||
           !(digit(*p) || *p == '.' || *p == 'e' || *p == 'E' || *p == '+' || *p == '-');
  }

  bool object(unsigned depth,
              llvm::SmallVectorImpl<std::pair<llvm::StringRef, FlatValue>> *fields) {
    ++p;
    llvm::SmallVector<llvm::StringRef, 16> keys;
    space();
    if (p != end && *p == '}') {
      ++p;
      return true;
    }
    for (;;) {
      space();
      if (p == end || *p != '"')
        return false;
      llvm::StringRef key;
      if (!string(key))
        return false;
      if (keys.size() >= kMaxKeys)
        return false;
      for (llvm::StringRef k : keys)
        if (k == key)
          return false;
      keys.push_back(key);
      space();
      if (p == end || *p != ':')
        return false;
      ++p;
      FlatValue v;
      if (!value(v, depth + 1))
        return false;
      if (fields)
        fields->push_back({key, v});
      space();
      if (p == end)
        return false;
      if (*p == '}') {
        ++p;
        return true;
      }
      if (*p != ',')
        return false;
      ++p;
    }
  }

  bool array(unsigned depth) {
    ++p;
    space();
    if (p != end && *p == ']') {
      ++p;
      return true;
    }
    for (;;) {
      FlatValue v;
      if (!value(v, depth + 1))
        return false;
      space();
      if (p == end)
        return false;
      if (*p == ']') {
        ++p;
        return true;
      }
      if (*p != ',')
        return false;
      ++p;
    }
  }

  const char *p, *end;
};

} // namespace

std::optional<FlatNumber> importer::flatNumber(llvm::StringRef text) {
  FlatNumber n;
  const bool integer = text.find_first_of(".eE") == llvm::StringRef::npos;
  if (integer) {
    // As llvm::json: an integer literal is an int64 (past 18 digits it may
    // not be one: not ours to read).
    if (text.size() > 18 + (text.front() == '-'))
      return std::nullopt;
    auto [ptr, ec] = std::from_chars(text.begin(), text.end(), n.i);
    if (ec != std::errc() || ptr != text.end())
      return std::nullopt;
    n.integer = true;
    n.d = double(n.i);
    return n;
  }
  // Correctly rounded as strtod is; out of range (1e400) is left to it.
  auto [ptr, ec] = std::from_chars(text.begin(), text.end(), n.d);
  if (ec != std::errc() || ptr != text.end() || !std::isfinite(n.d))
    return std::nullopt;
  return n;
}

std::optional<int64_t> importer::flatInteger(const FlatValue &v) {
  if (v.kind != FlatValue::Number)
    return std::nullopt;
  std::optional<FlatNumber> n = flatNumber(v.text);
  if (!n)
    return std::nullopt;
  if (n->integer)
    return n->i;
  // llvm::json::Value::getAsInteger: a whole double in int64's range.
  double whole;
  if (std::modf(n->d, &whole) == 0.0 && whole >= double(std::numeric_limits<int64_t>::min()) &&
      whole <= double(std::numeric_limits<int64_t>::max()))
    return static_cast<int64_t>(whole);
  return std::nullopt;
}

bool FlatObject::parse(llvm::StringRef text) {
  fields.clear();
  Reader r(text);
  FlatValue top;
  if (!r.value(top, 0, &fields) || top.kind != FlatValue::Object || !r.atEnd())
    return false;
  // A number the two readers might read apart sends it all to llvm::json.
  for (const auto &[key, v] : fields)
    if (v.kind == FlatValue::Number && !flatNumber(v.text))
      return false;
  return true;
}

const FlatValue *FlatObject::get(llvm::StringRef key) const {
  for (const auto &[k, v] : fields)
    if (k == key)
      return &v;
  return nullptr;
}

std::optional<llvm::StringRef> FlatObject::getString(llvm::StringRef key) const {
  const FlatValue *v = get(key);
  if (!v || v->kind != FlatValue::String)
    return std::nullopt;
  return v->text;
}

std::optional<double> FlatObject::getNumber(llvm::StringRef key) const {
  const FlatValue *v = get(key);
  if (!v || v->kind != FlatValue::Number)
    return std::nullopt;
  return flatNumber(v->text)->d; // parse() checked it reads
}

std::optional<int64_t> FlatObject::getInteger(llvm::StringRef key) const {
  const FlatValue *v = get(key);
  return v ? flatInteger(*v) : std::nullopt;
}

llvm::SmallVector<FlatValue, 4> importer::flatElements(llvm::StringRef array) {
  llvm::SmallVector<FlatValue, 4> out;
  // The array was checked whole when its object was: split it at its own
  // commas.
  Reader r(array.drop_front().drop_back());
  while (!r.atEnd()) {
    FlatValue v;
    if (!r.value(v, 1))
      break;
    out.push_back(v);
    if (!r.skipComma())
      break;
  }
  return out;
}
