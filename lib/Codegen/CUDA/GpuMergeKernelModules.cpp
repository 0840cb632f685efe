//===- GpuMergeKernelModules.cpp - a few gpu.modules per program ----------===//
//
// Each gpu.module is serialized on its own (LLVM NVPTX, then ptxas: about
// 80 ms each) and loaded on its own at start-up; a program has tens to
// thousands of kernels, so they are gathered into a few modules first. Not
// into one: the modules of a program are serialized on threads of their
// own (rankc-gpu-modules-to-binaries), and one module of 900 kernels is
// ten seconds of ptxas on one core.
//
//===----------------------------------------------------------------------===//

#include "KernelModules.h"
#include "rankc/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUMERGEKERNELMODULES
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

constexpr llvm::StringLiteral kMerged = "rankc_kernels";
/// Modules per program at most: each is a ptxas run and a module load.
constexpr size_t kMaxModules = 16;

struct GpuMergeKernelModulesPass
    : public rankc::impl::RankcGpuMergeKernelModulesBase<
          GpuMergeKernelModulesPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Modules that hold exactly one kernel function and nothing else.
    SmallVector<gpu::GPUModuleOp> single;
    for (auto m : module.getOps<gpu::GPUModuleOp>())
      if (m.getName() != kMerged && rankc::singleKernel(m))
        single.push_back(m);
    if (single.size() < 2)
      return;
    // Kernels in program order, cut into runs of about opsPerModule ops
    // (the operations of their bodies: what NVPTX and ptxas work through),
    // at most kMaxModules: the cut depends on the code only, so a build is
    // the same bytes on any machine.
    SmallVector<size_t> size;
    size_t total = 0;
    for (gpu::GPUModuleOp m : single) {
      size_t n = 0;
      m.getBodyRegion().walk([&](Operation *) { ++n; });
      size.push_back(n);
      total += n;
    }
    size_t budget = std::max<size_t>(
        opsPerModule > 0 ? opsPerModule : total,
        (total + kMaxModules - 1) / kMaxModules);
    SymbolTable symbols(module);
    OpBuilder b(module.getContext());
    gpu::GPUModuleOp merged;
    size_t filled = 0;
    // Old (module, kernel) -> new (module, kernel).
    DenseMap<std::pair<StringAttr, StringAttr>, SymbolRefAttr> renamed;
    // The merged modules go first in the module, in order: every symbol
    // lookup without a table (the gpu.container_module verifier's, a
    // kernel a launch, after every pass) scans the module from its start,
    // and a program's thousand part functions before the kernels made that
    // quadratic.
    b.setInsertionPointToStart(module.getBody());
    for (auto [m, n] : llvm::zip_equal(single, size)) {
      if (!merged || (filled > 0 && filled + n > budget)) {
        // (insert renames a taken name: rankc_kernels_0, _1, ...)
        if (merged)
          b.setInsertionPointAfter(merged);
        merged = gpu::GPUModuleOp::create(b, module.getLoc(), kMerged);
        symbols.insert(merged);
        filled = 0;
      }
      filled += n;
      Block &into = merged.getBodyRegion().front();
      auto kernel = cast<gpu::GPUFuncOp>(m.getBodyRegion().front().front());
      renamed[{m.getNameAttr(), kernel.getNameAttr()}] = SymbolRefAttr::get(
          merged.getNameAttr(), {FlatSymbolRefAttr::get(m.getNameAttr())});
      kernel->moveBefore(&into, into.without_terminator().end());
      kernel.setName(m.getName());
      symbols.erase(m);
    }
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto it = renamed.find({launch.getKernelModuleName(),
                              launch.getKernelName()});
      if (it != renamed.end())
        launch.setKernelAttr(it->second);
    });
  }
};

} // namespace
