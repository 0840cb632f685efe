//===- ElementwiseRules.cpp - leaves and elementwise ops ===//
//
// Types of leaves (input, param, constant, iota), unary and binary ops,
// comparisons, logical ops and where; NumPy's broadcasting.
//
//===----------------------------------------------------------------------===//

#include "InferenceRules.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace rankc::dag {

std::optional<Shape> broadcastShapes(
    llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t y = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (x != y && x != 1 && y != 1)
      return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}


static LogicalResult checkConstant(RuleContext &r) {
  Node &n = r.node;
  const ConstantValue &v = n.rare().value;
  bool scalar = v.shape.empty();
  if (n.has(K_shape)) {
    if (failed(r.checkShape(n.shape, "shape")))
      return failure();
    if (!scalar && ArrayRef<int64_t>(v.shape) != ArrayRef<int64_t>(n.shape))
      return r.error() << "'value' has shape " << shapeText(v.shape)
                       << " but 'shape' is " << shapeText(n.shape);
    n.outShape.assign(n.shape.begin(), n.shape.end());
  } else {
    n.outShape.assign(v.shape.begin(), v.shape.end());
  }
  DType t = n.dtype;
  for (const Scalar &s : v.elements)
    if (failed(r.checkScalarFits(s, t, "constant")))
      return failure();
  n.outDType = t;
  return success();
}

LogicalResult RuleContext::checkScalarFits(const Scalar &s, DType t,
                                           const char *what) {
  if (t == DType::Bool && s.kind != Scalar::Bool)
    return error() << "a bool " << what << " takes true and false only";
  if (isInteger(t) && s.kind == Scalar::Float)
    return error() << "a " << dtypeName(t) << " " << what
                   << " takes integers, got " << s.f;
  if (isInteger(t) && s.kind == Scalar::Int) {
    unsigned bits = dtypeBytes(t) * 8;
    bool fits = isUnsigned(t) ? s.i >= 0 && llvm::isUIntN(bits, uint64_t(s.i))
                              : bits == 64 || llvm::isIntN(bits, s.i);
    if (!fits)
      return error() << "value " << s.i << " does not fit in " << dtypeName(t);
  }
  return success();
}


/// input, param, constant, iota, step: the type they state or hold.
LogicalResult inferLeaf(RuleContext &r) {
  Node &n = r.node;
  switch (n.op) {
  case Op::Input: case Op::Param:
    if (failed(r.checkShape(n.shape, "shape")))
      return failure();
    n.outShape.assign(n.shape.begin(), n.shape.end());
    n.outDType = n.dtype;
    break;
  case Op::Constant:
    if (failed(checkConstant(r)))
      return failure();
    break;
  case Op::Iota:
    if (failed(r.checkShape(n.shape, "shape")) ||
        failed(r.normalizeAxis(n.axis, n.shape.size(), "axis")))
      return failure();
    n.outShape.assign(n.shape.begin(), n.shape.end());
    n.outDType = n.dtype;
    break;
  case Op::Step: // a scalar, i64 unless the node says otherwise
    if (n.has(K_shape) && !n.shape.empty())
      return r.error() << "'step' is a scalar: its 'shape' is [] (got "
                       << shapeText(n.shape) << ")";
    n.outShape.clear();
    n.outDType = n.has(K_dtype) ? n.dtype : DType::I64;
    if (n.outDType == DType::Bool)
      return r.error() << "'step' takes an integer or float dtype, got bool";
    break;
  default:
    break;
  }
  return success();
}

/// Unary, binary, compare, logical, where: NumPy's broadcasting, one dtype.
LogicalResult inferElementwise(RuleContext &r) {
  Node &n = r.node;
  switch (n.op) {
  case Op::Cast:
    n.outShape = r.arg(0).outShape;
    n.outDType = n.dtype;
    break;
  case Op::Not:
    if (r.arg(0).outDType != DType::Bool)
      return r.error() << "'not' takes bool, got "
                       << dtypeName(r.arg(0).outDType);
    n.outShape = r.arg(0).outShape;
    n.outDType = DType::Bool;
    break;
  case Op::Exp: case Op::Log: case Op::Sqrt: case Op::Rsqrt: case Op::Sin:
  case Op::Cos: case Op::Tanh: case Op::Erf: case Op::Sigmoid:
    if (failed(r.needFloat(r.arg(0).outDType)))
      return failure();
    n.outShape = r.arg(0).outShape;
    n.outDType = r.arg(0).outDType;
    break;
  case Op::Neg: case Op::Relu:
    if (r.arg(0).outDType == DType::Bool)
      return r.error() << "'" << opName(n.op) << "' does not take bool";
    [[fallthrough]];
  case Op::Abs: case Op::Floor: case Op::Ceil:
    n.outShape = r.arg(0).outShape;
    n.outDType = r.arg(0).outDType;
    break;

  case Op::Add: case Op::Sub: case Op::Mul: case Op::Div: case Op::Pow:
  case Op::Maximum: case Op::Minimum: case Op::Rem:
    if (failed(r.sameDTypes()) || failed(r.broadcastArgs(0)))
      return failure();
    n.outDType = r.arg(0).outDType;
    if ((n.op == Op::Div || n.op == Op::Pow) && failed(r.needFloat(n.outDType)))
      return failure();
    if (n.op == Op::Rem && n.outDType == DType::Bool)
      return r.error() << "'rem' does not take bool";
    if (n.op == Op::Sub && n.outDType == DType::Bool)
      return r.error() << "'sub' does not take bool (NumPy neither); use "
                            "'ne' for exclusive or";
    break;
  case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge:
    if (failed(r.sameDTypes()) || failed(r.broadcastArgs(0)))
      return failure();
    n.outDType = DType::Bool;
    break;
  case Op::And: case Op::Or:
    if (failed(r.sameDTypes()) || failed(r.broadcastArgs(0)))
      return failure();
    if (r.arg(0).outDType != DType::Bool)
      return r.error() << "'" << opName(n.op) << "' takes bool, got "
                       << dtypeName(r.arg(0).outDType);
    n.outDType = DType::Bool;
    break;
  case Op::Where:
    if (r.arg(0).outDType != DType::Bool)
      return r.error() << "the condition of 'where' must be bool, got "
                       << dtypeName(r.arg(0).outDType);
    if (r.arg(1).outDType != r.arg(2).outDType)
      return r.error() << "the values of 'where' have different dtypes ("
                       << dtypeName(r.arg(1).outDType) << " and "
                       << dtypeName(r.arg(2).outDType) << ")";
    if (failed(r.broadcastArgs(0)))
      return failure();
    n.outDType = r.arg(1).outDType;
    break;
  default:
    break;
  }
  return success();
}

} // namespace rankc::dag
