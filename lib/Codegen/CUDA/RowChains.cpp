//===- RowChains.cpp - a row's reductions and their readers in one kernel -===//
//
// (What and why: RowChains.h.)
//
// Each op of a chain computes in the fused kernel exactly what its own
// kernel did: a reduction's lanes combine its row in the order
// WarpReductions uses (rowTotalOnLanes), an elementwise op's lane l writes
// elements l, l + lanes, ... of its row. Only where an op's values come
// from changes: a row total the chain computed is taken from the register
// that holds it, which is the value its reduction stores.
//
//===----------------------------------------------------------------------===//

#include "RowChains.h"

#include "BufferExtents.h"
#include "FillFolding.h"
#include "WarpReductions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <optional>

using namespace mlir;
using rankc::elementOffset;
using rankc::Extent;
using rankc::extentOf;
using rankc::mayOverlap;
using rankc::RowChain;
using rankc::RowChainOp;

namespace {

/// Rows past this many are not checked element by element (compile time):
/// such an op starts no chain and joins none.
constexpr int64_t kMaxRowsChecked = int64_t(1) << 22;

/// Rows on one axis of a chain's loop (RowChains.h's lowering).
constexpr int64_t kRowsOnOneAxis = 65536;

/// The product of `ranges` but `rowDim`'s.
int64_t rowsOf(ArrayRef<int64_t> ranges, unsigned rowDim) {
  int64_t rows = 1;
  for (auto [d, n] : llvm::enumerate(ranges))
    if (d != rowDim)
      rows *= n;
  return rows;
}

/// An op's loop indices at row `row` (its row index 0): the loops other
/// than `rowDim`, row-major.
SmallVector<int64_t> indicesAtRow(ArrayRef<int64_t> ranges, unsigned rowDim,
                                  int64_t row) {
  SmallVector<int64_t> idx(ranges.size(), 0);
  for (int d = int(ranges.size()) - 1; d >= 0; --d) {
    if (unsigned(d) == rowDim)
      continue;
    idx[d] = row % ranges[d];
    row /= ranges[d];
  }
  return idx;
}

/// `op` as a chain's op (rows: the chain's, or -1 for its first, which
/// must be a reduction), if it can be one.
std::optional<RowChainOp> asChainOp(linalg::GenericOp op, int64_t rows) {
  // (A body that reads or writes memory of its own, an embedding's gather,
  // has accesses that its operands do not show.)
  if (!op.hasPureBufferSemantics() ||
      llvm::any_of(op.getBody()->without_terminator(),
                   [](Operation &x) { return !isMemoryEffectFree(&x); }))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  RowChainOp c;
  c.op = op;
  if (rankc::warpReducible(op)) {
    SmallVector<unsigned> reduced;
    op.getReductionDims(reduced);
    c.kind = RowChainOp::Reduction;
    c.rowDim = reduced.front();
  } else {
    if (rows < 0 || op.getNumReductionLoops() != 0 ||
        llvm::any_of(op.getDpsInits(),
                     [](Value v) { return !isa<MemRefType>(v.getType()); }))
      return std::nullopt;
    if (rowsOf(ranges, op.getNumLoops()) == rows) {
      c.kind = RowChainOp::RowValue;
      c.rowDim = op.getNumLoops();
      return c;
    }
    c.kind = RowChainOp::Elementwise;
    c.rowDim = op.getNumLoops() - 1;
    AffineExpr along = getAffineDimExpr(c.rowDim, op.getContext());
    for (OpOperand &out : op.getDpsInitsMutable()) {
      AffineMap map = op.getMatchingIndexingMap(&out);
      if (map.getNumResults() == 0 || map.getResults().back() != along)
        return std::nullopt;
    }
  }
  int64_t own = rowsOf(ranges, c.rowDim);
  if (own > kMaxRowsChecked || !rankc::warpSized(own, ranges[c.rowDim]) ||
      (rows >= 0 && own != rows))
    return std::nullopt;
  return c;
}

/// An access whose element offset is `offset` + sum_d coef[d] * idx[d] at
/// loop indices idx (every result of its map a loop index or a constant):
/// evaluated row by row without building index vectors (GPT-2's attention
/// has 49152 rows, checked for each value a chain takes from a register).
struct LinearAccess {
  int64_t offset = 0;
  SmallVector<int64_t> coef;

  /// The offset at row `row` of an op with loop `ranges` along `rowDim`
  /// (indicesAtRow's indices).
  int64_t at(ArrayRef<int64_t> ranges, unsigned rowDim, int64_t row) const {
    int64_t element = offset;
    for (int d = int(ranges.size()) - 1; d >= 0; --d) {
      if (unsigned(d) == rowDim)
        continue;
      element += coef[d] * (row % ranges[d]);
      row /= ranges[d];
    }
    return element;
  }
};

std::optional<LinearAccess> linearAccess(MemRefType type, AffineMap map) {
  SmallVector<int64_t> strides;
  LinearAccess access;
  if (failed(type.getStridesAndOffset(strides, access.offset)) ||
      ShapedType::isDynamic(access.offset))
    return std::nullopt;
  access.coef.assign(map.getNumDims(), 0);
  for (auto [e, stride] : llvm::zip(map.getResults(), strides)) {
    if (ShapedType::isDynamic(stride))
      return std::nullopt;
    if (auto d = dyn_cast<AffineDimExpr>(e))
      access.coef[d.getPosition()] += stride;
    else if (auto c = dyn_cast<AffineConstantExpr>(e))
      access.offset += stride * c.getValue();
    else
      return std::nullopt;
  }
  return access;
}

/// Whether `a`'s operand `x` and `b`'s operand `y` are the same element of
/// the same buffer at each of the `rows` rows (neither along its row).
bool sameElementPerRow(const RowChainOp &a, OpOperand *x, const RowChainOp &b,
                       OpOperand *y, int64_t rows) {
  linalg::GenericOp opA = a.op, opB = b.op;
  auto typeA = dyn_cast<MemRefType>(x->get().getType());
  auto typeB = dyn_cast<MemRefType>(y->get().getType());
  if (!typeA || !typeB || typeA.getElementType() != typeB.getElementType() ||
      !extentOf(x->get()).sameBase(extentOf(y->get())))
    return false;
  AffineMap mapA = opA.getMatchingIndexingMap(x);
  AffineMap mapB = opB.getMatchingIndexingMap(y);
  if (mapA.getNumSymbols() || mapB.getNumSymbols() ||
      mapA.isFunctionOfDim(a.rowDim) || mapB.isFunctionOfDim(b.rowDim))
    return false;
  SmallVector<int64_t> rangesA = opA.getStaticLoopRanges();
  SmallVector<int64_t> rangesB = opB.getStaticLoopRanges();
  std::optional<LinearAccess> linearA = linearAccess(typeA, mapA);
  std::optional<LinearAccess> linearB = linearAccess(typeB, mapB);
  if (linearA && linearB) {
    for (int64_t row = 0; row < rows; ++row)
      if (linearA->at(rangesA, a.rowDim, row) !=
          linearB->at(rangesB, b.rowDim, row))
        return false;
    return true;
  }
  for (int64_t row = 0; row < rows; ++row) {
    std::optional<int64_t> at = elementOffset(
        typeA, mapA.compose(indicesAtRow(rangesA, a.rowDim, row)));
    std::optional<int64_t> other = elementOffset(
        typeB, mapB.compose(indicesAtRow(rangesB, b.rowDim, row)));
    if (!at || !other || *at != *other)
      return false;
  }
  return true;
}

/// Finds the chains of one block.
class ChainFinder {
public:
  ChainFinder(
      const llvm::DenseMap<Operation *, SmallVector<rankc::FoldableFill, 1>>
          &foldable,
      SmallVectorImpl<RowChain> &chains)
      : foldable(foldable), chains(chains) {
    for (auto &[reduction, folds] : foldable)
      for (const rankc::FoldableFill &fold : folds)
        folded.insert(fold.fill);
  }

  void run(Block &block) {
    for (Operation &op : block) {
      if (!chain.ops.empty()) {
        if (isMemoryEffectFree(&op))
          continue;
        if (isa<linalg::FillOp>(op) && folded.contains(&op)) {
          pendingFills.push_back(cast<linalg::FillOp>(op));
          between.push_back(cast<linalg::FillOp>(op));
          continue;
        }
        auto generic = dyn_cast<linalg::GenericOp>(op);
        if ((generic && join(generic)) || apart(&op))
          continue;
        finish();
      }
      if (auto generic = dyn_cast<linalg::GenericOp>(op))
        start(generic);
    }
    finish();
  }

private:
  linalg::FillOp fillOf(linalg::GenericOp op) {
    auto it = foldable.find(op);
    if (it == foldable.end() || it->second.size() != 1)
      return {};
    return it->second.front().fill;
  }

  void start(linalg::GenericOp op) {
    std::optional<RowChainOp> c = asChainOp(op, -1);
    if (!c || c->kind != RowChainOp::Reduction)
      return;
    c->fill = fillOf(op);
    chain.rows = rowsOf(op.getStaticLoopRanges(), c->rowDim);
    chain.ops.push_back(*c);
  }

  /// Whether `op` touches no buffer the chain's ops so far touch (nor one
  /// a fill it folds writes): the chain's ops may then run after it (a
  /// reshape's copy between attention's row sum and its quotient; the
  /// target index checks, whose bodies write the error record, between
  /// cross-entropy's sums and its pick of the target logit). Its effects
  /// and those of the ops in its regions must each name their buffer.
  bool apart(Operation *op) {
    SmallVector<MemoryEffects::EffectInstance> effects;
    WalkResult walk = op->walk([&](Operation *inner) {
      if (auto interface = dyn_cast<MemoryEffectOpInterface>(inner)) {
        interface.getEffects(effects);
        return WalkResult::advance();
      }
      // (An op whose effects are only those of its regions' ops: they are
      // walked.)
      return inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    });
    if (walk.wasInterrupted())
      return false;
    for (const MemoryEffects::EffectInstance &effect : effects) {
      Value v = effect.getValue();
      if (!v || !isa<MemRefType>(v.getType()))
        return false;
      Extent touched = extentOf(v);
      for (const RowChainOp &c : chain.ops) {
        linalg::GenericOp other = c.op;
        for (OpOperand &x : other->getOpOperands())
          if (isa<MemRefType>(x.get().getType()) &&
              mayOverlap(touched, extentOf(x.get())))
            return false;
      }
      for (linalg::FillOp fill : pendingFills)
        if (mayOverlap(touched, extentOf(fill.getOutputs()[0])))
          return false;
    }
    return true;
  }

  /// Whether `op` reads a buffer (the same bytes) that an op of the chain
  /// reads.
  bool readsWhatChainReads(linalg::GenericOp op) {
    for (OpOperand *in : op.getDpsInputOperands()) {
      if (!isa<MemRefType>(in->get().getType()))
        continue;
      Extent read = extentOf(in->get());
      for (const RowChainOp &c : chain.ops) {
        linalg::GenericOp other = c.op;
        for (OpOperand *x : other.getDpsInputOperands()) {
          Extent e = extentOf(x->get());
          if (isa<MemRefType>(x->get().getType()) && read.root == e.root &&
              read.begin == e.begin && read.end == e.end)
            return true;
        }
      }
    }
    return false;
  }

  bool join(linalg::GenericOp op) {
    std::optional<RowChainOp> c = asChainOp(op, chain.rows);
    if (!c)
      return false;
    // Nothing it writes may be touched by the chain's other ops (a value
    // they take from a register is not read from memory), but for a value
    // per row written where another was, at each row.
    for (OpOperand &out : op.getDpsInitsMutable()) {
      Extent written = extentOf(out.get());
      for (const RowChainOp &p : chain.ops) {
        linalg::GenericOp other = p.op;
        for (OpOperand &x : other->getOpOperands())
          if (isa<MemRefType>(x.get().getType()) &&
              !p.forwarded.count(x.getOperandNumber()) &&
              mayOverlap(written, extentOf(x.get())) &&
              !(c->perRow() && p.perRow() && other.isDpsInit(&x) &&
                sameElementPerRow(*c, &out, p, &x, chain.rows)))
            return false;
      }
    }
    // What it reads of their outputs must be values per row, the last one
    // written to that element taken from its register; nothing a fill
    // before it and not yet folded writes.
    for (OpOperand *in : op.getDpsInputOperands()) {
      if (!isa<MemRefType>(in->get().getType()))
        continue;
      Extent read = extentOf(in->get());
      for (linalg::FillOp fill : pendingFills)
        if (mayOverlap(read, extentOf(fill.getOutputs()[0])))
          return false;
      std::optional<std::pair<unsigned, unsigned>> from;
      for (auto [i, p] : llvm::enumerate(chain.ops)) {
        linalg::GenericOp writer = p.op;
        for (auto [o, out] : llvm::enumerate(writer.getDpsInitsMutable()))
          if (mayOverlap(read, extentOf(out.get()))) {
            if (!p.perRow() || !sameElementPerRow(*c, in, p, &out, chain.rows))
              return false;
            from = {unsigned(i), unsigned(o)};
          }
      }
      if (from)
        c->forwarded[in->getOperandNumber()] = *from;
    }
    // Nothing of the chain's read: no reason to join it, but for a
    // reduction that reads a buffer an op of the chain reads (its rows then
    // come from the cache: layer norm's backward sums two products of the
    // same gradient's rows, which the gradient of its input then reads).
    if (c->forwarded.empty() &&
        !(c->kind == RowChainOp::Reduction && readsWhatChainReads(op)))
      return false;
    if (c->kind == RowChainOp::Reduction) {
      c->fill = fillOf(op);
      llvm::erase(pendingFills, c->fill);
    }
    chain.ops.push_back(*c);
    return true;
  }

  /// Keeps the chain (cut before a fill between its ops that none of its
  /// ops folds: the fused kernel would move past it; cutting an op off
  /// unfolds its fill) if two ops or more are left.
  void finish() {
    for (bool cut = true; cut;) {
      cut = false;
      for (linalg::FillOp fill : between) {
        if (llvm::any_of(chain.ops,
                         [&](const RowChainOp &c) { return c.fill == fill; }))
          continue;
        while (!chain.ops.empty() &&
               fill->isBeforeInBlock(chain.ops.back().op)) {
          chain.ops.pop_back();
          cut = true;
        }
      }
    }
    if (chain.ops.size() >= 2)
      chains.push_back(std::move(chain));
    chain = RowChain();
    pendingFills.clear();
    between.clear();
  }

  const llvm::DenseMap<Operation *, SmallVector<rankc::FoldableFill, 1>>
      &foldable;
  llvm::SmallPtrSet<Operation *, 16> folded;
  SmallVectorImpl<RowChain> &chains;
  RowChain chain;
  /// Fills met since the chain began: not yet folded, and all.
  SmallVector<linalg::FillOp> pendingFills, between;
};

} // namespace

SmallVector<RowChain> rankc::findRowChains(func::FuncOp fn) {
  auto foldable = findFoldableFills(fn);
  SmallVector<RowChain> chains;
  ChainFinder finder(foldable, chains);
  fn.walk([&](Block *block) { finder.run(*block); });
  return chains;
}

void rankc::lowerRowChain(RewriterBase &rewriter, const RowChain &chain,
                          int64_t lanes) {
  OpBuilder::InsertionGuard guard(rewriter);
  linalg::GenericOp last = chain.ops.back().op;
  Location loc = last.getLoc();
  rewriter.setInsertionPoint(last);
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  // Rows, then the lanes. More than kRowsOnOneAxis rows are two loops
  // (rows / kRowsOnOneAxis, kRowsOnOneAxis): on one, a block of 8 rows per
  // y index would pass the grid's 65535 (GPT-2's attention at batch 64:
  // 786432 rows); the last rows past the end are skipped, a whole warp at
  // a time.
  int64_t inner = std::min(chain.rows, kRowsOnOneAxis);
  int64_t outer = llvm::divideCeil(chain.rows, inner);
  SmallVector<int64_t> trips = {inner, lanes};
  if (outer > 1)
    trips.insert(trips.begin(), outer);
  SmallVector<Value> lbs, ubs, steps;
  for (int64_t n : trips) {
    lbs.push_back(index(rewriter, 0));
    ubs.push_back(index(rewriter, n));
    steps.push_back(index(rewriter, 1));
  }
  auto par = scf::ParallelOp::create(rewriter, loc, lbs, ubs, steps);
  rewriter.setInsertionPoint(par.getBody()->getTerminator());
  ValueRange ivs = par.getInductionVars();
  Value lane = ivs.back(), row = ivs[ivs.size() - 2];
  if (outer > 1) {
    row = arith::AddIOp::create(
        rewriter, loc,
        arith::MulIOp::create(rewriter, loc, ivs[0], index(rewriter, inner)),
        row);
    if (chain.rows % inner != 0) {
      Value inside = arith::CmpIOp::create(rewriter, loc,
                                           arith::CmpIPredicate::ult, row,
                                           index(rewriter, chain.rows));
      auto guard = scf::IfOp::create(rewriter, loc, TypeRange{}, inside,
                                     /*withElseRegion=*/false);
      rewriter.setInsertionPoint(guard.thenBlock()->getTerminator());
    }
  }

  // Each op's values per row, as its lanes hold them.
  SmallVector<SmallVector<Value, 1>> totals(chain.ops.size());
  for (unsigned n = 0, e = chain.ops.size(); n < e; ++n) {
    const RowChainOp &c = chain.ops[n];
    linalg::GenericOp op = c.op;
    linalg::FillOp fill = c.fill;
    Location at = op.getLoc();
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    // This op's loop indices at the row: its other loops, row-major.
    SmallVector<Value> idx(op.getNumLoops());
    Value rest = row;
    for (int d = int(ranges.size()) - 1; d >= 0; --d) {
      if (unsigned(d) == c.rowDim)
        continue;
      if (ranges[d] == 1) {
        idx[d] = index(rewriter, 0);
        continue;
      }
      Value range = index(rewriter, ranges[d]);
      idx[d] = arith::RemUIOp::create(rewriter, at, rest, range);
      rest = arith::DivUIOp::create(rewriter, at, rest, range);
    }
    Block *body = op.getBody();
    // Values the chain holds from its registers; the others loaded.
    auto inputs = [&](OpBuilder &b, ArrayRef<Value> i, IRMapping &m) {
      for (auto [operand, from] : c.forwarded)
        m.map(body->getArgument(operand), totals[from.first][from.second]);
      rankc::loadInputsAt(b, at, op, i, m);
    };
    // The outputs' current values, where the body reads them.
    auto outputs = [&](OpBuilder &b, Location l, ArrayRef<Value> i,
                       IRMapping &m) {
      for (OpOperand &out : op.getDpsInitsMutable()) {
        BlockArgument arg = op.getMatchingBlockArgument(&out);
        if (!arg.use_empty())
          m.map(arg, memref::LoadOp::create(
                         b, l, out.get(),
                         rankc::indicesAt(b, l, op.getMatchingIndexingMap(&out),
                                          i)));
      }
    };
    // Lane 0 stores the values per row.
    auto storeFromLead = [&](ArrayRef<Value> i) {
      Value lead = arith::CmpIOp::create(rewriter, at, arith::CmpIPredicate::eq,
                                         lane, index(rewriter, 0));
      scf::IfOp::create(rewriter, at, lead, [&](OpBuilder &b, Location l) {
        for (auto [out, v] : llvm::zip(op.getDpsInitsMutable(), totals[n]))
          memref::StoreOp::create(
              b, l, v, out.get(),
              rankc::indicesAt(b, l, op.getMatchingIndexingMap(&out), i));
        scf::YieldOp::create(b, l);
      });
    };

    if (c.kind == RowChainOp::Reduction) {
      Value acc =
          rankc::rowTotalOnLanes(rewriter, at, op, idx, lane, lanes, inputs);
      OpOperand *init = op.getDpsInitOperand(0);
      SmallVector<Value> outIdx(idx);
      outIdx[c.rowDim] =
          index(rewriter, 0); // (the output's map does not read it)
      Value from =
          fill ? fill.getInputs()[0]
               : memref::LoadOp::create(
                     rewriter, at, init->get(),
                     rankc::indicesAt(rewriter, at,
                                      op.getMatchingIndexingMap(init), outIdx))
                     .getResult();
      totals[n].push_back(rankc::combineWith(rewriter, op, from, acc));
      storeFromLead(outIdx);
      continue;
    }

    if (c.kind == RowChainOp::RowValue) {
      // Every lane computes it (they all read it next).
      IRMapping m;
      inputs(rewriter, idx, m);
      outputs(rewriter, at, idx, m);
      totals[n] = rankc::cloneBodyAt(rewriter, op, idx, m);
      storeFromLead(idx);
      continue;
    }

    // Elementwise: lane l writes elements l, l + lanes, ... of the row.
    int64_t length = ranges[c.rowDim];
    auto element = [&](OpBuilder &b, Location l, Value k) {
      SmallVector<Value> i(idx);
      i[c.rowDim] = k;
      IRMapping m;
      inputs(b, i, m);
      outputs(b, l, i, m);
      SmallVector<Value> yielded = rankc::cloneBodyAt(b, op, i, m);
      for (auto [out, v] : llvm::zip(op.getDpsInitsMutable(), yielded))
        memref::StoreOp::create(
            b, l, v, out.get(),
            rankc::indicesAt(b, l, op.getMatchingIndexingMap(&out), i));
    };
    scf::ForOp::create(
        rewriter, at, index(rewriter, 0),
        index(rewriter, llvm::divideCeil(length, lanes)), index(rewriter, 1),
        ValueRange{}, [&](OpBuilder &b, Location l, Value j, ValueRange) {
          Value k = arith::AddIOp::create(
              b, l, arith::MulIOp::create(b, l, j, index(b, lanes)), lane);
          if (length % lanes == 0) {
            element(b, l, k);
          } else {
            Value inside = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ult, k, index(b, length));
            scf::IfOp::create(b, l, inside, [&](OpBuilder &b, Location l) {
              element(b, l, k);
              scf::YieldOp::create(b, l);
            });
          }
          scf::YieldOp::create(b, l);
        });
  }

  for (RowChainOp c : chain.ops) {
    rewriter.eraseOp(c.op);
    if (c.fill)
      rewriter.eraseOp(c.fill);
  }
}
