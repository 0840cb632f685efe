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

/// Adds the memory effects of `root` and of the ops in its regions to
/// `effects`; false if one of them does not say what it does (an op with
/// neither the interface nor recursive effects). An index check's
/// memref.generic_atomic_rmw, which says nothing, reads and writes its
/// buffer.
bool collectEffects(Operation *root,
                    SmallVectorImpl<MemoryEffects::EffectInstance> &effects) {
  WalkResult walk = root->walk([&](Operation *inner) {
    if (auto rmw = dyn_cast<memref::GenericAtomicRMWOp>(inner)) {
      OpOperand *buffer = &rmw.getMemrefMutable();
      effects.emplace_back(MemoryEffects::Read::get(), buffer);
      effects.emplace_back(MemoryEffects::Write::get(), buffer);
      return WalkResult::advance();
    }
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
  return !walk.wasInterrupted();
}

/// The buffers `op`'s body reads and writes through its own ops (see
/// RowChainOp::bodyAccesses), or none if an access is not a read or a
/// write of a buffer from outside the op.
std::optional<SmallVector<std::pair<Value, bool>, 2>>
bodyAccessesOf(linalg::GenericOp op) {
  SmallVector<MemoryEffects::EffectInstance> effects;
  for (Operation &x : op.getBody()->without_terminator())
    if (!collectEffects(&x, effects))
      return std::nullopt;
  SmallVector<std::pair<Value, bool>, 2> accesses;
  for (const MemoryEffects::EffectInstance &effect : effects) {
    Value v = effect.getValue();
    bool write = isa<MemoryEffects::Write>(effect.getEffect());
    if (!v || !isa<MemRefType>(v.getType()) ||
        op->isAncestor(v.getParentRegion()->getParentOp()) ||
        !(write || isa<MemoryEffects::Read>(effect.getEffect())))
      return std::nullopt;
    accesses.emplace_back(v, write);
  }
  return accesses;
}

/// `op` as a chain's op (rows: the chain's, or -1 for its first, which
/// must be a reduction), if it can be one.
std::optional<RowChainOp> asChainOp(linalg::GenericOp op, int64_t rows) {
  std::optional<SmallVector<std::pair<Value, bool>, 2>> accesses =
      bodyAccessesOf(op);
  if (!op.hasPureBufferSemantics() || !accesses)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  RowChainOp c;
  c.op = op;
  c.bodyAccesses = std::move(*accesses);
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
      if (llvm::any_of(c.bodyAccesses, [](auto &a) { return a.second; }))
        return std::nullopt;
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

/// The buffers `c` touches, each with whether it writes it: its memref
/// operands (its outputs written) and its body's own accesses.
SmallVector<std::pair<Value, bool>> touchedBy(const RowChainOp &c) {
  SmallVector<std::pair<Value, bool>> touched(c.bodyAccesses.begin(),
                                              c.bodyAccesses.end());
  linalg::GenericOp op = c.op;
  for (OpOperand &x : op->getOpOperands())
    if (isa<MemRefType>(x.get().getType()))
      touched.emplace_back(x.get(), op.isDpsInit(&x));
  return touched;
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
    if (!collectEffects(op, effects))
      return false;
    for (const MemoryEffects::EffectInstance &effect : effects) {
      Value v = effect.getValue();
      if (!v || !isa<MemRefType>(v.getType()))
        return false;
      Extent touched = extentOf(v);
      for (const RowChainOp &c : chain.ops)
        for (auto [u, written] : touchedBy(c))
          if (mayOverlap(touched, extentOf(u)))
            return false;
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

  /// Whether what `c`'s body reads and writes of its own (its
  /// bodyAccesses) and what the chain's ops touch stay apart, and what
  /// their bodies touch and `c` touches: neither writes what the other
  /// touches (their order changes in the chain).
  bool bodyAccessesApart(const RowChainOp &c) {
    auto clash = [](ArrayRef<std::pair<Value, bool>> as,
                    ArrayRef<std::pair<Value, bool>> bs) {
      for (auto [a, aWrites] : as)
        for (auto [b, bWrites] : bs)
          if ((aWrites || bWrites) && mayOverlap(extentOf(a), extentOf(b)))
            return true;
      return false;
    };
    SmallVector<std::pair<Value, bool>> byC = touchedBy(c);
    for (const RowChainOp &p : chain.ops)
      if (clash(c.bodyAccesses, touchedBy(p)) || clash(p.bodyAccesses, byC))
        return false;
    for (linalg::FillOp fill : pendingFills)
      for (auto [v, writes] : c.bodyAccesses)
        if (mayOverlap(extentOf(v), extentOf(fill.getOutputs()[0])))
          return false;
    return true;
  }

  bool join(linalg::GenericOp op) {
    std::optional<RowChainOp> c = asChainOp(op, chain.rows);
    if (!c || !bodyAccessesApart(*c))
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
