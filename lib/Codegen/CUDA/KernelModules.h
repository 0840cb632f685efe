//===- KernelModules.h - what gpu-kernel-outlining makes --------*- C++ -*-===//
//
// Outlining makes one gpu.module per launch site, holding its kernel and
// nothing else. rankc-gpu-fold-equal-kernels folds equal ones and
// rankc-gpu-merge-kernel-modules gathers the rest: both take only such
// modules (one that holds more, a libdevice declaration, a helper, is
// left as it is).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_CODEGEN_CUDA_KERNELMODULES_H
#define RANKC_CODEGEN_CUDA_KERNELMODULES_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace rankc {

/// The kernel of a module that holds exactly one kernel and nothing else,
/// or null.
inline mlir::gpu::GPUFuncOp singleKernel(mlir::gpu::GPUModuleOp m) {
  mlir::Block &body = m.getBodyRegion().front();
  if (body.empty() || !llvm::hasSingleElement(body.without_terminator()))
    return nullptr;
  auto kernel = llvm::dyn_cast<mlir::gpu::GPUFuncOp>(body.front());
  return kernel && kernel.isKernel() ? kernel : nullptr;
}

} // namespace rankc

#endif // RANKC_CODEGEN_CUDA_KERNELMODULES_H
