//===- Pipelines.cpp - the pipelines of `rankc compile` -------------------===//
//
// Puts the layers' passes together: the partitioning pipeline (comm, with
// the tensor layer's transpose folding) and the registration of every pass
// and pipeline for rankc-opt. Each backend's lowering is built in its own
// folder (lib/Codegen/CPU, lib/Codegen/CUDA).
//
//===----------------------------------------------------------------------===//

#include "rankc/Pipelines/Pipelines.h"
#include "rankc/Codegen/Common/Passes.h"
#include "rankc/Conversion/Passes.h"
#include "rankc/Dialect/Comm/Transforms/Passes.h"
#include "rankc/Transforms/Passes.h"

#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassRegistry.h"

#include <cstdlib>
#include <string_view>

void rankc::buildRankcPipeline(mlir::OpPassManager &pm, bool bulkSynchronous) {
  pm.addPass(createCommVerifyRanks());
  pm.addPass(createRankcFoldTransposes());
  buildCommSchedulePipeline(pm, bulkSynchronous);
}

mlir::LogicalResult rankc::runVerifyingOnce(mlir::PassManager &pm,
                                            mlir::Operation *op,
                                            mlir::TimingScope *timing) {
  const char *each = std::getenv("RANKC_VERIFY_EACH");
  bool verifyEach = each && *each && std::string_view(each) != "0";
  pm.enableVerifier(verifyEach);
  if (mlir::failed(pm.run(op)))
    return mlir::failure();
  if (verifyEach)
    return mlir::success();
  mlir::TimingScope t =
      timing ? timing->nest("verify after the passes") : mlir::TimingScope();
  return mlir::verify(op);
}

namespace {
/// rankc-opt's spelling of the CPU backend's options.
struct CpuPipelineOptions
    : public mlir::PassPipelineOptions<CpuPipelineOptions> {
  Option<int64_t> threads{*this, "threads",
                          llvm::cl::desc("Threads of each rank (OpenMP)"),
                          llvm::cl::init(1)};
};

/// rankc-opt's spelling of CudaOptions.
struct CudaPipelineOptions
    : public mlir::PassPipelineOptions<CudaPipelineOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("GPU (sm_NN)"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (default: the chip's, e.g. +ptx80)")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("gpu-module-to-binary format: fatbin, bin or isa (PTX)"),
      llvm::cl::init("fatbin")};
  Option<int64_t> threads{*this, "threads",
                          llvm::cl::desc("Threads per block"),
                          llvm::cl::init(256)};
  Option<std::string> precision{
      *this, "precision",
      llvm::cl::desc("f32 GEMMs: f32 (exact), tf32 or bf16"),
      llvm::cl::init("f32")};
  Option<bool> rowChains{
      *this, "row-chains",
      llvm::cl::desc("Row chains as one kernel each (RowChains.h)"),
      llvm::cl::init(true)};
};
} // namespace

void rankc::registerRankcPasses() {
  registerCommPasses();
  registerRankcTensorPasses();
  registerRankcConversionPasses();
  registerCodegenCommonPasses();
  registerCodegenCPUPasses();
  registerCodegenCUDAPasses();
}

void rankc::registerRankcPipelines() {
  mlir::PassPipelineRegistration<CpuPipelineOptions>(
      "rankc-lower-cpu",
      "From one partitioned program's module to the LLVM dialect (CPU)",
      [](mlir::OpPassManager &pm, const CpuPipelineOptions &o) {
        buildCpuLoweringPipeline(pm, /*bulkSynchronous=*/false, o.threads);
      });
  mlir::PassPipelineRegistration<CudaPipelineOptions>(
      "rankc-lower-cuda",
      "From one partitioned program's module to the LLVM dialect with GPU "
      "kernels (NVVM, embedded as a gpu.binary)",
      [](mlir::OpPassManager &pm, const CudaPipelineOptions &o) {
        CudaOptions options;
        options.chip = o.chip;
        options.features = o.features.empty()
                               ? CudaOptions::defaultFeatures(o.chip)
                               : std::string(o.features);
        options.format = o.format;
        options.threads = o.threads;
        options.precision = o.precision;
        options.rowChains = o.rowChains;
        std::string why;
        options.toolkit = CudaOptions::findToolkit(why);
        buildCudaLoweringPipeline(pm, options);
      });
  mlir::PassPipelineRegistration<>(
      "rankc-pipeline",
      "What `rankc compile --emit mlir` runs: verify ranks, partition, assign MPI tags",
      [](mlir::OpPassManager &pm) { buildRankcPipeline(pm); });
}
