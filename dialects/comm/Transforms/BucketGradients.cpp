//===- BucketGradients.cpp - average gradients in DDP's buckets -----------===//

#include "BucketChoice.h"

#include "rankc/Analysis/Buckets.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Dialect/Comm/Transforms/Passes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringSet.h"

namespace rankc {
#define GEN_PASS_DEF_COMMBUCKETGRADIENTS
#include "rankc/Dialect/Comm/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;
using namespace rankc;

namespace {

/// `value` as a 1-D tensor (row-major), and back.
Value flatten(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  auto flat = RankedTensorType::get({type.getNumElements()},
                                    type.getElementType());
  if (type.getRank() == 1)
    return value;
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, flat, value,
                                         ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t i = 0; i < type.getRank(); ++i)
    all.push_back(i);
  return tensor::CollapseShapeOp::create(b, loc, flat, value,
                                         ArrayRef<ReassociationIndices>{all});
}

Value unflatten(OpBuilder &b, Location loc, Value flat,
                RankedTensorType type) {
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat,
                                           ArrayRef<ReassociationIndices>{});
  ReassociationIndices all;
  for (int64_t i = 0; i < type.getRank(); ++i)
    all.push_back(i);
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       ArrayRef<ReassociationIndices>{all});
}

struct BucketGradientsPass
    : public rankc::impl::CommBucketGradientsBase<BucketGradientsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto dp = module->getAttrOfType<comm::DataParallelAttr>(
        comm::CommDialect::kDataParallel);
    if (!dp)
      return;
    // Bucketed already (an .mlir printed by `rankc compile --emit mlir`).
    bool done = module->hasAttr(comm::CommDialect::kPartitioned);
    module.walk([&](comm::AllReduceOp op) {
      done |= op->hasAttr(comm::CommDialect::kBucket);
    });
    // A world of one averages nothing: its gradients are already the
    // average, and a bucket would only copy them into one buffer.
    auto ws = module->getAttrOfType<IntegerAttr>(comm::CommDialect::kWorldSize);
    if (done || (ws && ws.getInt() == 1))
      return;
    double cap = dp.getBucketCapMbOr(25), first = dp.getFirstBucketCapMbOr(1);
    bool initial = dp.getOrder() && dp.getOrder().getValue() == "ddp-initial";
    llvm::StringSet<> ignored;
    if (ArrayAttr ignore = dp.getIgnore())
      for (Attribute a : ignore)
        ignored.insert(cast<StringAttr>(a).getValue());
    int64_t limits[] = {bucketLimitBytes(first), bucketLimitBytes(cap)};

    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr(comm::CommDialect::kRanks) &&
          failed(bucketProgram(fn, limits, initial, ignored)))
        return signalPassFailure();
  }

  LogicalResult bucketProgram(func::FuncOp fn, ArrayRef<int64_t> limits,
                              bool initial, const llvm::StringSet<> &ignored) {
    // Parameters in registration order (the program's argument order).
    llvm::StringMap<uint32_t> paramIndex;
    std::vector<std::string> paramNames;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (auto id = fn.getArgAttrOfType<StringAttr>(i, comm::CommDialect::kParam)) {
        paramIndex[id.getValue()] = paramNames.size();
        paramNames.push_back(id.str());
      }
    Block &body = fn.getBody().front();
    Operation *ret = body.getTerminator();
    // Where each op stands: the production order of the gradients.
    llvm::DenseMap<Operation *, unsigned> position;
    unsigned pos = 0;
    for (Operation &op : body)
      position[&op] = ++pos;
    auto producedAt = [&](Value v) -> unsigned {
      Operation *def = v.getDefiningOp();
      return def ? position.lookup(body.findAncestorOpInBlock(*def)) : 0;
    };

    struct Grad {
      unsigned result;
      uint32_t param;
      unsigned produced;
    };
    std::vector<Grad> grads;
    llvm::DenseMap<uint32_t, unsigned> gradOfParam;
    for (unsigned i = 0; i < fn.getNumResults(); ++i) {
      auto of = fn.getResultAttrOfType<StringAttr>(i, comm::CommDialect::kGradOf);
      if (!of || ignored.contains(of.getValue()))
        continue;
      uint32_t p = paramIndex.lookup(of.getValue());
      if (!gradOfParam.try_emplace(p, i).second)
        return fn.emitError("two outputs are gradients of '")
               << of.getValue() << "': data-parallel training averages one";
      Value v = ret->getOperand(i);
      // An empty gradient is its own average: nothing to put in a bucket.
      if (cast<RankedTensorType>(v.getType()).getNumElements() == 0)
        continue;
      if (!isa<FloatType>(cast<RankedTensorType>(v.getType()).getElementType()))
        return fn.emitError("the gradient of '")
               << of.getValue() << "' is " << v.getType()
               << ": only floating-point gradients can be averaged";
      grads.push_back({i, p, producedAt(v)});
    }
    if (grads.empty())
      return success();

    // Fill order: registration order (first iteration) or production order.
    std::vector<Grad> fill = grads;
    llvm::stable_sort(fill, [&](const Grad &a, const Grad &b) {
      return initial ? a.param < b.param : a.produced < b.produced;
    });
    std::vector<BucketTensor> tensors;
    std::vector<unsigned> readyAt;
    for (const Grad &g : fill) {
      readyAt.push_back(g.produced);
      auto t = cast<RankedTensorType>(ret->getOperand(g.result).getType());
      tensors.push_back({g.param, comm::dtypeName(t.getElementType()),
                         t.getNumElements() *
                             int64_t(t.getElementType().getIntOrFloatBitWidth() / 8)});
    }
    std::vector<GradientBucket> buckets;
    std::vector<BucketPrediction> predicted;
    auto machine = fn->getParentOfType<ModuleOp>()->getAttrOfType<comm::MachineModelAttr>(
        comm::CommDialect::kMachine);
    if (machine && !initial) {
      // --bucket-cap-mb auto: the machine model chooses (BucketChoice.h).
      ModelChoice choice =
          chooseByMachine(fn, tensors, readyAt, machine, limits[0]);
      buckets = std::move(choice.buckets);
      predicted = std::move(choice.predicted);
      fn->getParentOfType<ModuleOp>()->setAttr(comm::CommDialect::kBucketChoice,
                                               choice.report);
    } else {
      buckets = assignBuckets(tensors, limits, /*sortByLowestIndex=*/initial);
      if (initial) // DDP reduces the first iteration's buckets in reverse
        std::reverse(buckets.begin(), buckets.end());
    }

    OpBuilder b(fn.getContext());
    auto seconds = [&](size_t k, double BucketPrediction::*field) {
      return k < predicted.size() ? b.getF64FloatAttr(predicted[k].*field)
                                  : FloatAttr();
    };
    Operation *previous = nullptr;
    for (auto [k, bucket] : llvm::enumerate(buckets)) {
      // The reduction starts right after the bucket's last gradient, and
      // after the previous bucket's (buckets are reduced in order).
      Operation *after = previous;
      SmallVector<Value> values;
      SmallVector<unsigned> results;
      for (uint32_t p : bucket.indices) {
        unsigned r = gradOfParam.lookup(p);
        Value v = ret->getOperand(r);
        values.push_back(v);
        results.push_back(r);
        if (Operation *def = v.getDefiningOp()) {
          def = body.findAncestorOpInBlock(*def);
          if (!after || after->isBeforeInBlock(def))
            after = def;
        }
      }
      if (after)
        b.setInsertionPointAfter(after);
      else
        b.setInsertionPointToStart(&body);
      Location loc = ret->getOperand(results.back()).getLoc();
      SmallVector<Value> flats;
      for (Value v : values)
        flats.push_back(flatten(b, loc, v));
      Value flat = flats.size() == 1
                       ? flats.front()
                       : Value(tensor::ConcatOp::create(b, loc, 0, flats));
      auto reduce = comm::AllReduceOp::create(
          b, loc, flat.getType(),
          comm::ReduceKindAttr::get(b.getContext(), comm::ReduceKind::mean),
          flat, b.getStringAttr("rankc.bucket." + std::to_string(k)));
      previous = reduce;
      SmallVector<Attribute> params;
      for (uint32_t p : bucket.indices)
        params.push_back(b.getStringAttr(paramNames[p]));
      reduce->setAttr(comm::CommDialect::kBucket,
                      comm::BucketAttr::get(b.getContext(), k,
                                            b.getArrayAttr(params), bucket.bytes,
                                            b.getStringAttr(bucket.dtype),
                                            seconds(k, &BucketPrediction::ready),
                                            seconds(k, &BucketPrediction::start),
                                            seconds(k, &BucketPrediction::reduce),
                                            seconds(k, &BucketPrediction::exposed)));
      // Views of the averaged buffer replace the gradients as results.
      int64_t offset = 0;
      for (auto [v, r] : llvm::zip(values, results)) {
        auto type = cast<RankedTensorType>(v.getType());
        int64_t n = type.getNumElements();
        Value part = tensor::ExtractSliceOp::create(
            b, loc, RankedTensorType::get({n}, type.getElementType()),
            reduce.getResult(), ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(n)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
        offset += n;
        ret->setOperand(r, unflatten(b, loc, part, type));
      }
    }
    return success();
  }
};

} // namespace
