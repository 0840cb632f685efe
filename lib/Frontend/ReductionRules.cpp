//===- ReductionRules.cpp - sum, prod, max, min, mean ===//
//
// Reduced axes, keepdims, and NumPy's accumulation dtypes.
//
//===----------------------------------------------------------------------===//

#include "InferenceRules.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace rankc::dag {

LogicalResult inferReduction(RuleContext &r) {
  Node &n = r.node;
  switch (n.op) {
  case Op::Sum: case Op::Prod: case Op::Max: case Op::Min: case Op::Mean: {
    const auto &in = r.arg(0).outShape;
    DType t = r.arg(0).outDType;
    std::vector<bool> reduced(in.size(), !n.has(K_axes));
    for (int64_t &axis : n.rare().axes) {
      if (failed(r.normalizeAxis(axis, in.size(), "axes")))
        return failure();
      if (reduced[axis])
        return r.error() << "axis " << axis << " is listed twice";
      reduced[axis] = true;
    }
    n.outShape.clear();
    bool empty = false;
    for (size_t i = 0; i < in.size(); ++i) {
      if (!reduced[i])
        n.outShape.push_back(in[i]);
      else if (n.keepdims)
        n.outShape.push_back(1);
      empty |= reduced[i] && in[i] == 0;
    }
    if ((n.op == Op::Max || n.op == Op::Min) && empty)
      return r.error() << "'" << opName(n.op)
                       << "' over an axis of size 0 has no value";
    if (n.op == Op::Mean && failed(r.needFloat(t)))
      return failure();
    // NumPy: sum and prod of bool and of integers narrower than 64 bits
    // accumulate in (and give) i64; unsigned ones in u64, which the format
    // lacks: i64 holds the same values below 2^63.
    if ((n.op == Op::Sum || n.op == Op::Prod) &&
        (t == DType::Bool || (isInteger(t) && t != DType::I64)))
      t = DType::I64;
    n.outDType = t;
    break;
  }
  default:
    break;
  }
  return success();
}

} // namespace rankc::dag
