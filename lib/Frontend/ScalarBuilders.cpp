//===- ScalarBuilders.cpp - scalar semantics of the DAG's ops -------------===//
//
// The elementwise meaning of every op on one element, in arith and math,
// following NumPy: bool arithmetic is logical (add = or, mul = and), NaN
// propagates through maximum/minimum, `ne` is true for NaN, casts to bool
// test for non-zero. f16 and bf16 transcendental functions are computed in
// f32 and rounded once, as NumPy does. Unsigned dtypes (v3) are signless
// integers of their width computed on with the unsigned ops where the sign
// matters (comparisons, maximum/minimum, rem, widening, float conversion);
// the rest wraps as two's complement does, as NumPy's does.
//
//===----------------------------------------------------------------------===//

#include "TensorBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace rankc::dag {

Type elementType(MLIRContext *ctx, DType t) {
  Builder b(ctx);
  switch (t) {
  case DType::Bool: return b.getI1Type();
  case DType::I8: return b.getI8Type();
  case DType::I32: return b.getI32Type();
  case DType::I64: return b.getI64Type();
  case DType::F16: return b.getF16Type();
  case DType::BF16: return b.getBF16Type();
  case DType::F32: return b.getF32Type();
  case DType::F64: return b.getF64Type();
  case DType::U8: return b.getI8Type();
  case DType::U16: return b.getI16Type();
  case DType::U32: return b.getI32Type();
  }
  return {};
}

RankedTensorType tensorType(MLIRContext *ctx, llvm::ArrayRef<int64_t> shape,
                            DType t) {
  return RankedTensorType::get(shape, elementType(ctx, t));
}

Value constantScalar(OpBuilder &b, Location loc, DType t, double value) {
  Type type = elementType(b.getContext(), t);
  if (isFloat(t))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  return arith::ConstantOp::create(b, loc, integerAttr(type, int64_t(value)));
}

IntegerAttr integerAttr(Type type, int64_t value) {
  // Truncated to the width: u8's 255 is i8's bit pattern 0xff.
  return IntegerAttr::get(type, llvm::APInt(type.getIntOrFloatBitWidth(),
                                            uint64_t(value), /*isSigned=*/false,
                                            /*implicitTrunc=*/true));
}

Value castScalar(OpBuilder &b, Location loc, Value v, DType from, DType to) {
  if (from == to)
    return v;
  Type dst = elementType(b.getContext(), to);
  if (to == DType::Bool) {
    Value zero = constantScalar(b, loc, from, 0);
    if (isFloat(from)) // NaN is truthy: unordered-or-not-equal.
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, v, zero);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, v, zero);
  }
  bool fromUnsigned = from == DType::Bool || isUnsigned(from);
  if (isFloat(to) && !isFloat(from))
    return fromUnsigned ? Value(arith::UIToFPOp::create(b, loc, dst, v))
                        : Value(arith::SIToFPOp::create(b, loc, dst, v));
  if (isFloat(from) && isFloat(to)) {
    // f16 <-> bf16 goes through f32: neither holds the other.
    if (dtypeBytes(from) == dtypeBytes(to)) {
      v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
      return arith::TruncFOp::create(b, loc, dst, v);
    }
    return dtypeBytes(from) < dtypeBytes(to)
               ? Value(arith::ExtFOp::create(b, loc, dst, v))
               : Value(arith::TruncFOp::create(b, loc, dst, v));
  }
  if (isFloat(from))
    return isUnsigned(to) ? Value(arith::FPToUIOp::create(b, loc, dst, v))
                          : Value(arith::FPToSIOp::create(b, loc, dst, v));
  // Integers: the source's sign decides the widening (NumPy's astype).
  unsigned fromBits = v.getType().getIntOrFloatBitWidth();
  unsigned toBits = dst.getIntOrFloatBitWidth();
  if (fromBits == toBits)
    return v; // i8 <-> u8, i32 <-> u32: the same bits
  if (fromBits > toBits)
    return arith::TruncIOp::create(b, loc, dst, v);
  return fromUnsigned ? Value(arith::ExtUIOp::create(b, loc, dst, v))
                      : Value(arith::ExtSIOp::create(b, loc, dst, v));
}

/// Runs `fn` in f32 for f16/bf16 operands and rounds the result back.
static Value inWideFloat(OpBuilder &b, Location loc, DType t, ValueRange xs,
                         llvm::function_ref<Value(ValueRange)> fn) {
  if (t != DType::F16 && t != DType::BF16)
    return fn(xs);
  SmallVector<Value> wide;
  for (Value x : xs)
    wide.push_back(arith::ExtFOp::create(b, loc, b.getF32Type(), x));
  return arith::TruncFOp::create(b, loc, elementType(b.getContext(), t),
                                 fn(wide));
}

Value unaryScalar(OpBuilder &b, Location loc, Op op, DType t, Value x) {
  bool f = isFloat(t);
  switch (op) {
  case Op::Neg:
    return f ? Value(arith::NegFOp::create(b, loc, x))
             : Value(arith::SubIOp::create(b, loc, constantScalar(b, loc, t, 0),
                                           x));
  case Op::Abs:
    if (t == DType::Bool || isUnsigned(t))
      return x;
    return f ? Value(math::AbsFOp::create(b, loc, x))
             : Value(math::AbsIOp::create(b, loc, x));
  case Op::Relu:
    if (isUnsigned(t)) // never below 0
      return x;
    return f ? Value(arith::MaximumFOp::create(b, loc, x,
                                               constantScalar(b, loc, t, 0)))
             : Value(arith::MaxSIOp::create(b, loc, x,
                                            constantScalar(b, loc, t, 0)));
  case Op::Floor:
    return f ? Value(math::FloorOp::create(b, loc, x)) : x;
  case Op::Ceil:
    return f ? Value(math::CeilOp::create(b, loc, x)) : x;
  case Op::Not:
    return arith::XOrIOp::create(b, loc, x,
                                 arith::ConstantOp::create(
                                     b, loc, b.getBoolAttr(true)));
  default:
    break;
  }
  return inWideFloat(b, loc, t, x, [&](ValueRange v) -> Value {
    Value y = v[0];
    switch (op) {
    case Op::Exp: return math::ExpOp::create(b, loc, y);
    case Op::Log: return math::LogOp::create(b, loc, y);
    case Op::Sqrt: return math::SqrtOp::create(b, loc, y);
    case Op::Rsqrt: return math::RsqrtOp::create(b, loc, y);
    case Op::Sin: return math::SinOp::create(b, loc, y);
    case Op::Cos: return math::CosOp::create(b, loc, y);
    case Op::Tanh: return math::TanhOp::create(b, loc, y);
    case Op::Erf: return math::ErfOp::create(b, loc, y);
    case Op::Sigmoid: {
      // 1 / (1 + exp(-y))
      Value one = arith::ConstantOp::create(b, loc,
                                            b.getFloatAttr(y.getType(), 1.0));
      Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, y));
      return arith::DivFOp::create(b, loc, one,
                                   arith::AddFOp::create(b, loc, one, e));
    }
    default:
      llvm_unreachable("not a unary op");
    }
  });
}

static arith::CmpIPredicate intPredicate(Op op, bool isUnsigned) {
  using P = arith::CmpIPredicate;
  switch (op) {
  case Op::Eq: return P::eq;
  case Op::Ne: return P::ne;
  case Op::Lt: return isUnsigned ? P::ult : P::slt;
  case Op::Le: return isUnsigned ? P::ule : P::sle;
  case Op::Gt: return isUnsigned ? P::ugt : P::sgt;
  default: return isUnsigned ? P::uge : P::sge;
  }
}

static arith::CmpFPredicate floatPredicate(Op op) {
  using P = arith::CmpFPredicate;
  switch (op) {
  case Op::Eq: return P::OEQ;
  case Op::Ne: return P::UNE; // NaN != NaN, as in NumPy
  case Op::Lt: return P::OLT;
  case Op::Le: return P::OLE;
  case Op::Gt: return P::OGT;
  default: return P::OGE;
  }
}

Value remScalar(OpBuilder &b, Location loc, DType t, Value x, Value y) {
  if (!isFloat(t)) {
    // A zero divisor ends the run (checkNonzeroDivisor, before this); until
    // then, and for -1 (whose remainder is 0, where the processor's
    // division of the most negative value traps), divide by 1.
    Value zero = constantScalar(b, loc, t, 0);
    Value one = constantScalar(b, loc, t, 1);
    Value unsafe = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y, zero);
    if (!isUnsigned(t))
      unsafe = arith::OrIOp::create(
          b, loc, unsafe,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, y,
                                constantScalar(b, loc, t, -1)));
    y = arith::SelectOp::create(b, loc, unsafe, one, y);
    if (isUnsigned(t))
      return arith::RemUIOp::create(b, loc, x, y);
    // NumPy's remainder has the divisor's sign: C's remainder, moved by the
    // divisor when the two signs differ and it is not 0.
    Value r = arith::RemSIOp::create(b, loc, x, y);
    Value nonzero = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, r, zero);
    Value signsDiffer = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::slt,
        arith::XOrIOp::create(b, loc, r, y), zero);
    Value fix = arith::AndIOp::create(b, loc, nonzero, signsDiffer);
    return arith::SelectOp::create(b, loc, fix,
                                   arith::AddIOp::create(b, loc, r, y), r);
  }
  return inWideFloat(b, loc, t, {x, y}, [&](ValueRange v) -> Value {
    // fmod, moved by the divisor when the signs differ (x % 0 is NaN).
    Value r = arith::RemFOp::create(b, loc, v[0], v[1]);
    Value zero = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(r.getType(), 0.0));
    Value nonzero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, r, zero);
    Value rNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, r, zero);
    Value yNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, v[1], zero);
    Value differ = arith::XOrIOp::create(b, loc, rNeg, yNeg);
    Value fix = arith::AndIOp::create(b, loc, nonzero, differ);
    Value moved = arith::SelectOp::create(
        b, loc, fix, arith::AddFOp::create(b, loc, r, v[1]), r);
    // A zero remainder takes the divisor's sign (NumPy: 4 % -2 is -0.0).
    Value isZero = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, r, zero);
    return arith::SelectOp::create(
        b, loc, isZero, math::CopySignOp::create(b, loc, zero, v[1]), moved);
  });
}

Value binaryScalar(OpBuilder &b, Location loc, Op op, DType t, Value x,
                   Value y) {
  bool f = isFloat(t), boolean = t == DType::Bool;
  switch (op) {
  case Op::Add:
    if (boolean)
      return arith::OrIOp::create(b, loc, x, y);
    return f ? Value(arith::AddFOp::create(b, loc, x, y))
             : Value(arith::AddIOp::create(b, loc, x, y));
  case Op::Sub:
    return f ? Value(arith::SubFOp::create(b, loc, x, y))
             : Value(arith::SubIOp::create(b, loc, x, y));
  case Op::Mul:
    if (boolean)
      return arith::AndIOp::create(b, loc, x, y);
    return f ? Value(arith::MulFOp::create(b, loc, x, y))
             : Value(arith::MulIOp::create(b, loc, x, y));
  case Op::Div:
    return arith::DivFOp::create(b, loc, x, y);
  case Op::Pow:
    return inWideFloat(b, loc, t, {x, y}, [&](ValueRange v) -> Value {
      return math::PowFOp::create(b, loc, v[0], v[1]);
    });
  case Op::Maximum:
    if (boolean)
      return arith::OrIOp::create(b, loc, x, y);
    if (isUnsigned(t))
      return arith::MaxUIOp::create(b, loc, x, y);
    return f ? Value(arith::MaximumFOp::create(b, loc, x, y))
             : Value(arith::MaxSIOp::create(b, loc, x, y));
  case Op::Minimum:
    if (boolean)
      return arith::AndIOp::create(b, loc, x, y);
    if (isUnsigned(t))
      return arith::MinUIOp::create(b, loc, x, y);
    return f ? Value(arith::MinimumFOp::create(b, loc, x, y))
             : Value(arith::MinSIOp::create(b, loc, x, y));
  case Op::Rem:
    return remScalar(b, loc, t, x, y);
  case Op::And:
    return arith::AndIOp::create(b, loc, x, y);
  case Op::Or:
    return arith::OrIOp::create(b, loc, x, y);
  case Op::Eq: case Op::Ne: case Op::Lt: case Op::Le: case Op::Gt: case Op::Ge:
    if (f)
      return arith::CmpFOp::create(b, loc, floatPredicate(op), x, y);
    return arith::CmpIOp::create(b, loc, intPredicate(op, boolean || isUnsigned(t)), x, y);
  default:
    llvm_unreachable("not a binary op");
  }
}

} // namespace rankc::dag
