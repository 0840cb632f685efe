//===- CompileFuzzer.cpp - libFuzzer over the whole compile path ----------===//
//
// Each input is a JSON document taken as far as `rankc compile` takes it
// without writing anything: read, checked, imported, the partitioning
// pipeline (comm-verify-ranks, buckets, the optimizer, comm-partition,
// tags), then every program through the CPU lowering to the LLVM dialect
// and its translation to LLVM IR, and through the CUDA lowering to LLVM IR
// kernels (gpu-module-to-binary's `llvm` format: no ptxas) where the CUDA
// toolkit is. Errors are fine (a deadlock is an error, not a finding); a
// crash, a hang, a sanitizer report, a checked document that does not
// import, or a program lowered to the LLVM dialect that does not translate
// is a finding.
//
//===----------------------------------------------------------------------===//

#include "FuzzContext.h"
#include "ImportChecked.h"

#include "rankc/Target/ProgramModules.h"
#include "rankc/Pipelines/Pipelines.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

namespace {

[[noreturn]] void finding(const char *what) {
  llvm::errs() << "rankc-compile-fuzzer: " << what << "\n";
  std::abort();
}

/// Runs `build`'s pipeline on `module`; failure (a diagnostic) is allowed.
template <typename Build>
bool run(mlir::MLIRContext &ctx, mlir::ModuleOp module, Build build) {
  mlir::PassManager pm(&ctx);
  build(pm);
  return mlir::succeeded(pm.run(module));
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static rankc::fuzz::FuzzContext contexts;
  static const std::string toolkit = [] {
    std::string why;
    return rankc::CudaOptions::findToolkit(why);
  }();
  mlir::MLIRContext &ctx = contexts.next();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      rankc::fuzz::importChecked(ctx, data, size, "rankc-compile-fuzzer");
  if (!module)
    return 0;
  if (!run(ctx, *module, [](mlir::PassManager &pm) {
        rankc::buildRankcPipeline(pm, /*bulkSynchronous=*/false);
      }))
    return 0;
  for (const std::string &name : rankc::programNames(*module)) {
    mlir::OwningOpRef<mlir::ModuleOp> cpu = rankc::extractProgram(*module, name);
    if (run(ctx, *cpu, [](mlir::PassManager &pm) {
          rankc::buildCpuLoweringPipeline(pm, false, /*threads=*/1);
        })) {
      llvm::LLVMContext llvmContext;
      if (!mlir::translateModuleToLLVMIR(*cpu, llvmContext, "fuzz"))
        finding("a program lowered for the CPU did not translate to LLVM IR");
    }
    if (toolkit.empty())
      continue;
    mlir::OwningOpRef<mlir::ModuleOp> gpu = rankc::extractProgram(*module, name);
    rankc::CudaOptions cuda;
    cuda.toolkit = toolkit;
    cuda.format = "llvm";
    (void)run(ctx, *gpu, [&](mlir::PassManager &pm) {
      rankc::buildCudaLoweringPipeline(pm, cuda, false);
    });
  }
  return 0;
}
