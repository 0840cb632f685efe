//===- OptimizeNoneGlue.cpp - -O0 for code whose speed does not matter ----===//
//
// LLVM's -O3 and its SelectionDAG code generation cost time in proportion
// to the code, whatever the code does: a program's schedule (the calls to
// the runtime and to its parts, in order) and parts whose loop nests run a
// few thousand scalar operations in all would each run in microseconds at
// -O0, and at -O3 they were most of the compile time of documents of many
// small nodes (bench/compile_scaling.sh). A function marked optimize_none
// (LLVM's optnone, with noinline, which it requires) is skipped by the
// optimization pipeline and goes through FastISel: about 3x less code
// generation time, and no -O3 at all.
//
// Marked: functions whose work, counted before the loops are generated,
// stays under kMaxGlueWork scalar operations: a linalg op counts its
// iterations times the ops of its body; a copy nothing (it becomes a call
// of memcpy or of the runtime's memrefCopy, no loop of the function's: a
// schedule that copies 2,272 messages of 16 elements was compiled at -O3
// as one 150,000-operation function, 26 s of a 10^5-node document's 38,
// issue 42); a dynamic
// shape, or a loop that is not a linalg op's (an scf.for or scf.parallel
// already there), counts as unbounded. A function with any other region
// holding ops of its own (none in programs today) is left optimized.
// Functions that already have LLVM attributes of their own (passthrough)
// are left alone; declarations are skipped.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCOPTIMIZENONEGLUE
#include "rankc/Codegen/Common/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kPassthrough = "passthrough";

/// Scalar operations a function may run and still be compiled at -O0.
constexpr int64_t kMaxGlueWork = int64_t(1) << 14;

/// The iterations of `op` times the ops of its body; nullopt: unbounded.
std::optional<int64_t> workOf(linalg::LinalgOp op) {
  int64_t iterations = 1;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    iterations *= std::max<int64_t>(range, 1);
    if (iterations > kMaxGlueWork)
      return std::nullopt;
  }
  int64_t body = 1;
  if (op->getNumRegions() == 1 && !op->getRegion(0).empty())
    body = std::max<int64_t>(1, op->getRegion(0).front().getOperations().size());
  return iterations * body;
}

/// The work of `fn`, or nullopt once it is over kMaxGlueWork.
std::optional<int64_t> workOf(func::FuncOp fn) {
  int64_t work = 0;
  bool bounded = true;
  fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
    std::optional<int64_t> w = 0;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
      w = workOf(linalgOp);
    else if (isa<scf::ForOp, scf::ParallelOp, scf::ForallOp, scf::WhileOp,
                 affine::AffineForOp, affine::AffineParallelOp>(op))
      w = std::nullopt;
    if (w)
      work += *w;
    if (!w || work > kMaxGlueWork) {
      bounded = false;
      return WalkResult::interrupt();
    }
    // A linalg op's body is counted with the op.
    return isa<linalg::LinalgOp>(op) ? WalkResult::skip()
                                     : WalkResult::advance();
  });
  if (!bounded)
    return std::nullopt;
  return work;
}

struct OptimizeNoneGluePass
    : public rankc::impl::RankcOptimizeNoneGlueBase<OptimizeNoneGluePass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isDeclaration() || fn->hasAttr(kPassthrough) || !workOf(fn))
      return;
    // func-to-llvm carries `passthrough` onto the llvm.func, and LLVM IR
    // translation onto the function (LLVM wants noinline with optnone).
    Builder b(fn.getContext());
    fn->setAttr(kPassthrough, b.getStrArrayAttr({"noinline", "optnone"}));
  }
};

} // namespace
