//===- WindowBuilders.cpp - conv and pool (version 2) ---------------------===//
//
// conv: x is first padded and input-dilated into a zero tensor
// (tensor.insert_slice with strides), then read at e * stride + k *
// dilation; channels are split into groups by expanding x, w and the
// result. Where both sides of the matrices are large enough, it is im2col
// and one batched GEMM per group (buildConvGemm: cuBLASLt on the GPU);
// otherwise (a depthwise convolution) one linalg.generic over
// [N, G, O/G, E..., C/G, K...] (the loops of upstream's grouped
// convolutions, linalg.conv_2d_ngchw_gfchw, for any number of spatial
// axes). pool is a linalg.generic over [N, C, E..., W...]
// that reads x where each window element lies (tensor.extract, as take
// does), so that padded elements are known: max and argmax skip them, sum
// counts them as zero (the checker refuses windows of padding only).
//
//===----------------------------------------------------------------------===//

#include "TensorBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;

namespace rankc::dag {

namespace {
Value zeros(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, DType t) {
  Value empty =
      tensor::EmptyOp::create(b, loc, shape, elementType(b.getContext(), t));
  return linalg::FillOp::create(b, loc,
                                ValueRange{constantScalar(b, loc, t, 0)},
                                ValueRange{empty})
      .getResult(0);
}

/// Groups of consecutive dims: `split` (a dim index) becomes two dims.
SmallVector<ReassociationIndices> splitDim(int64_t rank, int64_t split) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t i = 0, j = 0; i < rank; ++i) {
    groups.push_back({j++});
    if (i == split)
      groups.back().push_back(j++);
  }
  return groups;
}
} // namespace

/// Channels out (per group) and window elements (channels in per group
/// times kernel elements) from which a convolution is a GEMM: below,
/// matrices of a few rows or columns (a depthwise convolution) run better
/// as the direct loops.
constexpr int64_t kMinGemmSide = 4;

/// The convolution of the grouped, padded x `xg` [N, G, C/G, P...] with
/// `wg` [G, O/G, C/G, K...] as a GEMM per group (im2col): the windows of
/// x are copied out into cols [G, C/G, K..., N, E...] (an elementwise
/// generic with affine reads), then out[g, o, (n, e)] = sum over (c, k) of
/// w[g, o, (c, k)] * cols[g, (c, k), (n, e)], a batched GEMM whose loop
/// groups collapse (cuBLASLt on the GPU), transposed to [N, G, O/G, E...].
Value buildConvGemm(OpBuilder &b, Location loc, const Node &n, Value xg,
                    Value wg, ArrayRef<int64_t> xgShape,
                    ArrayRef<int64_t> outShape) {
  MLIRContext *ctx = b.getContext();
  const NodeAttrs &a = *n.attrs;
  int64_t k = int64_t(xgShape.size()) - 3;
  DType t = n.outDType;
  Type elem = elementType(ctx, t);
  auto wgShape = cast<RankedTensorType>(wg.getType()).getShape();
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };

  // cols: loops g, c, k1..kk, n, e1..ek.
  SmallVector<int64_t> colsShape{xgShape[1], xgShape[2]};
  for (int64_t i = 0; i < k; ++i)
    colsShape.push_back(wgShape[3 + i]);
  colsShape.push_back(xgShape[0]);
  for (int64_t i = 0; i < k; ++i)
    colsShape.push_back(outShape[3 + i]);
  int64_t colLoops = 3 + 2 * k;
  SmallVector<AffineExpr> xe{dim(2 + k), dim(0), dim(1)};
  for (int64_t i = 0; i < k; ++i)
    xe.push_back(dim(3 + k + i) * a.stride[i] + dim(2 + i) * a.dilation[i]);
  Value colsInit = tensor::EmptyOp::create(b, loc, colsShape, elem);
  Value cols =
      linalg::GenericOp::create(
          b, loc, TypeRange{colsInit.getType()}, ValueRange{xg},
          ValueRange{colsInit},
          ArrayRef<AffineMap>{AffineMap::get(colLoops, 0, xe, ctx),
                              AffineMap::getMultiDimIdentityMap(colLoops, ctx)},
          SmallVector<utils::IteratorType>(colLoops,
                                           utils::IteratorType::parallel),
          [&](OpBuilder &nb, Location l, ValueRange args) {
            linalg::YieldOp::create(nb, l, args[0]);
          })
          .getResult(0);

  // The GEMM: loops g, o, n, e1..ek (parallel), c, k1..kk (reduction).
  int64_t loops = 4 + 2 * k;
  SmallVector<AffineExpr> we{dim(0), dim(1), dim(3 + k)},
      ce{dim(0), dim(3 + k)}, oe{dim(0), dim(1), dim(2)};
  for (int64_t i = 0; i < k; ++i) {
    we.push_back(dim(4 + k + i));
    ce.push_back(dim(4 + k + i));
  }
  ce.push_back(dim(2));
  for (int64_t i = 0; i < k; ++i) {
    ce.push_back(dim(3 + i));
    oe.push_back(dim(3 + i));
  }
  SmallVector<int64_t> gemmShape{outShape[1], outShape[2], outShape[0]};
  for (int64_t i = 0; i < k; ++i)
    gemmShape.push_back(outShape[3 + i]);
  Value init = zeros(b, loc, gemmShape, t);
  SmallVector<utils::IteratorType> iters(3 + k, utils::IteratorType::parallel);
  iters.append(1 + k, utils::IteratorType::reduction);
  Value gemm =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{wg, cols},
          ValueRange{init},
          ArrayRef<AffineMap>{AffineMap::get(loops, 0, we, ctx),
                              AffineMap::get(loops, 0, ce, ctx),
                              AffineMap::get(loops, 0, oe, ctx)},
          iters,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value p = binaryScalar(nb, l, Op::Mul, t, args[0], args[1]);
            linalg::YieldOp::create(
                nb, l, binaryScalar(nb, l, Op::Add, t, args[2], p));
          })
          .getResult(0);
  SmallVector<int64_t> perm{2, 0, 1};
  for (int64_t i = 0; i < k; ++i)
    perm.push_back(3 + i);
  Value outInit = tensor::EmptyOp::create(b, loc, outShape, elem);
  return linalg::TransposeOp::create(b, loc, gemm, outInit, perm)
      .getResult()
      .front();
}

Value buildConv(OpBuilder &b, Location loc, const Node &n, Value x, Value w,
                ArrayRef<int64_t> xShape, ArrayRef<int64_t> wShape) {
  MLIRContext *ctx = b.getContext();
  const NodeAttrs &a = *n.attrs;
  int64_t k = int64_t(xShape.size()) - 2, g = a.groups;
  int64_t batch = xShape[0], c = xShape[1], o = wShape[0];
  DType t = n.outDType;
  Type elem = elementType(ctx, t);

  // The padded, input-dilated x (zeros between and around its elements).
  bool pads = llvm::any_of(a.padding, [](int64_t p) { return p; }) ||
              llvm::any_of(a.inputDilation, [](int64_t d) { return d != 1; });
  Value xp = x;
  SmallVector<int64_t> padded{batch, c};
  for (int64_t i = 0; i < k; ++i) {
    int64_t d = xShape[2 + i];
    padded.push_back((d ? (d - 1) * a.inputDilation[i] + 1 : 0) +
                     a.padding[2 * i] + a.padding[2 * i + 1]);
  }
  if (pads) {
    xp = zeros(b, loc, padded, t);
    if (llvm::all_of(xShape, [](int64_t d) { return d > 0; })) {
      SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0)), sizes,
          strides(2, b.getIndexAttr(1));
      for (int64_t d : xShape)
        sizes.push_back(b.getIndexAttr(d));
      for (int64_t i = 0; i < k; ++i) {
        offsets.push_back(b.getIndexAttr(a.padding[2 * i]));
        strides.push_back(b.getIndexAttr(a.inputDilation[i]));
      }
      xp = tensor::InsertSliceOp::create(b, loc, x, xp, offsets, sizes,
                                         strides);
    }
  }

  // [N, G, C/G, P...], [G, O/G, C/G, K...] and the result [N, G, O/G, E...].
  SmallVector<int64_t> xgShape{batch, g, c / g}, wgShape{g, o / g, c / g},
      outShape{batch, g, o / g};
  for (int64_t i = 0; i < k; ++i) {
    xgShape.push_back(padded[2 + i]);
    wgShape.push_back(wShape[2 + i]);
    outShape.push_back(n.outShape[2 + i]);
  }
  Value xg = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(xgShape, elem), xp, splitDim(2 + k, 1));
  Value wg = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get(wgShape, elem), w, splitDim(2 + k, 0));
  int64_t window = c / g;
  for (int64_t i = 0; i < k; ++i)
    window *= wShape[2 + i];
  if (o / g >= kMinGemmSide && window >= kMinGemmSide)
    return tensor::CollapseShapeOp::create(
        b, loc, tensorType(ctx, n.outShape, t),
        buildConvGemm(b, loc, n, xg, wg, xgShape, outShape),
        splitDim(2 + k, 1));
  Value init = zeros(b, loc, outShape, t);

  // Loops: n, g, o, e1..ek (parallel), c, k1..kk (reduction).
  int64_t loops = 4 + 2 * k;
  auto dim = [&](int64_t i) { return getAffineDimExpr(i, ctx); };
  SmallVector<AffineExpr> xe{dim(0), dim(1), dim(3 + k)}, we{dim(1), dim(2),
                                                              dim(3 + k)},
      oe{dim(0), dim(1), dim(2)};
  for (int64_t i = 0; i < k; ++i) {
    xe.push_back(dim(3 + i) * a.stride[i] + dim(4 + k + i) * a.dilation[i]);
    we.push_back(dim(4 + k + i));
    oe.push_back(dim(3 + i));
  }
  SmallVector<AffineMap> maps{AffineMap::get(loops, 0, xe, ctx),
                              AffineMap::get(loops, 0, we, ctx),
                              AffineMap::get(loops, 0, oe, ctx)};
  SmallVector<utils::IteratorType> iters(3 + k, utils::IteratorType::parallel);
  iters.append(1 + k, utils::IteratorType::reduction);
  Value out = linalg::GenericOp::create(
                  b, loc, TypeRange{init.getType()}, ValueRange{xg, wg},
                  ValueRange{init}, maps, iters,
                  [&](OpBuilder &nb, Location l, ValueRange args) {
                    Value p = binaryScalar(nb, l, Op::Mul, t, args[0], args[1]);
                    linalg::YieldOp::create(
                        nb, l, binaryScalar(nb, l, Op::Add, t, args[2], p));
                  })
                  .getResult(0);
  return tensor::CollapseShapeOp::create(
      b, loc, tensorType(ctx, n.outShape, t), out, splitDim(2 + k, 1));
}

Value buildPool(OpBuilder &b, Location loc, const Node &n, Value x,
                ArrayRef<int64_t> xShape, DType xType) {
  MLIRContext *ctx = b.getContext();
  const NodeAttrs &a = *n.attrs;
  int64_t k = int64_t(xShape.size()) - 2;
  Type elem = elementType(ctx, xType);
  bool isFloatType = isFloat(xType);
  Reduce r = n.reduce;
  bool maxLike = r == Reduce::Max || r == Reduce::Argmax;

  // The windows' result shape, and the loops: n, c, e1..ek, w1..wk.
  SmallVector<int64_t> shape(n.outShape.begin(), n.outShape.end());
  int64_t loops = 2 + 2 * k;
  SmallVector<AffineExpr> oe;
  for (int64_t i = 0; i < 2 + k; ++i)
    oe.push_back(getAffineDimExpr(i, ctx));
  AffineMap outMap = AffineMap::get(loops, 0, oe, ctx);
  SmallVector<utils::IteratorType> iters(2 + k, utils::IteratorType::parallel);
  iters.append(k, utils::IteratorType::reduction);

  // Initial values: max from the lowest value, argmax from index -1 (no
  // element yet), sums from 0.
  Value lowest;
  if (isFloatType)
    lowest = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(elem, -std::numeric_limits<double>::infinity()));
  else
    lowest = arith::ConstantOp::create(
        b, loc,
        b.getIntegerAttr(elem, isUnsigned(xType)
                                   ? APInt::getMinValue(elem.getIntOrFloatBitWidth())
                                   : APInt::getSignedMinValue(
                                         elem.getIntOrFloatBitWidth())));
  Value start = maxLike ? lowest : constantScalar(b, loc, xType, 0);
  Value acc = linalg::FillOp::create(
                  b, loc, ValueRange{start},
                  ValueRange{tensor::EmptyOp::create(b, loc, shape, elem)})
                  .getResult(0);
  SmallVector<Value> inits{acc};
  // The window's shape as an operand (as upstream's pooling ops take it):
  // it gives the window loops their ranges.
  SmallVector<AffineExpr> we;
  for (int64_t i = 0; i < k; ++i)
    we.push_back(getAffineDimExpr(2 + k + i, ctx));
  Value window = tensor::EmptyOp::create(b, loc, a.window, elem);
  SmallVector<AffineMap> maps{AffineMap::get(loops, 0, we, ctx), outMap};
  if (r == Reduce::Argmax) {
    Value none = arith::ConstantIntOp::create(b, loc, -1, 64);
    inits.push_back(linalg::FillOp::create(
                        b, loc, ValueRange{none},
                        ValueRange{tensor::EmptyOp::create(b, loc, shape,
                                                           b.getI64Type())})
                        .getResult(0));
    maps.push_back(outMap);
  }

  auto generic = linalg::GenericOp::create(
      b, loc, ValueRange(inits).getTypes(), ValueRange{window}, inits, maps,
      iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        auto cst = [&](int64_t v) {
          return arith::ConstantIndexOp::create(nb, l, v).getResult();
        };
        Value valid = arith::ConstantIntOp::create(nb, l, 1, 1);
        Value flat = cst(0);
        SmallVector<Value> coords{linalg::IndexOp::create(nb, l, 0),
                                  linalg::IndexOp::create(nb, l, 1)};
        for (int64_t i = 0; i < k; ++i) {
          // x's element at e * stride + w - lo along axis i, if any.
          Value e = linalg::IndexOp::create(nb, l, 2 + i);
          Value w = linalg::IndexOp::create(nb, l, 2 + k + i);
          Value at = arith::AddIOp::create(
              nb, l, arith::MulIOp::create(nb, l, e, cst(a.stride[i])), w);
          at = arith::SubIOp::create(nb, l, at, cst(a.padding[2 * i]));
          Value inside = arith::AndIOp::create(
              nb, l,
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::sge, at,
                                    cst(0)),
              arith::CmpIOp::create(nb, l, arith::CmpIPredicate::slt, at,
                                    cst(xShape[2 + i])));
          valid = arith::AndIOp::create(nb, l, valid, inside);
          Value safe = arith::SelectOp::create(nb, l, inside, at, cst(0));
          coords.push_back(safe);
          flat = arith::AddIOp::create(
              nb, l, arith::MulIOp::create(nb, l, flat, cst(xShape[2 + i])),
              safe);
        }
        Value v = tensor::ExtractOp::create(nb, l, x, coords);
        Value best = args[1]; // args[0]: the window's (unused) element
        if (!maxLike) { // sum, mean: padding counts as zero
          Value term = arith::SelectOp::create(
              nb, l, valid, v, constantScalar(nb, l, xType, 0));
          linalg::YieldOp::create(
              nb, l, binaryScalar(nb, l, Op::Add, xType, best, term));
          return;
        }
        // The first maximum in window order wins; NaN beats any number.
        Value greater;
        if (isFloatType) {
          Value gt = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OGT, v,
                                           best);
          Value vNan = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::UNO,
                                             v, v);
          Value bestNum = arith::CmpFOp::create(
              nb, l, arith::CmpFPredicate::ORD, best, best);
          greater = arith::OrIOp::create(
              nb, l, gt, arith::AndIOp::create(nb, l, vNan, bestNum));
        } else {
          greater = arith::CmpIOp::create(nb, l,
                                          isUnsigned(xType)
                                              ? arith::CmpIPredicate::ugt
                                              : arith::CmpIPredicate::sgt,
                                          v,
                                          best);
        }
        if (r == Reduce::Argmax) {
          Value first = arith::CmpIOp::create(
              nb, l, arith::CmpIPredicate::eq, args[2],
              arith::ConstantIntOp::create(nb, l, -1, 64));
          greater = arith::OrIOp::create(nb, l, greater, first);
        }
        Value take = arith::AndIOp::create(nb, l, valid, greater);
        SmallVector<Value> yields{
            arith::SelectOp::create(nb, l, take, v, best)};
        if (r == Reduce::Argmax)
          yields.push_back(arith::SelectOp::create(
              nb, l, take,
              arith::IndexCastOp::create(nb, l, nb.getI64Type(), flat),
              args[2]));
        linalg::YieldOp::create(nb, l, yields);
      });
  if (r == Reduce::Argmax)
    return generic.getResult(1);
  Value result = generic.getResult(0);
  if (r != Reduce::Mean)
    return result;
  // count_include_pad: the sum over the whole window size.
  int64_t size = 1;
  for (int64_t w : a.window)
    size *= w;
  return buildElementwise(
      b, loc, ValueRange{result}, n.outShape, xType,
      [&](OpBuilder &nb, Location l, ValueRange v) -> Value {
        return binaryScalar(nb, l, Op::Div, xType, v[0],
                            constantScalar(nb, l, xType, double(size)));
      });
}

} // namespace rankc::dag
