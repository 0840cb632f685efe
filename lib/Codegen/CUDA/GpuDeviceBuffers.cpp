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

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUDEVICEBUFFERS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

void allocToGpu(RewriterBase &rewriter, memref::AllocOp op) {
  rewriter.setInsertionPoint(op);
  rewriter.replaceOpWithNewOp<gpu::AllocOp>(
      op, op.getType(), /*asyncToken=*/Type(), /*asyncDependencies=*/
      ValueRange(), op.getDynamicSizes(), op.getSymbolOperands(),
      /*hostShared=*/false);
}

/// A constant's host global, copied once into a device buffer where it is
/// taken: kernels then read device memory only. Not where every use is
/// already a copy to the device (a constant copied into a buffer: one
/// host-to-device gpu.memcpy).
void globalToGpu(RewriterBase &rewriter, memref::GetGlobalOp op) {
  if (llvm::all_of(op->getUses(), [](OpOperand &use) {
        auto copy = dyn_cast<gpu::MemcpyOp>(use.getOwner());
        return copy && copy.getSrc() == use.get();
      }))
    return;
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
}

/// memref.copy would run on the host: contiguous buffers are copied by the
/// GPU's copy engine, strided views by a kernel (linalg.copy).
void copyToGpu(RewriterBase &rewriter, memref::CopyOp op) {
  auto contiguous = [](Type t) {
    return cast<MemRefType>(t).getLayout().isIdentity();
  };
  rewriter.setInsertionPoint(op);
  if (contiguous(op.getSource().getType()) &&
      contiguous(op.getTarget().getType()))
    rewriter.replaceOpWithNewOp<gpu::MemcpyOp>(
        op, TypeRange(), ValueRange(), op.getTarget(), op.getSource());
  else
    rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                op.getTarget());
}

/// One walk over the host code, each op rewritten where it is (no greedy
/// driver: nothing here enables anything else, and the driver's folding
/// and region simplification were superlinear in a 10^5-node step).
struct GpuDeviceBuffersPass
    : public rankc::impl::RankcGpuDeviceBuffersBase<GpuDeviceBuffersPass> {
  void runOnOperation() override {
    SmallVector<Operation *> ops;
    SmallVector<memref::GetGlobalOp> globals;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::GPUModuleOp>(op))
        return WalkResult::skip(); // device code: its own buffers
      if (isa<memref::AllocOp, memref::CopyOp>(op))
        ops.push_back(op);
      else if (auto global = dyn_cast<memref::GetGlobalOp>(op))
        globals.push_back(global);
      return WalkResult::advance();
    });
    IRRewriter rewriter(&getContext());
    // Copies first: a global's uses are then the copies it is left to.
    for (Operation *op : ops) {
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        allocToGpu(rewriter, alloc);
      else
        copyToGpu(rewriter, cast<memref::CopyOp>(op));
    }
    for (memref::GetGlobalOp global : globals)
      globalToGpu(rewriter, global);
  }
};

} // namespace
