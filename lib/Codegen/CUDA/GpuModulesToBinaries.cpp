//===- GpuModulesToBinaries.cpp - gpu.modules to binaries, on threads -----===//
//
// Upstream's gpu-module-to-binary serializes a program's gpu.modules one
// after the other; a module's serialization (LLVM NVPTX, then ptxas and
// fatbinary) was 80% of the CUDA build of resnet18, on one core of however
// many. This pass does what that pass does, through the same interfaces
// (gpu::TargetAttrInterface's serializeToObject and createObject), but
// serializes the modules on the context's threads: each reads only its own
// module (IsolatedFromAbove) and writes only its own temporary files. The
// gpu.binary ops are made afterwards, in module order, on one thread, so
// the result is the same whatever the threads.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/StringSwitch.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUMODULESTOBINARIES
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

struct GpuModulesToBinariesPass
    : public rankc::impl::RankcGpuModulesToBinariesBase<
          GpuModulesToBinariesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto format =
        llvm::StringSwitch<std::optional<gpu::CompilationTarget>>(
            compilationTarget)
            .Cases({"offloading", "llvm"}, gpu::CompilationTarget::Offload)
            .Cases({"assembly", "isa"}, gpu::CompilationTarget::Assembly)
            .Cases({"binary", "bin"}, gpu::CompilationTarget::Binary)
            .Cases({"fatbinary", "fatbin"}, gpu::CompilationTarget::Fatbin)
            .Default(std::nullopt);
    if (!format) {
      module.emitError() << "unknown GPU binary format '" << compilationTarget
                         << "' (llvm, isa, bin or fatbin)";
      return signalPassFailure();
    }
    SmallVector<gpu::GPUModuleOp> modules(module.getOps<gpu::GPUModuleOp>());
    // One (module, target) job per object: what a binary will hold.
    struct Job {
      gpu::GPUModuleOp module;
      gpu::TargetAttrInterface target;
      std::optional<SmallVector<char, 0>> object;
    };
    std::vector<Job> jobs;
    for (gpu::GPUModuleOp m : modules) {
      ArrayAttr targets = m.getTargetsAttr();
      if (!targets || targets.empty()) {
        m.emitError("gpu.module @")
            << m.getName() << " has no target attribute to compile it for";
        return signalPassFailure();
      }
      for (Attribute a : targets) {
        auto target = dyn_cast<gpu::TargetAttrInterface>(a);
        if (!target) {
          m.emitError("gpu.module @")
              << m.getName() << " has a target that cannot serialize: " << a;
          return signalPassFailure();
        }
        jobs.push_back({m, target, std::nullopt});
      }
    }
    if (jobs.empty())
      return;
    // Built before the threads start: the options hand it out on request.
    SymbolTable symbols(module);
    SmallVector<Attribute> libraries;
    for (const std::string &path : linkFiles)
      libraries.push_back(StringAttr::get(&getContext(), path));
    gpu::TargetOptions options(toolkitPath, libraries, cmdOptions,
                               /*elfSection=*/"", *format,
                               [&]() { return &symbols; });

    // Diagnostics of the jobs come out in job order.
    ParallelDiagnosticHandler diagnostics(&getContext());
    parallelFor(&getContext(), 0, jobs.size(), [&](size_t i) {
      diagnostics.setOrderIDForThread(i);
      jobs[i].object =
          jobs[i].target.serializeToObject(jobs[i].module, options);
      if (!jobs[i].object)
        jobs[i].module.emitError("cannot serialize gpu.module @")
            << jobs[i].module.getName() << " for " << jobs[i].target;
      diagnostics.eraseOrderIDForThread();
    });
    if (llvm::any_of(jobs, [](const Job &j) { return !j.object; }))
      return signalPassFailure();

    // The binaries, in module order.
    OpBuilder b(&getContext());
    size_t j = 0;
    for (gpu::GPUModuleOp m : modules) {
      SmallVector<Attribute> objects;
      for (; j < jobs.size() && jobs[j].module == m; ++j) {
        Attribute object =
            jobs[j].target.createObject(m, *jobs[j].object, options);
        if (!object) {
          m.emitError("cannot make an object of gpu.module @") << m.getName();
          return signalPassFailure();
        }
        objects.push_back(object);
      }
      b.setInsertionPointAfter(m);
      gpu::BinaryOp::create(
          b, m.getLoc(), m.getName(),
          dyn_cast_or_null<gpu::OffloadingLLVMTranslationAttrInterface>(
              m.getOffloadingHandlerAttr()),
          b.getArrayAttr(objects));
      m.erase();
    }
  }
};

} // namespace
