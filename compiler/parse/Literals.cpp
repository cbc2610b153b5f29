//===- Literals.cpp -------------------------------------------------------===//

#include "compiler/parse/Literals.h"

#include <algorithm>
#include <limits>

using namespace pipec;
using namespace pipec::parse;

ast::IntLit pipec::parse::intOf(const ParseContext &ctx,
                                const antlr4::Token *tok) {
  ast::IntLit lit;
  if (!tok)
    return lit;
  lit.range = ctx.rangeOf(tok);
  for (char digit : ctx.textOf(tok)) {
    uint64_t d = static_cast<uint64_t>(digit - '0');
    if (lit.value > (std::numeric_limits<uint64_t>::max() - d) / 10) {
      lit.value = std::numeric_limits<uint64_t>::max();
      break;
    }
    lit.value = lit.value * 10 + d;
  }
  return lit;
}

ast::Amount pipec::parse::splitAmount(llvm::StringRef text) {
  ast::Amount a;
  size_t unitStart = std::min(text.find_first_not_of("0123456789."), text.size());
  a.number = text.take_front(unitStart);
  a.unit = text.drop_front(unitStart);
  return a;
}
