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
// kept kernels of the same hash.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUFOLDEQUALKERNELS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// The kernel of a module that holds exactly one kernel and nothing else
/// (what outlining makes), or null.
gpu::GPUFuncOp singleKernel(gpu::GPUModuleOp m) {
  Block &body = m.getBodyRegion().front();
  if (body.empty() || !llvm::hasSingleElement(body.without_terminator()))
    return nullptr;
  auto kernel = dyn_cast<gpu::GPUFuncOp>(body.front());
  return kernel && kernel.isKernel() ? kernel : nullptr;
}

/// An op's attributes but its symbol name: what two kernels must share.
DictionaryAttr attributesButName(Operation *op) {
  NamedAttrList attrs(op->getAttrDictionary());
  attrs.erase(SymbolTable::getSymbolAttrName());
  return attrs.getDictionary(op->getContext());
}

constexpr auto kFlags = OperationEquivalence::IgnoreLocations;

llvm::hash_code structuralHash(gpu::GPUModuleOp m, gpu::GPUFuncOp kernel) {
  llvm::hash_code h = llvm::hash_combine(attributesButName(m),
                                         attributesButName(kernel));
  kernel.getBody().walk([&](Operation *op) {
    h = llvm::hash_combine(
        h, OperationEquivalence::computeHash(
               op, OperationEquivalence::ignoreHashValue,
               OperationEquivalence::ignoreHashValue, kFlags));
  });
  return h;
}

bool equalButNames(gpu::GPUModuleOp a, gpu::GPUFuncOp ka, gpu::GPUModuleOp b,
                   gpu::GPUFuncOp kb) {
  return attributesButName(a) == attributesButName(b) &&
         attributesButName(ka) == attributesButName(kb) &&
         OperationEquivalence::isRegionEquivalentTo(&ka.getBody(),
                                                    &kb.getBody(), kFlags);
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
    DenseMap<llvm::hash_code, SmallVector<Kept, 1>> kept;
    // Folded module -> the kernel its launches go to.
    DenseMap<StringAttr, SymbolRefAttr> folded;
    SmallVector<gpu::GPUModuleOp> erased;
    for (auto m : llvm::make_early_inc_range(
             module.getOps<gpu::GPUModuleOp>())) {
      gpu::GPUFuncOp kernel = singleKernel(m);
      if (!kernel)
        continue;
      SmallVector<Kept, 1> &same = kept[structuralHash(m, kernel)];
      auto equal = llvm::find_if(same, [&](const Kept &k) {
        return equalButNames(k.module, k.kernel, m, kernel);
      });
      if (equal == same.end()) {
        same.push_back({m, kernel});
        continue;
      }
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
