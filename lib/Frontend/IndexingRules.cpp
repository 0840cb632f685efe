//===- IndexingRules.cpp - take and scatter_add (version 2) ===//
//
// Index dtypes and the shapes of gathers and scatters.
//
//===----------------------------------------------------------------------===//

#include "InferenceRules.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace rankc::dag {

LogicalResult inferIndexing(RuleContext &r) {
  Node &n = r.node;
  switch (n.op) {
  case Op::Take:
  case Op::ScatterAdd: {
    // take(x, indices): x.shape[:axis] + indices.shape + x.shape[axis+1:];
    // scatter_add(base, indices, updates): base's shape, updates of the
    // shape take would give.
    const Node &x = r.arg(0), &indices = r.arg(1);
    const char *name = opName(n.op);
    if (!isInteger(indices.outDType))
      return r.error() << "'" << name
                       << "' indices must be integers (i8, i32 or i64), got "
                       << dtypeName(indices.outDType);
    if (x.outShape.empty())
      return r.error() << "'" << name << "' of a scalar: "
                       << (n.op == Op::Take ? "x" : "base")
                       << " needs rank >= 1";
    if (failed(r.normalizeAxis(n.axis, x.outShape.size(), "axis")))
      return failure();
    Shape taken(x.outShape.begin(), x.outShape.begin() + n.axis);
    taken.append(indices.outShape.begin(), indices.outShape.end());
    taken.append(x.outShape.begin() + n.axis + 1, x.outShape.end());
    if (n.op == Op::Take) {
      n.outShape = taken;
      n.outDType = x.outDType;
      break;
    }
    const Node &updates = r.arg(2);
    if (x.outDType == DType::Bool)
      return r.error() << "'scatter_add' does not take bool";
    if (updates.outDType != x.outDType)
      return r.error() << "'scatter_add' updates are "
                       << dtypeName(updates.outDType) << ", base is "
                       << dtypeName(x.outDType);
    if (ArrayRef<int64_t>(updates.outShape) != ArrayRef<int64_t>(taken))
      return r.error() << "'scatter_add' updates have shape "
                       << shapeText(updates.outShape) << ", expected "
                       << shapeText(taken)
                       << " (base.shape[:axis] + indices.shape + "
                            "base.shape[axis+1:])";
    n.outShape = x.outShape;
    n.outDType = x.outDType;
    break;
  }
  default:
    break;
  }
  return success();
}

} // namespace rankc::dag
