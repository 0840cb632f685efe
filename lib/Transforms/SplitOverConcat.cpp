//===- SplitOverConcat.cpp - elementwise ops read concats' pieces in place ===//
//
// A halo exchange's update reads its neighbours' values through a concat:
// ext = concat(halo_lo, u, halo_hi), then u[i-1] and u[i+1] as slices of
// ext. Bufferized as it is, the concat copies the whole of u into a new
// buffer before the update reads it again: three passes over memory where
// one would do. This pass splits an elementwise linalg.generic that reads
// slices of a concat at the boundaries of the concat's pieces: each range
// of the iteration space reads every operand from the one piece it lies in
// (slices of u itself for the interior, of the halos at the edges), and
// writes into its slice of the result (extract_slice / insert_slice pairs,
// which one-shot bufferization makes in place). The concat, left without
// readers, is erased: the interior streams u once and writes once.
//
// Taken: generics on tensors of static shapes with parallel loops only,
// identity indexing maps and no linalg.index, whose concat reads (direct,
// or through extract_slice with unit strides and no rank reduction) are
// all along one axis. Anything else is left as it is.
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCSPLITOVERCONCAT
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// An input read from a concat: the concat and where the read starts in it.
struct ConcatRead {
  tensor::ConcatOp concat;
  SmallVector<int64_t> offsets;
};

/// `v` as a read of a concat of static shape, if it is one.
std::optional<ConcatRead> asConcatRead(Value v) {
  SmallVector<int64_t> offsets;
  if (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (!slice.hasUnitStride() ||
        slice.getSourceType().getRank() != slice.getType().getRank() ||
        ShapedType::isDynamicShape(slice.getStaticOffsets()))
      return std::nullopt;
    offsets.assign(slice.getStaticOffsets().begin(),
                   slice.getStaticOffsets().end());
    v = slice.getSource();
  }
  auto concat = v.getDefiningOp<tensor::ConcatOp>();
  if (!concat || !concat.getResultType().hasStaticShape())
    return std::nullopt;
  if (offsets.empty())
    offsets.assign(concat.getResultType().getRank(), 0);
  return ConcatRead{concat, offsets};
}

bool splittable(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumResults() != 1 ||
      op.getNumLoops() != op.getNumParallelLoops())
    return false;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isIdentity())
      return false;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!type || !type.hasStaticShape())
      return false;
  }
  return op.getBody()->getOps<linalg::IndexOp>().empty();
}

/// Splits `op` over the pieces of the concats it reads; true if it did.
bool split(OpBuilder &b, linalg::GenericOp op) {
  if (!splittable(op))
    return false;
  SmallVector<std::optional<ConcatRead>> reads;
  std::optional<int64_t> axis;
  for (Value input : op.getDpsInputs()) {
    reads.push_back(asConcatRead(input));
    if (!reads.back())
      continue;
    int64_t dim = reads.back()->concat.getDim();
    if (axis && *axis != dim)
      return false;
    axis = dim;
  }
  if (!axis)
    return false;
  SmallVector<int64_t> sizes = op.getStaticLoopRanges();
  int64_t extent = sizes[*axis];
  // The ranges: cut wherever a read crosses from one piece into the next.
  SmallVector<int64_t> cuts = {0, extent};
  for (auto &read : reads) {
    if (!read)
      continue;
    int64_t begin = 0, start = read->offsets[*axis];
    for (Value piece : read->concat.getInputs()) {
      begin += cast<RankedTensorType>(piece.getType()).getDimSize(*axis);
      if (begin - start > 0 && begin - start < extent)
        cuts.push_back(begin - start);
    }
  }
  llvm::sort(cuts);
  cuts.erase(llvm::unique(cuts), cuts.end());

  Location loc = op.getLoc();
  b.setInsertionPoint(op);
  auto folded = [&](ArrayRef<int64_t> v) {
    return getAsIndexOpFoldResult(b.getContext(), v);
  };
  auto slice = [&](Value source, ArrayRef<int64_t> offsets,
                   ArrayRef<int64_t> sizes) -> Value {
    if (cast<RankedTensorType>(source.getType()).getShape() == sizes &&
        llvm::all_of(offsets, [](int64_t o) { return o == 0; }))
      return source; // all of it
    SmallVector<int64_t> ones(sizes.size(), 1);
    return tensor::ExtractSliceOp::create(b, loc, source, folded(offsets),
                                          folded(sizes), folded(ones));
  };
  Value dest = op.getDpsInitOperand(0)->get();
  for (size_t c = 0; c + 1 < cuts.size(); ++c) {
    int64_t from = cuts[c], to = cuts[c + 1];
    SmallVector<int64_t> rangeSizes(sizes), rangeOffsets(sizes.size(), 0);
    rangeSizes[*axis] = to - from;
    rangeOffsets[*axis] = from;
    SmallVector<Value> inputs;
    for (auto [input, read] : llvm::zip(op.getDpsInputs(), reads)) {
      if (!read) {
        inputs.push_back(slice(input, rangeOffsets, rangeSizes));
        continue;
      }
      // The piece this range reads, and where in it.
      int64_t begin = 0, at = read->offsets[*axis] + from;
      for (Value piece : read->concat.getInputs()) {
        int64_t size =
            cast<RankedTensorType>(piece.getType()).getDimSize(*axis);
        if (at < begin + size) {
          SmallVector<int64_t> offsets(read->offsets);
          offsets[*axis] = at - begin;
          inputs.push_back(slice(piece, offsets, rangeSizes));
          break;
        }
        begin += size;
      }
    }
    Value out = slice(dest, rangeOffsets, rangeSizes);
    auto part = linalg::GenericOp::create(
        b, loc, TypeRange{out.getType()}, inputs, ValueRange{out},
        op.getIndexingMapsArray(), op.getIteratorTypesArray());
    IRMapping mapping;
    op.getRegion().cloneInto(&part.getRegion(), mapping);
    SmallVector<int64_t> ones(sizes.size(), 1);
    dest = tensor::InsertSliceOp::create(b, loc, part.getResult(0), dest,
                                         folded(rangeOffsets),
                                         folded(rangeSizes), folded(ones));
  }
  op.getResult(0).replaceAllUsesWith(dest);
  SmallVector<Operation *> readers;
  for (Value input : op.getDpsInputs())
    if (Operation *def = input.getDefiningOp())
      readers.push_back(def);
  op->erase();
  // Slices and concats left without readers go (bufferized, a dead concat
  // would still copy).
  for (Operation *def : readers) {
    if (!isa<tensor::ExtractSliceOp, tensor::ConcatOp>(def) ||
        !def->use_empty())
      continue;
    Operation *source = isa<tensor::ExtractSliceOp>(def)
                            ? def->getOperand(0).getDefiningOp()
                            : nullptr;
    def->erase();
    if (source && isa<tensor::ConcatOp>(source) && source->use_empty())
      source->erase();
  }
  return true;
}

struct SplitOverConcatPass
    : public rankc::impl::RankcSplitOverConcatBase<SplitOverConcatPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> candidates;
    getOperation().walk([&](linalg::GenericOp op) {
      candidates.push_back(op);
    });
    OpBuilder b(&getContext());
    for (linalg::GenericOp op : candidates)
      split(b, op);
  }
};

} // namespace
