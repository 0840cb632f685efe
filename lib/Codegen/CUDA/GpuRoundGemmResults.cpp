//===- GpuRoundGemmResults.cpp - bf16 GEMMs that write bf16 ---------------===//
//
// Under autocast a matmul's result is bf16: dag-format.md v3 writes it as
// an f32 contraction whose readers round it (`arith.truncf` to bf16), and
// after fusion that rounding sits in the body of every op that reads it.
// cuBLASLt then writes 4 bytes per element, and each reader reads 4, of a
// value that has 2: a GPT step's 117 bf16 GEMMs write 870 MB of f32.
//
// Here a GEMM marked by rankc-gpu-narrow-contractions (bf16 A and B), which
// starts from zeros and whose every reader (through reshapes) only rounds
// it to that type, gets its rounding as one generic of its own right after
// it, marked `rankc.gemm_result`, and the readers read the rounded tensor.
// rankc-gpu-library-calls folds that generic into the GEMM's call
// (RANKC_GEMM_NARROW_C: cuBLASLt rounds its f32 accumulator to the output
// type as it writes, to nearest even as arith.truncf does); where it cannot,
// the generic runs as a kernel and the values are the same.
//
// An autocast linear layer's readers round the sum of the result and a
// bf16 bias per column (the exporter writes addmm as PyTorch computes it:
// the bias added to the f32 sum, one rounding). The rounding generic then
// adds the bias first, and the call becomes cuBLASLt's bias epilogue; the
// biases (f32 parameters rounded in the readers' bodies) are computed once
// each, those of one shape by one generic at the step's start.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"
#include "rankc/Transforms/GemmMatch.h"

#include "NarrowOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

#include "llvm/ADT/MapVector.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUROUNDGEMMRESULTS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Whether `init` is a tensor filled with zeros, possibly reshaped (the
/// GEMM does not add to earlier values: beta = 0).
bool zeros(Value init) {
  while (isa_and_nonnull<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
      init.getDefiningOp()))
    init = init.getDefiningOp()->getOperand(0);
  auto fill = init.getDefiningOp<linalg::FillOp>();
  return fill && (matchPattern(fill.getInputs()[0], m_AnyZeroFloat()) ||
                  matchPattern(fill.getInputs()[0], m_Zero()));
}

/// How a reader's block argument `arg`, the GEMM's result, is used: every
/// use rounds it to `narrow` (no bias), or every use rounds its sum with
/// one narrow value per column, `truncf(extf(b) + arg)`: an autocast
/// linear layer (PyTorch adds the bf16 bias to the f32 sum and rounds
/// once). b is computed in the reader's body (`slice`, possibly nothing)
/// from inputs it reads through one map, the bias's (a parameter rounded
/// to bf16, as the exporter writes it, or bf16 already).
struct Use {
  Value bias;                      // null: no bias
  SmallVector<Operation *> slice;  // in block order
  SmallVector<OpOperand *> inputs; // the reader's inputs `slice` reads
  AffineMap map;                   // theirs: the reader's loops to the bias
};

/// Whether `v` is `truncf` of something to `narrow`, as arith.truncf rounds
/// by default (to nearest even).
arith::TruncFOp roundingTo(Value v, Type narrow) {
  auto trunc = v.getDefiningOp<arith::TruncFOp>();
  return trunc && trunc.getType() == narrow && !trunc.getRoundingmodeAttr()
             ? trunc
             : nullptr;
}

/// Fills `use` with how `reader` computes `bias` if from inputs other than
/// `arg`, all read through one projected permutation, by ops without
/// effects or regions (constants from outside allowed).
bool sliceOf(linalg::GenericOp reader, Value bias, BlockArgument arg,
             Use &use) {
  Block *body = reader.getBody();
  SmallVector<Value> work = {bias};
  llvm::SmallPtrSet<Operation *, 8> ops;
  llvm::SmallPtrSet<OpOperand *, 4> inputs;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (auto b = dyn_cast<BlockArgument>(v)) {
      if (b.getOwner() != body || b == arg)
        return false;
      OpOperand *in = reader.getMatchingOpOperand(b);
      AffineMap map = reader.getMatchingIndexingMap(in);
      if (!reader.isDpsInput(in) || (use.map && map != use.map))
        return false;
      use.map = map;
      if (inputs.insert(in).second)
        use.inputs.push_back(in);
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (def->getBlock() != body) {
      if (!matchPattern(v, m_Constant()))
        return false;
      continue;
    }
    if (def->getNumRegions() || !isMemoryEffectFree(def) ||
        isa<linalg::IndexOp>(def))
      return false;
    if (ops.insert(def).second)
      llvm::append_range(work, def->getOperands());
  }
  if (!use.map || use.map.getNumResults() == 0 ||
      !use.map.isProjectedPermutation())
    return false;
  for (Operation &op : *body)
    if (ops.contains(&op))
      use.slice.push_back(&op);
  use.bias = bias;
  return true;
}

std::optional<Use> useOf(linalg::GenericOp reader, BlockArgument arg,
                         Type narrow) {
  auto onlyRounded = [&](Value v) {
    return !v.use_empty() && llvm::all_of(v.getUsers(), [&](Operation *u) {
      return u->getNumResults() == 1 && roundingTo(u->getResult(0), narrow);
    });
  };
  if (onlyRounded(arg))
    return Use();
  Use use;
  for (Operation *user : arg.getUsers()) {
    auto add = dyn_cast<arith::AddFOp>(user);
    if (!add || !onlyRounded(add.getResult()))
      return std::nullopt;
    auto ext = (add.getLhs() == arg ? add.getRhs() : add.getLhs())
                   .getDefiningOp<arith::ExtFOp>();
    if (!ext || ext.getIn().getType() != narrow)
      return std::nullopt;
    if (use.bias ? ext.getIn() != use.bias
                 : !sliceOf(reader, ext.getIn(), arg, use))
      return std::nullopt;
  }
  return use;
}

/// The map from the GEMM's result dimensions to the bias's that `use` (a
/// reader of the result itself, through a permutation) reads, if it reads
/// the bias of each result element's column: the result's trailing
/// dimensions, exactly its N ones (a row-major bias vector per column, as
/// cuBLASLt's bias epilogue adds it).
std::optional<AffineMap> biasMap(linalg::LinalgOp gemm, OpOperand *use,
                                 AffineMap bias) {
  auto reader = cast<linalg::GenericOp>(use->getOwner());
  AffineMap c = reader.getMatchingIndexingMap(use);
  if (!c.isPermutation())
    return std::nullopt;
  AffineMap map = bias.compose(inversePermutation(c));
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(gemm);
  AffineMap out = gemm.getIndexingMapMatchingResult(gemm->getResult(0));
  unsigned rank = out.getNumResults(), n = map.getNumResults();
  if (failed(dims) || n == 0 || dims->n.size() != n ||
      map != AffineMap::getMultiDimIdentityMap(rank, gemm.getContext())
                 .getSliceMap(rank - n, n))
    return std::nullopt;
  for (unsigned loop : dims->n) {
    std::optional<unsigned> pos =
        out.getResultPosition(getAffineDimExpr(loop, gemm.getContext()));
    if (!pos || *pos < rank - n)
      return std::nullopt;
  }
  return map;
}

/// A GEMM whose result is to be rounded once: its readers (through
/// `reshapes`), and the bias they add first, if any (`bias.bias`).
struct Rounding {
  linalg::LinalgOp gemm;
  Type narrow;
  SmallVector<OpOperand *> readers;
  SmallVector<Operation *> reshapes;
  Use bias;
  AffineMap biasMap; // from the result's dimensions to the bias's
};

/// The rounding of `gemm`'s result, if every reader rounds it the same
/// way. A bias computed in a reader's body is taken from one reader only.
std::optional<Rounding> roundingOf(linalg::LinalgOp gemm, Type narrow,
                                   DominanceInfo &dom) {
  Rounding r{gemm, narrow};
  Value result = gemm->getResult(0);
  SmallVector<Use> uses;
  auto accepts = [&](OpOperand &use) {
    auto g = cast<linalg::GenericOp>(use.getOwner());
    std::optional<Use> u = useOf(g, g.getMatchingBlockArgument(&use), narrow);
    if (u)
      uses.push_back(std::move(*u));
    return u.has_value();
  };
  if (result.use_empty() ||
      !rankc::readersThroughReshapes(result, accepts, r.readers, r.reshapes))
    return std::nullopt;
  bool biased = llvm::any_of(uses, [](const Use &u) { return u.bias; });
  if (!biased)
    return r;
  // One bias for every reader, read of the result itself.
  if (!r.reshapes.empty() ||
      (uses.size() > 1 && !llvm::all_of(uses, [&](const Use &u) {
         return u.bias && u.slice.empty() &&
                u.inputs[0]->get() == uses[0].inputs[0]->get();
       })))
    return std::nullopt;
  for (auto [reader, use] : llvm::zip(r.readers, uses)) {
    std::optional<AffineMap> m = biasMap(gemm, reader, use.map);
    if (!m || (r.biasMap && *m != r.biasMap))
      return std::nullopt;
    r.biasMap = *m;
  }
  for (OpOperand *in : uses[0].inputs)
    if (!dom.properlyDominates(in->get(), gemm))
      return std::nullopt;
  r.bias = std::move(uses[0]);
  return r;
}

/// The bias tensors of `roundings`: an input itself, or what the reader's
/// slice computes from its inputs, built as one generic over the bias's
/// dimensions. Those that read only arguments of `func` (a layer's
/// parameters, ready when the step starts, rounded to bf16) are built by
/// one generic per shape at its start (one kernel, not one a bias);
/// others right before their GEMM.
SmallVector<Value> biasTensors(func::FuncOp func,
                               ArrayRef<Rounding> roundings) {
  SmallVector<Value> biases(roundings.size());
  Block *entry = &func.getBody().front();
  // Biases of one shape and narrow type, by position in `roundings`.
  llvm::MapVector<std::pair<ArrayRef<int64_t>, Type>, SmallVector<size_t>>
      atStart;
  SmallVector<std::pair<OpBuilder::InsertPoint, SmallVector<size_t>>> groups;
  for (auto [i, r] : llvm::enumerate(roundings)) {
    const Use &u = r.bias;
    if (!u.bias)
      continue;
    if (u.slice.empty()) { // a narrow input
      biases[i] = u.inputs[0]->get();
      continue;
    }
    auto shape = cast<RankedTensorType>(u.inputs[0]->get().getType());
    bool arguments = llvm::all_of(u.inputs, [&](OpOperand *in) {
      auto arg = dyn_cast<BlockArgument>(in->get());
      return arg && arg.getOwner() == entry;
    });
    if (arguments)
      atStart[{shape.getShape(), r.narrow}].push_back(i);
    else
      groups.push_back(
          {OpBuilder::InsertPoint(r.gemm->getBlock(), r.gemm->getIterator()),
           {i}});
  }
  for (auto &[key, members] : atStart)
    groups.push_back({OpBuilder::InsertPoint(entry, entry->begin()), members});
  OpBuilder b(func.getContext());
  for (auto &group : groups) {
    // (Named, not bound: the builder's callback below uses it.)
    ArrayRef<size_t> members = group.second;
    b.restoreInsertionPoint(group.first);
    const Use &first = roundings[members[0]].bias;
    auto shape =
        cast<RankedTensorType>(first.inputs[0]->get().getType()).getShape();
    SmallVector<Value> inputs, inits;
    for (size_t i : members) {
      for (OpOperand *in : roundings[i].bias.inputs)
        inputs.push_back(in->get());
      inits.push_back(tensor::EmptyOp::create(b, func.getLoc(), shape,
                                              roundings[i].narrow));
    }
    SmallVector<AffineMap> maps(inputs.size() + inits.size(),
                                b.getMultiDimIdentityMap(shape.size()));
    auto generic = linalg::GenericOp::create(
        b, func.getLoc(), ValueRange(inits).getTypes(), inputs, inits, maps,
        SmallVector<utils::IteratorType>(shape.size(),
                                         utils::IteratorType::parallel),
        [&](OpBuilder &nb, Location, ValueRange args) {
          // Each bias's slice, its inputs' block arguments mapped.
          SmallVector<Value> yields;
          size_t next = 0;
          for (size_t i : members) {
            const Use &u = roundings[i].bias;
            IRMapping mapping;
            auto reader = cast<linalg::GenericOp>(u.inputs[0]->getOwner());
            for (OpOperand *in : u.inputs)
              mapping.map(reader.getMatchingBlockArgument(in), args[next++]);
            for (Operation *op : u.slice) {
              // (Constants from outside the reader: cloned too, since they
              // need not come before the function's start.)
              for (Value v : op->getOperands())
                if (Operation *c = v.getDefiningOp();
                    c && c->getBlock() != reader.getBody() &&
                    !mapping.contains(v))
                  nb.clone(*c, mapping);
              nb.clone(*op, mapping);
            }
            yields.push_back(mapping.lookup(u.bias));
          }
          linalg::YieldOp::create(nb, func.getLoc(), yields);
        });
    for (auto [i, v] : llvm::zip(members, generic.getResults()))
      biases[i] = v;
  }
  return biases;
}

/// Rounds `r.gemm`'s result once, right after it, reading the narrow bias
/// `bias` if it has one; the readers read the rounded result.
void round(const Rounding &r, Value bias) {
  linalg::LinalgOp gemm = r.gemm;
  Type narrow = r.narrow;
  Value result = gemm->getResult(0);
  OpBuilder b(gemm->getContext());
  // Its buffer starts with zeros before the GEMM: the first write that
  // rankc-plan-buffers sees is then before the GEMM, so the buffer never
  // shares bytes with A or B, which the GEMM reads while it writes the
  // rounded result in its place (rankc-gpu-library-calls erases the fill).
  Location loc = gemm.getLoc();
  auto type = cast<RankedTensorType>(result.getType());
  b.setInsertionPoint(gemm);
  Value empty = tensor::EmptyOp::create(b, loc, type.getShape(), narrow);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(narrow));
  Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  SmallVector<Value> inputs = {result};
  SmallVector<AffineMap> maps = {id};
  // With a bias, the generic is cuBLASLt's bias epilogue.
  if (bias) {
    inputs.push_back(bias);
    maps.push_back(r.biasMap);
  }
  maps.push_back(id);
  b.setInsertionPointAfter(gemm);
  auto rounding = linalg::GenericOp::create(
      b, loc, init.getType(), inputs, ValueRange{init}, maps,
      SmallVector<utils::IteratorType>(type.getRank(),
                                       utils::IteratorType::parallel),
      [&](OpBuilder &nb, Location l, ValueRange args) {
        Value sum = args[0];
        if (bias) {
          Value wide = arith::ExtFOp::create(nb, l, sum.getType(), args[1]);
          sum = arith::AddFOp::create(nb, l, wide, sum);
        }
        Value t = arith::TruncFOp::create(nb, l, narrow, sum);
        linalg::YieldOp::create(nb, l, t);
      });
  rounding->setAttr(rankc::kGemmResult, b.getUnitAttr());
  result.replaceAllUsesExcept(rounding.getResult(0), rounding);
  rankc::narrowReshapes(r.reshapes, narrow);
  // Each reader reads the rounded value where it rounded (the rounded sum,
  // with a bias; its widened bias is left to canonicalization).
  for (OpOperand *use : r.readers) {
    auto reader = cast<linalg::GenericOp>(use->getOwner());
    BlockArgument arg = reader.getMatchingBlockArgument(use);
    SmallVector<Operation *> users(arg.getUsers().begin(),
                                   arg.getUsers().end());
    arg.setType(narrow);
    for (Operation *user : users) {
      SmallVector<Operation *> truncs = {user};
      if (bias)
        truncs.assign(user->getUsers().begin(), user->getUsers().end());
      for (Operation *t : truncs) {
        t->getResult(0).replaceAllUsesWith(arg);
        t->erase();
      }
      if (bias)
        user->erase(); // the sum
    }
  }
}

struct GpuRoundGemmResults
    : rankc::impl::RankcGpuRoundGemmResultsBase<GpuRoundGemmResults> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    DominanceInfo dom(func);
    std::vector<Rounding> roundings;
    func.walk([&](linalg::LinalgOp op) {
      auto narrow = op->getAttrOfType<TypeAttr>(rankc::kNarrowOperands);
      if (!narrow || !op.hasPureTensorSemantics() ||
          op->getNumResults() != 1 ||
          failed(rankc::asGemm(op, /*anyLayout=*/false,
                               /*narrowInputs=*/true)) ||
          !zeros(op.getDpsInitOperand(0)->get()))
        return;
      // Only once cuBLASLt reads A and B narrow (the widening in the body).
      for (OpOperand *in : op.getDpsInputOperands())
        if (getElementTypeOrSelf(in->get().getType()) != narrow.getValue())
          return;
      if (std::optional<Rounding> r = roundingOf(op, narrow.getValue(), dom))
        roundings.push_back(std::move(*r));
    });
    if (roundings.empty())
      return;
    SmallVector<Value> biases = biasTensors(func, roundings);
    for (auto [r, bias] : llvm::zip(roundings, biases))
      round(r, bias);
    // A reader that only rounded the result is now a copy of the rounding.
    if (failed(rankc::eraseIdentityCopies(func)))
      signalPassFailure();
  }
};

} // namespace
