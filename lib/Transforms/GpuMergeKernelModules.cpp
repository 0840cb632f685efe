//===- GpuMergeKernelModules.cpp - one gpu.module per program --------------===//
//
// Each gpu.module is serialized on its own (LLVM NVPTX, then ptxas: about
// 80 ms each) and loaded on its own at start-up; a program has tens to
// hundreds of kernels, so they are gathered into one module first.
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUMERGEKERNELMODULES
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kMerged = "rankc_kernels";

struct GpuMergeKernelModulesPass
    : public rankc::impl::RankcGpuMergeKernelModulesBase<
          GpuMergeKernelModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Modules that hold exactly one kernel function and nothing else.
    SmallVector<gpu::GPUModuleOp> single;
    for (auto m : module.getOps<gpu::GPUModuleOp>()) {
      Block &body = m.getBodyRegion().front();
      if (m.getName() != kMerged && !body.empty() &&
          llvm::hasSingleElement(body.without_terminator()) &&
          isa<gpu::GPUFuncOp>(body.front()) &&
          cast<gpu::GPUFuncOp>(body.front()).isKernel())
        single.push_back(m);
    }
    if (single.size() < 2)
      return;
    OpBuilder b(single.front());
    auto merged = gpu::GPUModuleOp::create(b, module.getLoc(), kMerged);
    SymbolTable(module).insert(merged);
    Block &into = merged.getBodyRegion().front();
    // Old (module, kernel) -> new kernel name.
    DenseMap<std::pair<StringAttr, StringAttr>, StringAttr> renamed;
    for (gpu::GPUModuleOp m : single) {
      auto kernel = cast<gpu::GPUFuncOp>(m.getBodyRegion().front().front());
      renamed[{m.getNameAttr(), kernel.getNameAttr()}] = m.getNameAttr();
      kernel->moveBefore(&into, into.without_terminator().end());
      kernel.setName(m.getName());
      m.erase();
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = renamed.find({launch.getKernelModuleName(),
                              launch.getKernelName()});
      if (it == renamed.end())
        return;
      launch.setKernelAttr(SymbolRefAttr::get(
          merged.getNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
    });
  }
};

} // namespace
