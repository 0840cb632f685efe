//===- RowChains.h - a row's reductions and their readers in one kernel ---===//
//
// Softmax is three passes over each row of the scores: the row's max, the
// sum of exp(x - max), then exp(x - max) / sum written out; its backward
// two (the row sum of dP * P, then dS). As kernels of their own, each pass
// reads the whole [B, H, T, T] tensor from memory: GPT-2 small's is 100 MB
// in bf16, read five times a layer by these kernels alone. A row chain
// runs such a run of ops as one kernel, a row per group of `lanes` threads
// (a warp): each reduction's total reaches every lane through the
// butterfly of WarpReductions.h, the later ops of the chain take it from
// that register instead of memory, and the row's elements, read again by
// each op, come from the cache (a row of 1024 bf16 is 2 KB) instead of HBM.
//
// A chain: a warpReducible reduction, then linalg.generics of the same
// block over as many rows, each a warpReducible reduction, an elementwise op
// along its innermost loop (whose outputs that loop walks contiguously) or
// an op of one element per row (a row value: layer norm's mean from its
// sum), each reading a value per row that an earlier op of the chain wrote:
// the same element for every row (checked over all rows), which it then
// takes from the register. Between them only ops without memory effects,
// ops whose buffers the chain's ops before them do not touch (they then
// run first), and fills that fold into a later reduction of the chain. Running
// the ops row by row instead of op after op computes the same when no op of the
// chain writes bytes that another op of the chain touches (a value taken
// from the register is no read), but for values per row written to the
// same element of each row (the plan reuses the sum's buffer for the
// variance): buffers are compared by their extent, a range of the same
// block (rankc-plan-buffers' views), or distinct allocations. What an op's
// body reads and writes itself counts as well (cross-entropy's pick reads
// a class table at the target and, for a bad target, claims the runtime's
// index record: it joins its max and sum, the record touched by no other
// op of the chain).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_LIB_CODEGEN_CUDA_ROWCHAINS_H
#define RANKC_LIB_CODEGEN_CUDA_ROWCHAINS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

namespace rankc {

struct RowChainOp {
  /// A warpReducible reduction along the row; an elementwise op along its
  /// innermost loop; or an op of one element per row (layer norm's mean
  /// from its sum), computed by every lane.
  enum Kind { Reduction, Elementwise, RowValue };
  mlir::linalg::GenericOp op;
  Kind kind = Reduction;
  /// The loop along the row: the reduced one, an elementwise op's
  /// innermost; a row value's number of loops (none).
  unsigned rowDim = 0;
  /// A reduction's fill, folded in: its value is the initial accumulator.
  mlir::linalg::FillOp fill;
  /// Input operand number -> the (chain op, output) whose value per row it
  /// reads, from the register that holds it.
  llvm::SmallDenseMap<unsigned, std::pair<unsigned, unsigned>> forwarded;
  /// Buffers its body's own ops read or write (a gather's table, an index
  /// check's error record: accesses its operands do not show), each with
  /// whether it is written. Written ones only in a reduction or an
  /// elementwise op, whose bodies run once per element (a row value's runs
  /// on every lane).
  llvm::SmallVector<std::pair<mlir::Value, bool>, 2> bodyAccesses;

  /// One value per row: a reduction's total or a row value.
  bool perRow() const { return kind != Elementwise; }
};

struct RowChain {
  int64_t rows = 0;
  llvm::SmallVector<RowChainOp> ops;
};

/// Whether `a`'s operand `x` and `b`'s operand `y` are the same element of
/// the same buffer at each of the `rows` rows (neither along its row):
/// SameElementPerRow.cpp.
bool sameElementPerRow(const RowChainOp &a, mlir::OpOperand *x,
                       const RowChainOp &b, mlir::OpOperand *y, int64_t rows);

/// The row chains of `fn`'s blocks, in order; no op in two.
llvm::SmallVector<RowChain> findRowChains(mlir::func::FuncOp fn);

/// Replaces `chain` (on buffers) by one scf.parallel over its rows and
/// `lanes` lanes (innermost: rankc-linalg-to-gpu-loops maps it to thread x;
/// 32, a warp, on the GPU), where its last op was; its ops and folded fills
/// are erased.
void lowerRowChain(mlir::RewriterBase &rewriter, const RowChain &chain,
                   int64_t lanes);

} // namespace rankc

#endif // RANKC_LIB_CODEGEN_CUDA_ROWCHAINS_H
