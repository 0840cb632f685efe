//===- GpuRemFToLibdevice.cpp - a kernel's float remainder as fmod --------===//
//
// arith.remf becomes llvm.frem, which NVPTX cannot select: the NVVM
// conversion marks it illegal, and kernels with a float `rem` (v3) failed
// to build. upstream's gpu-to-nvvm maps arith.remf to libdevice's fmod,
// but only when it still sees arith ops, and the pipeline lowers arith to
// LLVM first (as upstream's gpu-lower-to-nvvm-pipeline does). So kernels
// call __nv_fmodf / __nv_fmod (C's fmod, exact, as llvm.frem is) here,
// before that lowering; libdevice is linked with every kernel module.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUREMFTOLIBDEVICE
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

struct GpuRemFToLibdevicePass
    : public rankc::impl::RankcGpuRemFToLibdeviceBase<GpuRemFToLibdevicePass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    SmallVector<arith::RemFOp> rems;
    module.walk([&](arith::RemFOp op) { rems.push_back(op); });
    for (arith::RemFOp op : rems) {
      Type t = op.getType();
      if (!t.isF32() && !t.isF64()) {
        // (f16/bf16 `rem` is computed in f32 by the importer.)
        op.emitOpError("on the GPU takes f32 or f64, got ") << t;
        return signalPassFailure();
      }
      StringRef name = t.isF32() ? "__nv_fmodf" : "__nv_fmod";
      auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      if (!fn) {
        OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
        fn = LLVM::LLVMFuncOp::create(b, module.getLoc(), name,
                                      LLVM::LLVMFunctionType::get(t, {t, t}));
      }
      OpBuilder b(op);
      auto call = LLVM::CallOp::create(b, op.getLoc(), fn,
                                       ValueRange{op.getLhs(), op.getRhs()});
      op.replaceAllUsesWith(call.getResult());
      op.erase();
    }
  }
};

} // namespace
