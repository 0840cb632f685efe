//===- GpuFoldEqualKernels.cpp - one kernel per distinct body ---------------===//
//
// Outlining makes one gpu.module per launch site, and a program built from
// repeated work (a chain of the same elementwise update, a layer per step
// of a deep network, many short chains alike) has thousands of launch sites
// but a handful of distinct kernels: the 10^4-node `wide` document of
// bench/compile_scaling.sh has 2,500 kernels of 2 different bodies. Each
// kernel is lowered to NVVM, compiled by LLVM and ptxas, and loaded at
// start-up; on those documents that serialization was most of the CUDA
// build. Kernels whose modules are equal but for their names are folded
// into the first one, and launches follow it.
//
// Linear in the kernels' size: each kernel is hashed once (ops, attributes
// and types, not the names of values), and compared in full only with the
// kept kernels of the same hash (include/rankc/Transforms/EqualButName.h).
// Where parts are equal, rankc-fold-equal-functions has folded them before
// this: the kernels left alike are launch sites within distinct parts.
//
//===----------------------------------------------------------------------===//

#include "KernelModules.h"
#include "rankc/Codegen/CUDA/Passes.h"

#include "rankc/Transforms/EqualButName.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUFOLDEQUALKERNELS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Equal modules but for their names hold equal kernels but for theirs.
llvm::hash_code hashKernel(gpu::GPUModuleOp m, gpu::GPUFuncOp kernel) {
  return llvm::hash_combine(rankc::attributesButName(m),
                            rankc::hashButName(kernel));
}

bool equalKernels(gpu::GPUModuleOp a, gpu::GPUFuncOp ka, gpu::GPUModuleOp b,
                  gpu::GPUFuncOp kb) {
  return rankc::attributesButName(a) == rankc::attributesButName(b) &&
         rankc::equalButName(ka, kb);
}

struct GpuFoldEqualKernelsPass
    : public rankc::impl::RankcGpuFoldEqualKernelsBase<
          GpuFoldEqualKernelsPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    struct Kept {
      gpu::GPUModuleOp module;
      gpu::GPUFuncOp kernel;
    };
    rankc::FirstEqual<Kept> kept;
    // Folded module -> the kernel its launches go to.
    DenseMap<StringAttr, SymbolRefAttr> folded;
    SmallVector<gpu::GPUModuleOp> erased;
    for (auto m : llvm::make_early_inc_range(
             module.getOps<gpu::GPUModuleOp>())) {
      gpu::GPUFuncOp kernel = rankc::singleKernel(m);
      if (!kernel)
        continue;
      std::optional<Kept> equal = kept.find(
          hashKernel(m, kernel), Kept{m, kernel},
          [](const Kept &a, const Kept &b) {
            return equalKernels(a.module, a.kernel, b.module, b.kernel);
          });
      if (!equal)
        continue;
      folded[m.getNameAttr()] = SymbolRefAttr::get(
          equal->module.getNameAttr(),
          {FlatSymbolRefAttr::get(equal->kernel.getNameAttr())});
      erased.push_back(m);
    }
    if (folded.empty())
      return;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = folded.find(launch.getKernelModuleName());
      if (it != folded.end())
        launch.setKernelAttr(it->second);
    });
    for (gpu::GPUModuleOp m : erased)
      m.erase();
  }
};

} // namespace
