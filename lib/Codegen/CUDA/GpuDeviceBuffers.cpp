//===- GpuDeviceBuffers.cpp - host buffers to device memory ---------------===//
//
// After bufferization the host functions own every buffer; on the GPU
// backend those buffers must live in device memory, where the kernels run.
// Host code then only allocates, launches and hands addresses to the
// runtime: it never loads or stores an element itself.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUDEVICEBUFFERS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

bool onHost(Operation *op) { return !op->getParentOfType<gpu::GPUModuleOp>(); }

struct AllocToGpu : OpRewritePattern<memref::AllocOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::AllocOp op,
                                PatternRewriter &rewriter) const override {
    if (!onHost(op))
      return failure();
    rewriter.replaceOpWithNewOp<gpu::AllocOp>(
        op, op.getType(), /*asyncToken=*/Type(), /*asyncDependencies=*/
        ValueRange(), op.getDynamicSizes(), op.getSymbolOperands(),
        /*hostShared=*/false);
    return success();
  }
};

/// A constant's host global, copied once into a device buffer where it is
/// taken: kernels then read device memory only. Matches while some use of
/// the global is not already such a copy.
struct GlobalToGpu : OpRewritePattern<memref::GetGlobalOp> {
  using OpRewritePattern::OpRewritePattern;
  static bool copiedToDevice(OpOperand &use) {
    auto copy = dyn_cast<gpu::MemcpyOp>(use.getOwner());
    return copy && copy.getSrc() == use.get();
  }
  LogicalResult matchAndRewrite(memref::GetGlobalOp op,
                                PatternRewriter &rewriter) const override {
    if (!onHost(op) || llvm::all_of(op->getUses(), copiedToDevice))
      return failure();
    Location loc = op.getLoc();
    rewriter.setInsertionPointAfter(op);
    Value device = gpu::AllocOp::create(rewriter, loc, op.getType(), Type(),
                                        ValueRange(), ValueRange(), ValueRange(),
                                        false)
                       .getMemref();
    auto copy = gpu::MemcpyOp::create(rewriter, loc, TypeRange(), ValueRange(),
                                      device, op.getResult());
    rewriter.replaceUsesWithIf(op.getResult(), device, [&](OpOperand &use) {
      return use.getOwner() != copy;
    });
    return success();
  }
};

/// memref.copy would run on the host: contiguous buffers are copied by the
/// GPU's copy engine, strided views by a kernel (linalg.copy).
struct CopyToGpu : OpRewritePattern<memref::CopyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(memref::CopyOp op,
                                PatternRewriter &rewriter) const override {
    if (!onHost(op))
      return failure();
    auto contiguous = [](Type t) {
      auto m = cast<MemRefType>(t);
      return m.getLayout().isIdentity();
    };
    if (contiguous(op.getSource().getType()) &&
        contiguous(op.getTarget().getType()))
      rewriter.replaceOpWithNewOp<gpu::MemcpyOp>(
          op, TypeRange(), ValueRange(), op.getTarget(), op.getSource());
    else
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                  op.getTarget());
    return success();
  }
};

struct GpuDeviceBuffersPass
    : public rankc::impl::RankcGpuDeviceBuffersBase<GpuDeviceBuffersPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<AllocToGpu, GlobalToGpu, CopyToGpu>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
