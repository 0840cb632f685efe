//===- GradClipping.cpp - clip_grad_norm_ in the generated step -----------===//
//
// torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type): a norm per
// gradient, the total norm of those, and every gradient multiplied by
// clamp(max_norm / (total + 1e-6), max=1). Here each gradient's partial (its
// sum of squares, or its largest magnitude) is a reduction of its own, which
// depends on nothing but that gradient: partitioning runs it right after
// the gradient's bucket is averaged, while later buckets are still being
// reduced. Only the total, the coefficient and the scaling wait for the last
// bucket. Norms are computed in f32 (f64 when a gradient is f64), as
// PyTorch computes them in the gradients' dtype; a non-finite total
// propagates into the gradients as it does in PyTorch.
//
//===----------------------------------------------------------------------===//

#include "OptimizerBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace rankc {

namespace {
Value convert(OpBuilder &b, Location loc, Value x, Type to) {
  unsigned from = x.getType().getIntOrFloatBitWidth();
  if (x.getType() == to)
    return x;
  if (from < to.getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, to, x);
  return arith::TruncFOp::create(b, loc, to, x);
}

/// A 0-d tensor of `type` holding `value`.
Value scalarInit(OpBuilder &b, Location loc, FloatType type, double value) {
  Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, type);
  Value c = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  return linalg::FillOp::create(b, loc, c, empty).getResult(0);
}

/// One gradient's partial: the sum of its squares (norm 2) or its largest
/// magnitude (inf), in `norm`.
Value partial(OpBuilder &b, Location loc, Value grad, FloatType norm,
              bool inf) {
  auto type = cast<RankedTensorType>(grad.getType());
  unsigned rank = type.getRank();
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank),
                              AffineMap::get(rank, 0, b.getContext())};
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, RankedTensorType::get({}, norm), ValueRange{grad},
      ValueRange{scalarInit(b, loc, norm, 0)}, maps, iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value x = convert(nb, nl, args[0], norm);
        Value next =
            inf ? Value(arith::MaximumFOp::create(
                      nb, nl, args[1], math::AbsFOp::create(nb, nl, x)))
                : Value(arith::AddFOp::create(
                      nb, nl, args[1], arith::MulFOp::create(nb, nl, x, x)));
        linalg::YieldOp::create(nb, nl, next);
      });
  return generic.getResult(0);
}
} // namespace

SmallVector<Value> buildClipGradNorm(OpBuilder &b, Location loc,
                                     ValueRange grads, double maxNorm,
                                     bool inf, Value &total) {
  // PyTorch stacks the per-gradient norms, promoting to the widest dtype.
  bool anyF64 = llvm::any_of(grads, [](Value g) {
    return cast<RankedTensorType>(g.getType()).getElementType().isF64();
  });
  FloatType norm = anyF64 ? FloatType(b.getF64Type()) : b.getF32Type();
  SmallVector<Value> partials;
  for (Value g : grads)
    partials.push_back(partial(b, loc, g, norm, inf));

  // The total and the coefficient, from the partials (0-d operands).
  auto scalar = RankedTensorType::get({}, norm);
  auto f32 = RankedTensorType::get({}, b.getF32Type());
  auto map = AffineMap::get(0, 0, b.getContext());
  SmallVector<AffineMap> maps(partials.size() + 2, map);
  auto totals = linalg::GenericOp::create(
      b, loc, TypeRange{f32, scalar}, partials,
      ValueRange{tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{},
                                         b.getF32Type()),
                 tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{}, norm)},
      maps, ArrayRef<utils::IteratorType>{},
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        auto c = [&](double x) -> Value {
          return arith::ConstantOp::create(nb, nl, nb.getFloatAttr(norm, x));
        };
        Value sum = args[0];
        for (Value p : args.take_front(partials.size()).drop_front())
          sum = inf ? Value(arith::MaximumFOp::create(nb, nl, sum, p))
                    : Value(arith::AddFOp::create(nb, nl, sum, p));
        if (partials.empty())
          sum = c(0);
        Value t = inf ? sum : Value(math::SqrtOp::create(nb, nl, sum));
        // clip_coef = max_norm / (total + 1e-6) (a tensor's reciprocal
        // times max_norm), clamped to at most 1 (NaN stays NaN).
        Value recip = arith::DivFOp::create(
            nb, nl, c(1), arith::AddFOp::create(nb, nl, t, c(1e-6)));
        Value coef = arith::MinimumFOp::create(
            nb, nl, arith::MulFOp::create(nb, nl, recip, c(maxNorm)), c(1));
        linalg::YieldOp::create(
            nb, nl, ValueRange{convert(nb, nl, t, nb.getF32Type()), coef});
      });
  total = totals.getResult(0);
  Value coef = totals.getResult(1);

  SmallVector<Value> clipped;
  for (Value g : grads) {
    auto type = cast<RankedTensorType>(g.getType());
    auto elem = cast<FloatType>(type.getElementType());
    Type compute = elem.getWidth() < 32 ? b.getF32Type() : Type(elem);
    unsigned rank = type.getRank();
    SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank),
                                AffineMap::get(rank, 0, b.getContext()),
                                b.getMultiDimIdentityMap(rank)};
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        b, loc, type, ValueRange{g, coef},
        ValueRange{tensor::EmptyOp::create(b, loc, type.getShape(), elem)},
        maps, iters, [&](OpBuilder &nb, Location nl, ValueRange args) {
          Value x = arith::MulFOp::create(nb, nl, convert(nb, nl, args[0], compute),
                                          convert(nb, nl, args[1], compute));
          linalg::YieldOp::create(nb, nl, convert(nb, nl, x, elem));
        });
    clipped.push_back(generic.getResult(0));
  }
  return clipped;
}

} // namespace rankc
