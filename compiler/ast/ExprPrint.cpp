//===- ExprPrint.cpp - Expressions written back as text -------------------===//
//
// In order, with a stack of its own rather than recursion: a chain of 10^5
// terms nests that deep.
//
//===----------------------------------------------------------------------===//

#include "compiler/ast/AST.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/raw_ostream.h"

using namespace pipec;

void ast::print(const Expr &e, llvm::raw_ostream &os) {
  struct Frame {
    uint32_t node;
    uint8_t step; ///< how much of the node is written
  };
  llvm::SmallVector<Frame, 16> stack{{static_cast<uint32_t>(e.nodes.size() - 1), 0}};
  while (!stack.empty()) {
    const Frame f = stack.back();
    const ExprNode &n = e.nodes[f.node];
    stack.back().step++;
    switch (n.kind) {
    case ExprNode::Number:
      os << n.number << n.unit;
      stack.pop_back();
      break;
    case ExprNode::Constant:
      os << n.number;
      stack.pop_back();
      break;
    case ExprNode::Parens:
      if (f.step == 0) {
        os << '(';
        stack.push_back({n.lhs, 0});
      } else {
        os << ')';
        stack.pop_back();
      }
      break;
    case ExprNode::WithUnit:
      if (f.step == 0) {
        stack.push_back({n.lhs, 0});
      } else {
        os << ' ' << n.unit;
        stack.pop_back();
      }
      break;
    case ExprNode::Add:
    case ExprNode::Sub:
    case ExprNode::Mul:
    case ExprNode::Div:
      if (f.step == 0) {
        stack.push_back({n.lhs, 0});
      } else if (f.step == 1) {
        os << (n.kind == ExprNode::Add   ? " + "
               : n.kind == ExprNode::Sub ? " - "
               : n.kind == ExprNode::Mul ? "*"
                                         : "/");
        stack.push_back({n.rhs, 0});
      } else {
        stack.pop_back();
      }
      break;
    }
  }
}

void ast::print(const IntLit &n, llvm::raw_ostream &os) {
  if (n.expr)
    print(*n.expr, os);
  else
    os << n.value;
}

void ast::print(const Amount &a, llvm::raw_ostream &os) {
  if (a.expr)
    print(*a.expr, os);
  else
    os << a.number << a.unit;
}
