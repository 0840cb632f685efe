//===- AccumulateGradients.cpp - gradients summed over micro-steps --------===//
//
// `accumulate` K > 1 (dag-format.md v3): a step computes one micro-batch;
// its gradients are added into accumulators on the rank (DDP's no_sync), and
// every K-th step the sum is averaged over the ranks and by K and the
// optimizer updates the parameters. The two kinds of step are two functions
// with the same arguments and results: this pass gives the program (the
// update step) its accumulators, and comm-micro-steps builds the micro-step
// from the program the same way with `micro` set. Between updates each
// gradient output holds the last update's gradient, carried as state.
//
// In the update step the gradient becomes (sum + g) / K before
// comm-bucket-gradients averages it over the ranks (the mean of the K
// micro-batches' gradients of all ranks), and the accumulator restarts at
// zero.
//
//===----------------------------------------------------------------------===//

#include "OptimizerBuilders.h"
#include "rankc/Dialect/Comm/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace rankc {
#define GEN_PASS_DEF_COMMACCUMULATEGRADIENTS
#include "rankc/Dialect/Comm/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;
using namespace rankc;

namespace {
constexpr StringLiteral kSumSuffix = "@grad_sum", kLastSuffix = "@grad";

/// (x + y) / k elementwise (k == 0: x + y), in f32 for f16 and bf16.
Value addAndScale(OpBuilder &b, Location loc, Value x, Value y, int64_t k) {
  auto type = cast<RankedTensorType>(x.getType());
  auto elem = cast<FloatType>(type.getElementType());
  Type compute = elem.getWidth() < 32 ? b.getF32Type() : Type(elem);
  unsigned rank = type.getRank();
  auto id = b.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, type, ValueRange{x, y},
      ValueRange{tensor::EmptyOp::create(b, loc, type.getShape(), elem)},
      SmallVector<AffineMap>(3, id), iters,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        auto widen = [&](Value v) -> Value {
          return v.getType() == compute
                     ? v
                     : Value(arith::ExtFOp::create(nb, nl, compute, v));
        };
        Value sum = arith::AddFOp::create(nb, nl, widen(args[0]), widen(args[1]));
        if (k)
          sum = arith::DivFOp::create(
              nb, nl, sum,
              arith::ConstantOp::create(nb, nl, nb.getFloatAttr(compute, k)));
        if (compute != elem)
          sum = arith::TruncFOp::create(nb, nl, elem, sum);
        linalg::YieldOp::create(nb, nl, sum);
      });
  return generic.getResult(0);
}

struct AccumulateGradientsPass
    : public rankc::impl::CommAccumulateGradientsBase<AccumulateGradientsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto dp = module->getAttrOfType<comm::DataParallelAttr>(
        comm::CommDialect::kDataParallel);
    if (!dp || dp.getAccumulateOr1() <= 1 ||
        module->hasAttr(comm::CommDialect::kPartitioned))
      return;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr(comm::CommDialect::kRanks) &&
          failed(accumulateGradients(fn, dp.getAccumulateOr1(), false)))
        return signalPassFailure();
  }
};
} // namespace

LogicalResult rankc::accumulateGradients(func::FuncOp fn, int64_t k,
                                         bool micro) {
  OpBuilder b(fn.getContext());
  auto state = [&](StringRef name) {
    return b.getNamedAttr(comm::CommDialect::kOptimizerState,
                          b.getStringAttr(name));
  };
  // Applied already (an .mlir printed after this pass).
  for (unsigned a = 0; a < fn.getNumArguments(); ++a)
    if (auto s = fn.getArgAttrOfType<StringAttr>(
            a, comm::CommDialect::kOptimizerState))
      if (s.getValue().ends_with(kSumSuffix))
        return success();
  Operation *ret = fn.getBody().front().getTerminator();
  b.setInsertionPoint(ret);
  unsigned results = fn.getNumResults();
  for (unsigned r = 0; r < results; ++r) {
    if (!fn.getResultAttr(r, comm::CommDialect::kGradOf))
      continue;
    auto names =
        fn.getResultAttrOfType<ArrayAttr>(r, comm::CommDialect::kOutputs);
    Value g = ret->getOperand(r);
    auto type = cast<RankedTensorType>(g.getType());
    if (!names || names.empty() || !isa<FloatType>(type.getElementType()))
      continue; // (the bucketing reports a gradient that is not a float)
    std::string name = cast<StringAttr>(names[0]).str();
    Location loc = g.getLoc();
    unsigned sumArg = fn.getNumArguments();
    (void)fn.insertArgument(sumArg, type,
                            b.getDictionaryAttr(state(name + kSumSuffix.str())),
                            loc);
    unsigned lastArg = fn.getNumArguments();
    (void)fn.insertArgument(lastArg, type,
                            b.getDictionaryAttr(state(name + kLastSuffix.str())),
                            loc);
    fn.setResultAttr(r, comm::CommDialect::kOptimizerState,
                     b.getStringAttr(name + kLastSuffix.str()));
    Value sum = fn.getArgument(sumArg);
    Value newSum;
    if (micro) {
      newSum = addAndScale(b, loc, sum, g, 0);
      ret->setOperand(r, fn.getArgument(lastArg));
    } else {
      ret->setOperand(r, addAndScale(b, loc, sum, g, k));
      Value zero = arith::ConstantOp::create(
          b, loc, b.getFloatAttr(type.getElementType(), 0));
      newSum = linalg::FillOp::create(
                   b, loc, zero,
                   ValueRange{tensor::EmptyOp::create(b, loc, type.getShape(),
                                                      type.getElementType())})
                   .getResult(0);
    }
    unsigned i = fn.getNumResults();
    (void)fn.insertResult(i, type,
                          b.getDictionaryAttr(state(name + kSumSuffix.str())));
    ret->insertOperands(ret->getNumOperands(), newSum);
  }
  return success();
}
