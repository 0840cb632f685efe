//===- TensorBuilders.cpp - DAG ops as linalg and tensor ops --------------===//
//
// Elementwise ops, iota and broadcast_to become one linalg.generic each (with
// NumPy broadcasting in the indexing maps, so no broadcast is materialized);
// matmul becomes linalg.matmul / batch_matmul; einsum and reductions become
// linalg.generic with reduction iterators; reshapes become collapse/expand.
//
//===----------------------------------------------------------------------===//

#include "TensorBuilders.h"
#include "rankc/Dialect/Comm/Comm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <limits>

using namespace mlir;

namespace rankc::dag {

static Value emptyTensor(OpBuilder &b, Location loc,
                         llvm::ArrayRef<int64_t> shape, Type elem) {
  return tensor::EmptyOp::create(b, loc, shape, elem);
}

/// The scalar body as the same op on whole tensors, when it is one
/// elementwise-mappable op of the arguments and nothing broadcasts:
/// `arith.addf %a, %b : tensor<16xf32>` is one op where the generic is a
/// tensor.empty, a linalg.generic, a block and a yield. The passes before
/// lowering (verification, partitioning, the plan, printing) walk every op
/// of documents of 10^6 nodes, most of them elementwise; the lowering's
/// convert-elementwise-to-linalg turns these back into the generic.
static Value onTensors(OpBuilder &b, Block &body, Value result,
                       ValueRange inputs, llvm::ArrayRef<int64_t> shape) {
  if (!llvm::hasSingleElement(body))
    return {};
  Operation &op = body.front();
  if (op.getNumResults() != 1 || op.getResult(0) != result ||
      op.getNumRegions() != 0 || !OpTrait::hasElementwiseMappableTraits(&op))
    return {};
  for (Value in : inputs)
    if (cast<RankedTensorType>(in.getType()).getShape() != shape)
      return {};
  IRMapping map;
  for (auto [arg, in] : llvm::zip(body.getArguments(), inputs))
    map.map(arg, in);
  for (Value v : op.getOperands())
    if (!map.contains(v))
      return {};
  Operation *onTensor = b.clone(op, map);
  onTensor->getResult(0).setType(
      RankedTensorType::get(shape, result.getType()));
  return onTensor->getResult(0);
}

Value buildElementwise(OpBuilder &b, Location loc, ValueRange inputs,
                       llvm::ArrayRef<int64_t> shape, DType out,
                       ScalarBody body) {
  MLIRContext *ctx = b.getContext();
  // The scalar body first, in a block of its own: it becomes the generic's
  // region, or is applied to the tensors directly.
  auto block = std::make_unique<Block>();
  for (Value in : inputs)
    block->addArgument(getElementTypeOrSelf(in.getType()), loc);
  Value result;
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToEnd(block.get());
    result = body(b, loc, block->getArguments());
  }
  if (Value onTensor = onTensors(b, *block, result, inputs, shape))
    return onTensor;

  unsigned rank = shape.size();
  SmallVector<AffineMap> maps;
  for (Value in : inputs) {
    auto inShape = cast<RankedTensorType>(in.getType()).getShape();
    unsigned lead = rank - inShape.size();
    SmallVector<AffineExpr> exprs;
    for (unsigned j = 0; j < inShape.size(); ++j) {
      // A size-1 axis against a larger result axis repeats its one element.
      if (inShape[j] == 1 && shape[lead + j] != 1)
        exprs.push_back(getAffineConstantExpr(0, ctx));
      else
        exprs.push_back(getAffineDimExpr(lead + j, ctx));
    }
    maps.push_back(AffineMap::get(rank, 0, exprs, ctx));
  }
  maps.push_back(AffineMap::getMultiDimIdentityMap(rank, ctx));
  Type elem = elementType(ctx, out);
  Value init = emptyTensor(b, loc, shape, elem);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(b, loc, TypeRange{init.getType()},
                                           inputs, ValueRange{init}, maps,
                                           iters);
  block->addArgument(elem, loc);
  generic.getRegion().push_back(block.release());
  OpBuilder inBody = OpBuilder::atBlockEnd(&generic.getRegion().front());
  linalg::YieldOp::create(inBody, loc, result);
  return generic.getResult(0);
}

Attribute scalarAttr(Builder &b, DType t, const Scalar &s) {
  Type type = elementType(b.getContext(), t);
  if (t == DType::Bool)
    return b.getBoolAttr(s.b);
  if (!isFloat(t))
    return integerAttr(type, s.kind == Scalar::Bool ? int64_t(s.b) : s.i);
  // Round once, from the exact written value (integers beyond 2^53 too).
  const llvm::fltSemantics &sem = cast<FloatType>(type).getFloatSemantics();
  auto rm = llvm::APFloat::rmNearestTiesToEven;
  llvm::APFloat v(sem);
  if (s.kind == Scalar::Int) {
    (void)v.convertFromAPInt(llvm::APInt(64, s.i, /*isSigned=*/true), true, rm);
  } else {
    v = llvm::APFloat(s.kind == Scalar::Float ? s.f : double(s.b));
    bool lost;
    (void)v.convert(sem, rm, &lost);
  }
  return b.getFloatAttr(type, v);
}

Value buildConstant(OpBuilder &b, Location loc, const Node &n) {
  auto type = tensorType(b.getContext(), n.outShape, n.outDType);
  DenseElementsAttr attr;
  if (n.rare().value.shape.empty()) {
    attr = DenseElementsAttr::get(type, scalarAttr(b, n.outDType,
                                                   n.rare().value.elements[0]));
  } else {
    SmallVector<Attribute> elems;
    elems.reserve(n.rare().value.elements.size());
    for (const Scalar &s : n.rare().value.elements)
      elems.push_back(scalarAttr(b, n.outDType, s));
    attr = DenseElementsAttr::get(type, elems);
  }
  return arith::ConstantOp::create(b, loc, attr);
}

Value buildIota(OpBuilder &b, Location loc, const Node &n) {
  return buildElementwise(
      b, loc, {}, n.outShape, n.outDType,
      [&](OpBuilder &nb, Location nloc, ValueRange) -> Value {
        Value i = linalg::IndexOp::create(nb, nloc, n.axis);
        i = arith::IndexCastOp::create(nb, nloc, nb.getI64Type(), i);
        return castScalar(nb, nloc, i, DType::I64, n.outDType);
      });
}

Value buildReshape(OpBuilder &b, Location loc, Value in,
                   llvm::ArrayRef<int64_t> shape) {
  auto inType = cast<RankedTensorType>(in.getType());
  if (inType.getShape() == ArrayRef<int64_t>(shape))
    return in;
  auto outType = RankedTensorType::get(shape, inType.getElementType());
  // To or from rank 0 (every size is 1): one reshape with no groups.
  if (inType.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, outType, in,
                                         ArrayRef<ReassociationIndices>{});
  if (shape.empty())
    return tensor::CollapseShapeOp::create(b, loc, outType, in,
                                           ArrayRef<ReassociationIndices>{});
  // Otherwise row-major = collapse everything to 1-D, expand to the target.
  auto oneGroup = [](size_t rank) {
    ReassociationIndices all;
    for (size_t i = 0; i < rank; ++i)
      all.push_back(i);
    return SmallVector<ReassociationIndices>{all};
  };
  Value flat = in;
  if (inType.getRank() != 1)
    flat = tensor::CollapseShapeOp::create(
        b, loc,
        RankedTensorType::get({inType.getNumElements()},
                              inType.getElementType()),
        in, oneGroup(inType.getRank()));
  if (shape.size() == 1)
    return flat;
  return tensor::ExpandShapeOp::create(b, loc, outType, flat,
                                       oneGroup(shape.size()));
}

/// Identity of a reduction in dtype `acc`.
static Value reductionInit(OpBuilder &b, Location loc, Op op, DType acc) {
  Type type = elementType(b.getContext(), acc);
  bool isMax = op == Op::Max;
  switch (op) {
  case Op::Sum: case Op::Mean:
    return constantScalar(b, loc, acc, 0);
  case Op::Prod:
    return constantScalar(b, loc, acc, 1);
  default:
    break;
  }
  if (acc == DType::Bool)
    return arith::ConstantOp::create(b, loc, b.getBoolAttr(!isMax));
  if (isFloat(acc)) {
    auto sem = &cast<FloatType>(type).getFloatSemantics();
    return arith::ConstantOp::create(
        b, loc, b.getFloatAttr(type, llvm::APFloat::getInf(*sem, isMax)));
  }
  unsigned bits = type.getIntOrFloatBitWidth();
  llvm::APInt v = isUnsigned(acc) ? (isMax ? llvm::APInt::getMinValue(bits)
                                           : llvm::APInt::getMaxValue(bits))
                 : isMax ? llvm::APInt::getSignedMinValue(bits)
                         : llvm::APInt::getSignedMaxValue(bits);
  return arith::ConstantOp::create(b, loc, b.getIntegerAttr(type, v));
}

Value buildReduction(OpBuilder &b, Location loc, const Node &n, Value in,
                     DType inType, llvm::ArrayRef<int64_t> inShape) {
  MLIRContext *ctx = b.getContext();
  unsigned rank = inShape.size();
  std::vector<bool> reduced(rank, n.rare().axes.empty() && !n.has(K_axes));
  for (int64_t a : n.rare().axes)
    reduced[a] = true;
  // Accumulate f16/bf16 sums in f32 (as NumPy's mean does) and round once.
  DType acc = n.outDType;
  if ((n.op == Op::Sum || n.op == Op::Prod || n.op == Op::Mean) &&
      (acc == DType::F16 || acc == DType::BF16))
    acc = DType::F32;

  std::vector<int64_t> outShape;
  SmallVector<AffineExpr> outExprs;
  SmallVector<utils::IteratorType> iters;
  int64_t count = 1;
  for (unsigned i = 0; i < rank; ++i) {
    if (reduced[i]) {
      count *= inShape[i];
      iters.push_back(utils::IteratorType::reduction);
    } else {
      outShape.push_back(inShape[i]);
      outExprs.push_back(getAffineDimExpr(i, ctx));
      iters.push_back(utils::IteratorType::parallel);
    }
  }
  Type accType = elementType(ctx, acc);
  Value init = linalg::FillOp::create(
                   b, loc, ValueRange{reductionInit(b, loc, n.op, acc)},
                   ValueRange{emptyTensor(b, loc, outShape, accType)})
                   .getResult(0);
  SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(rank, ctx),
                              AffineMap::get(rank, 0, outExprs, ctx)};
  Op combine = n.op == Op::Prod  ? Op::Mul
               : n.op == Op::Max ? Op::Maximum
               : n.op == Op::Min ? Op::Minimum
                                 : Op::Add;
  Value result =
      linalg::GenericOp::create(
          b, loc, TypeRange{init.getType()}, ValueRange{in}, ValueRange{init},
          maps, iters,
          [&](OpBuilder &nb, Location nloc, ValueRange args) {
            Value x = castScalar(nb, nloc, args[0], inType, acc);
            linalg::YieldOp::create(
                nb, nloc, binaryScalar(nb, nloc, combine, acc, args[1], x));
          })
          .getResult(0);

  if (n.op == Op::Mean || acc != n.outDType) {
    result = buildElementwise(
        b, loc, result, outShape, n.outDType,
        [&](OpBuilder &nb, Location nloc, ValueRange args) -> Value {
          Value v = args[0];
          if (n.op == Op::Mean)
            v = arith::DivFOp::create(
                nb, nloc, v, constantScalar(nb, nloc, acc, double(count)));
          return castScalar(nb, nloc, v, acc, n.outDType);
        });
  }
  if (n.keepdims && rank != outShape.size()) {
    // Each kept axis takes the reduced (size-1) axes around it into its
    // group; with no kept axis the rank-0 result expands with no groups.
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices current;
    for (unsigned i = 0; i < rank; ++i) {
      current.push_back(i);
      if (!reduced[i]) {
        groups.push_back(current);
        current.clear();
      }
    }
    if (!groups.empty())
      groups.back().append(current.begin(), current.end());
    result = tensor::ExpandShapeOp::create(
        b, loc, tensorType(ctx, n.outShape, n.outDType), result, groups);
  }
  return result;
}

Value buildEinsum(OpBuilder &b, Location loc, const Node &n, ValueRange inputs,
                  ArrayRef<std::string> terms, const std::string &output) {
  MLIRContext *ctx = b.getContext();
  // Loops: the output letters in output order, then each contracted letter
  // in order of first appearance.
  std::string loops = output;
  for (const std::string &t : terms)
    for (char c : t)
      if (loops.find(c) == std::string::npos)
        loops.push_back(c);
  auto mapOf = [&](const std::string &term) {
    SmallVector<AffineExpr> exprs;
    for (char c : term)
      exprs.push_back(getAffineDimExpr(loops.find(c), ctx));
    return AffineMap::get(loops.size(), 0, exprs, ctx);
  };
  SmallVector<AffineMap> maps;
  for (const std::string &t : terms)
    maps.push_back(mapOf(t));
  maps.push_back(mapOf(output));
  SmallVector<utils::IteratorType> iters;
  for (size_t i = 0; i < loops.size(); ++i)
    iters.push_back(i < output.size() ? utils::IteratorType::parallel
                                      : utils::IteratorType::reduction);
  bool reduces = loops.size() > output.size();
  Type elem = elementType(ctx, n.outDType);
  Value init = emptyTensor(b, loc, n.outShape, elem);
  if (reduces)
    init = linalg::FillOp::create(b, loc,
                                  ValueRange{constantScalar(b, loc, n.outDType,
                                                            0)},
                                  ValueRange{init})
               .getResult(0);
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, maps,
             iters,
             [&](OpBuilder &nb, Location nloc, ValueRange args) {
               Value prod = args[0];
               for (size_t i = 1; i + 1 < args.size(); ++i)
                 prod = binaryScalar(nb, nloc, Op::Mul, n.outDType, prod,
                                     args[i]);
               if (reduces)
                 prod = binaryScalar(nb, nloc, Op::Add, n.outDType,
                                     args.back(), prod);
               linalg::YieldOp::create(nb, nloc, prod);
             })
      .getResult(0);
}

Value buildMatmul(OpBuilder &b, Location loc, const Node &n, Value lhs,
                  Value rhs) {
  bool batched = n.outShape.size() == 3;
  // linalg's named contractions add with arith.addi, which is xor on i1:
  // bool matmul (or of ands, as NumPy) goes through einsum instead.
  if (n.outDType == DType::Bool) {
    std::vector<std::string> terms = {batched ? "bmk" : "mk",
                                      batched ? "bkn" : "kn"};
    return buildEinsum(b, loc, n, ValueRange{lhs, rhs}, terms,
                       batched ? "bmn" : "mn");
  }
  Type elem = elementType(b.getContext(), n.outDType);
  Value init = linalg::FillOp::create(
                   b, loc, ValueRange{constantScalar(b, loc, n.outDType, 0)},
                   ValueRange{emptyTensor(b, loc, n.outShape, elem)})
                   .getResult(0);
  if (batched)
    return linalg::BatchMatmulOp::create(b, loc, TypeRange{init.getType()},
                                         ValueRange{lhs, rhs}, ValueRange{init})
        .getResult(0);
  return linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                  ValueRange{lhs, rhs}, ValueRange{init})
      .getResult(0);
}

} // namespace rankc::dag

namespace rankc::dag {

Value buildAllReduce(OpBuilder &b, Location loc, const Node &n, Value x,
                     Attribute tag) {
  MLIRContext *ctx = b.getContext();
  auto kind = comm::ReduceKindAttr::get(ctx, comm::ReduceKind(n.reduce));
  bool flip = isUnsigned(n.outDType) &&
              (n.reduce == Reduce::Max || n.reduce == Reduce::Min);
  if (!flip) // sums and products wrap alike signed or not
    return comm::AllReduceOp::create(b, loc, x.getType(), kind, x, tag);
  // Unsigned max/min as the signed one on values whose top bit is flipped:
  // that maps unsigned order onto signed order, and back.
  auto flipTop = [&](Value v) {
    return buildElementwise(
        b, loc, v, n.outShape, n.outDType,
        [&](OpBuilder &nb, Location l, ValueRange e) -> Value {
          unsigned bits = e[0].getType().getIntOrFloatBitWidth();
          Value top = arith::ConstantOp::create(
              nb, l, IntegerAttr::get(e[0].getType(),
                                      llvm::APInt::getSignMask(bits)));
          return arith::XOrIOp::create(nb, l, e[0], top);
        });
  };
  Value reduced = comm::AllReduceOp::create(b, loc, x.getType(), kind,
                                            flipTop(x), tag);
  return flipTop(reduced);
}

} // namespace rankc::dag

namespace rankc::dag {

Value inWideFloat(OpBuilder &b, Location loc, const Node &n, ValueRange args,
                  function_ref<Value(const Node &, ValueRange)> build) {
  if (n.outDType != DType::F16 && n.outDType != DType::BF16)
    return build(n, args);
  // dag-format.md v3: as a cast to f32 before and back after (cuBLAS's and
  // PyTorch's accumulation), so the f32 lowering (and its GEMM library
  // calls) serves these too.
  SmallVector<Value> wide;
  for (Value x : args) {
    auto type = cast<RankedTensorType>(x.getType());
    wide.push_back(buildElementwise(
        b, loc, x, type.getShape(), DType::F32,
        [&](OpBuilder &nb, Location l, ValueRange e) -> Value {
          return castScalar(nb, l, e[0], n.outDType, DType::F32);
        }));
  }
  Node m;
  m.id = n.id;
  m.op = n.op;
  m.keys = n.keys;
  m.axis = n.axis;
  m.keepdims = n.keepdims;
  m.reduce = n.reduce;
  m.pos = n.pos;
  m.outShape = n.outShape;
  m.dtype = m.outDType = DType::F32;
  if (n.attrs)
    m.attrs = std::make_unique<NodeAttrs>(*n.attrs);
  Value result = build(m, wide);
  return buildElementwise(
      b, loc, result, n.outShape, n.outDType,
      [&](OpBuilder &nb, Location l, ValueRange e) -> Value {
        return castScalar(nb, l, e[0], DType::F32, n.outDType);
      });
}

} // namespace rankc::dag
