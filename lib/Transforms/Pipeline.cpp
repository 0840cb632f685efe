//===- Pipeline.cpp - the pipeline of `rankc compile` ---------------------===//

#include "rankc/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Pipelines/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

void rankc::buildRankcPipeline(mlir::OpPassManager &pm, bool bulkSynchronous) {
  pm.addPass(createCommVerifyRanks());
  pm.addPass(createCommBucketGradients());
  pm.addPass(createCommPartition(CommPartitionOptions{!bulkSynchronous}));
  pm.addPass(createCommAssignMpiTags());
}

static void buildBufferization(mlir::OpPassManager &pm);

void rankc::buildCpuLoweringPipeline(mlir::OpPassManager &pm,
                                     bool bulkSynchronous) {
  pm.addPass(createCommLowerToRuntime(
      CommLowerToRuntimeOptions{bulkSynchronous}));
  buildBufferization(pm);
  pm.addPass(mlir::createConvertLinalgToLoopsPass());
  pm.addPass(mlir::createLowerAffinePass());
  pm.addPass(mlir::createSCFToControlFlowPass());
  pm.addPass(mlir::memref::createExpandStridedMetadataPass());
  pm.addPass(mlir::createFinalizeMemRefToLLVMConversionPass());
  // What LLVM has intrinsics for first; the rest (erf, ...) from libm.
  pm.addPass(mlir::createConvertMathToLLVMPass());
  pm.addPass(mlir::createConvertMathToLibmPass());
  pm.addPass(mlir::createArithToLLVMConversionPass());
  pm.addPass(mlir::createConvertIndexToLLVMPass());
  pm.addPass(mlir::createConvertFuncToLLVMPass());
  pm.addPass(mlir::createConvertControlFlowToLLVMPass());
  pm.addPass(mlir::createReconcileUnrealizedCastsPass());
}

/// Bufferizes a program module after its messages are lowered to the
/// runtime: the part every backend shares.
static void buildBufferization(mlir::OpPassManager &pm) {
  pm.addPass(mlir::bufferization::createEmptyTensorToAllocTensorPass());
  mlir::bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      mlir::bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(mlir::bufferization::createOneShotBufferizePass(bufferize));
  pm.addPass(mlir::createCanonicalizerPass());
}

void rankc::buildCudaLoweringPipeline(mlir::OpPassManager &pm,
                                      const CudaOptions &options,
                                      bool bulkSynchronous) {
  pm.addPass(createCommLowerToRuntime(
      CommLowerToRuntimeOptions{bulkSynchronous}));
  // Chains of elementwise ops become one linalg.generic, hence one kernel.
  pm.addPass(mlir::createLinalgElementwiseOpFusionPass());
  buildBufferization(pm);
  pm.addPass(createRankcGpuDeviceBuffers());
  pm.addNestedPass<mlir::func::FuncOp>(createRankcLinalgToGpuLoops(
      RankcLinalgToGpuLoopsOptions{options.threads}));
  pm.addPass(mlir::createConvertParallelLoopToGpuPass());
  pm.addPass(mlir::createGpuKernelOutliningPass());
  // Kernels, copies and allocations of a function go on one stream; the host
  // waits for them only before it calls out (the runtime, a part) or returns.
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createGpuAsyncRegionPass());
  pm.addPass(mlir::createLowerAffinePass());
  pm.addPass(mlir::createCanonicalizerPass());
  mlir::gpu::GPUToNVVMPipelineOptions nvvm;
  nvvm.cubinChip = options.chip;
  nvvm.cubinFeatures = options.features;
  nvvm.cubinFormat = options.format;
  nvvm.optLevel = 3;
  mlir::gpu::buildLowerToNVVMPassPipeline(pm, nvvm);
}

std::string rankc::CudaOptions::defaultFeatures(llvm::StringRef chip) {
  // The PTX ISA that CUDA 13's ptxas takes for the chip: 8.0 up to Hopper,
  // 8.7 for Blackwell (sm_100 and later).
  unsigned number = 0;
  if (chip.starts_with("sm_"))
    (void)chip.drop_front(3).take_while(llvm::isDigit).getAsInteger(10, number);
  return number >= 100 ? "+ptx87" : "+ptx80";
}

namespace {
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
};
} // namespace

void rankc::registerRankcPipelines() {
  mlir::PassPipelineRegistration<>(
      "rankc-lower-cpu",
      "From one partitioned program's module to the LLVM dialect (CPU)",
      [](mlir::OpPassManager &pm) { buildCpuLoweringPipeline(pm); });
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
        buildCudaLoweringPipeline(pm, options);
      });
  mlir::PassPipelineRegistration<>(
      "rankc-pipeline",
      "What `rankc compile --emit mlir` runs: verify ranks, partition, assign MPI tags",
      [](mlir::OpPassManager &pm) { buildRankcPipeline(pm); });
}
