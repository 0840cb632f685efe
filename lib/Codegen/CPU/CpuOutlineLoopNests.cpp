//===- CpuOutlineLoopNests.cpp - a function per loop nest ------------------===//
//
// LLVM compiles functions, and some of its loop passes (IndVarSimplify,
// LoopRotate) cost more than linearly in the size of the function they
// work on: on resnet18's training step, one part of about a thousand loop
// nests, they were 77% of 56 s of -O3. Outlining each linalg op of a large
// part into a function of its own makes the cost per loop nest constant;
// the call per op costs nanoseconds against loop nests of thousands of
// iterations. Functions are marked no_inline, or -O3 would inline each one
// back into its only caller.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCCPUOUTLINELOOPNESTS
#include "rankc/Codegen/CPU/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Moves `op` into an scf.execute_region of its own, with a copy of every
/// constant it reads from above (so that the outlined function has them).
scf::ExecuteRegionOp wrap(IRRewriter &rewriter, Operation *op) {
  rewriter.setInsertionPoint(op);
  auto region =
      scf::ExecuteRegionOp::create(rewriter, op->getLoc(), TypeRange{});
  Block *block = rewriter.createBlock(&region.getRegion());
  rewriter.moveOpBefore(op, block, block->end());
  rewriter.setInsertionPointToEnd(block);
  scf::YieldOp::create(rewriter, op->getLoc());
  llvm::SetVector<Value> above;
  getUsedValuesDefinedAbove(region.getRegion(), above);
  rewriter.setInsertionPointToStart(block);
  for (Value v : above) {
    Operation *def = v.getDefiningOp();
    if (!def || !def->hasTrait<OpTrait::ConstantLike>())
      continue;
    Value copy = rewriter.clone(*def)->getResult(0);
    rewriter.replaceUsesWithIf(v, copy, [&](OpOperand &use) {
      return region->isProperAncestor(use.getOwner());
    });
  }
  return region;
}

struct CpuOutlineLoopNestsPass
    : public rankc::impl::RankcCpuOutlineLoopNestsBase<
          CpuOutlineLoopNestsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<func::FuncOp> functions(module.getOps<func::FuncOp>());
    for (func::FuncOp fn : functions) {
      if (fn.isExternal())
        continue;
      SmallVector<linalg::LinalgOp> ops;
      for (Operation &op : fn.getBody().getOps())
        if (auto l = dyn_cast<linalg::LinalgOp>(op);
            l && l.hasPureBufferSemantics())
          ops.push_back(l);
      if (int64_t(ops.size()) < minOps)
        continue;
      for (auto [i, op] : llvm::enumerate(ops)) {
        scf::ExecuteRegionOp region = wrap(rewriter, op);
        std::string name = (fn.getName() + "_nest" + llvm::Twine(i)).str();
        rewriter.setInsertionPoint(region);
        func::CallOp call;
        FailureOr<func::FuncOp> outlined = mlir::outlineSingleBlockRegion(
            rewriter, region.getLoc(), region.getRegion(), name, &call);
        if (failed(outlined)) {
          region.emitOpError("cannot be outlined");
          return signalPassFailure();
        }
        // Internal to the object file; the call is not to be inlined
        // (func.call's no_inline becomes LLVM's noinline on the call).
        outlined->setPrivate();
        (*outlined)->setAttr("llvm.linkage",
                             LLVM::LinkageAttr::get(&getContext(),
                                                    LLVM::Linkage::Internal));
        call.setNoInline(true);
        // The call takes the wrapper's place: left, each wrapper is a
        // block split for scf-to-cf, which moves every operation after it
        // (a part of 5,000 loop nests: 25 s, quadratic in the nests).
        Block *body = &region.getRegion().front();
        rewriter.eraseOp(body->getTerminator());
        rewriter.inlineBlockBefore(body, region);
        rewriter.eraseOp(region);
      }
    }
  }
};

} // namespace
