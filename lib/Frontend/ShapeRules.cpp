//===- ShapeRules.cpp - reshape, transpose, broadcast_to, slice, concat ===//
//
// Ops that only move or select elements.
//
//===----------------------------------------------------------------------===//

#include "InferenceRules.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace rankc::dag {

LogicalResult inferShapeOp(RuleContext &r) {
  Node &n = r.node;
  switch (n.op) {
  case Op::Reshape: {
    const auto &in = r.arg(0).outShape;
    int64_t total = 1, known = 1;
    for (int64_t d : in)
      total *= d;
    int inferred = -1;
    for (size_t i = 0; i < n.shape.size(); ++i) {
      if (n.shape[i] == -1 && inferred < 0) {
        inferred = int(i);
        continue;
      }
      if (n.shape[i] < 0)
        return r.error() << "reshape target " << shapeText(n.shape)
                         << " may have one -1 and no other negative size";
      if (llvm::MulOverflow(known, n.shape[i], known))
        return r.error() << "reshape target " << shapeText(n.shape)
                         << " is too large";
    }
    n.outShape.assign(n.shape.begin(), n.shape.end());
    if (inferred >= 0) {
      if (known == 0 || total % known != 0)
        return r.error() << "cannot reshape " << shapeText(in) << " into "
                         << shapeText(n.shape);
      n.outShape[inferred] = total / known;
    } else if (known != total) {
      return r.error() << "cannot reshape " << shapeText(in) << " ("
                       << total << " elements) into " << shapeText(n.shape);
    }
    n.outDType = r.arg(0).outDType;
    break;
  }
  case Op::Transpose: {
    const auto &in = r.arg(0).outShape;
    std::vector<bool> seen(in.size(), false);
    if (n.rare().perm.size() != in.size())
      return r.error() << "'perm' " << shapeText(n.rare().perm)
                       << " is not a permutation of " << in.size()
                       << " axes";
    n.outShape.clear();
    for (int64_t &a : n.rare().perm) {
      if (failed(r.normalizeAxis(a, in.size(), "perm")))
        return failure();
      if (seen[a])
        return r.error() << "'perm' lists axis " << a << " twice";
      seen[a] = true;
      n.outShape.push_back(in[a]);
    }
    n.outDType = r.arg(0).outDType;
    break;
  }
  case Op::BroadcastTo: {
    if (failed(r.checkShape(n.shape, "shape")))
      return failure();
    auto b = broadcastShapes(r.arg(0).outShape, n.shape);
    if (!b || ArrayRef<int64_t>(*b) != ArrayRef<int64_t>(n.shape))
      return r.error() << "cannot broadcast " << shapeText(r.arg(0).outShape)
                       << " to " << shapeText(n.shape);
    n.outShape.assign(n.shape.begin(), n.shape.end());
    n.outDType = r.arg(0).outDType;
    break;
  }
  case Op::Slice: {
    const auto &in = r.arg(0).outShape;
    if (!n.has(K_step))
      n.rare().step.assign(in.size(), 1);
    if (n.rare().begin.size() != in.size() || n.rare().end.size() != in.size() ||
        n.rare().step.size() != in.size())
      return r.error() << "'begin', 'end' and 'step' need one entry per "
                            "axis ("
                         << in.size() << ")";
    n.outShape.clear();
    for (size_t i = 0; i < in.size(); ++i) {
      if (n.rare().begin[i] < 0 || n.rare().begin[i] > n.rare().end[i] || n.rare().end[i] > in[i] ||
          n.rare().step[i] < 1)
        return r.error() << "slice of axis " << i << " (size " << in[i]
                         << ") needs 0 <= begin <= end <= size and step >= "
                              "1, got begin "
                           << n.rare().begin[i] << ", end " << n.rare().end[i] << ", step "
                           << n.rare().step[i];
      n.outShape.push_back((n.rare().end[i] - n.rare().begin[i] + n.rare().step[i] - 1) /
                           n.rare().step[i]);
    }
    n.outDType = r.arg(0).outDType;
    break;
  }
  case Op::Concat: {
    if (failed(r.sameDTypes()))
      return failure();
    const auto &first = r.arg(0).outShape;
    if (first.empty())
      return r.error() << "'concat' takes arrays of rank >= 1";
    if (failed(r.normalizeAxis(n.axis, first.size(), "axis")))
      return failure();
    n.outShape = first;
    for (size_t i = 1; i < n.args.size(); ++i) {
      const auto &s = r.arg(i).outShape;
      bool ok = s.size() == first.size();
      for (size_t d = 0; ok && d < s.size(); ++d)
        ok = d == size_t(n.axis) || s[d] == first[d];
      if (!ok)
        return r.error() << "'concat' shapes " << shapeText(first) << " and "
                         << shapeText(s) << " differ off axis " << n.axis;
      if (llvm::AddOverflow(n.outShape[n.axis], s[n.axis], n.outShape[n.axis]))
        return r.error() << "'concat' result is too large";
    }
    n.outDType = r.arg(0).outDType;
    break;
  }
  default:
    break;
  }
  return success();
}

} // namespace rankc::dag
