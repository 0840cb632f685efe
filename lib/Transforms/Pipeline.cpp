//===- Pipeline.cpp - the pipeline of `rankc compile` ---------------------===//

#include "rankc/Transforms/Passes.h"
#include "rankc/Conversion/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdlib>
#include <string_view>
#include "mlir/IR/Verifier.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

void rankc::buildRankcPipeline(mlir::OpPassManager &pm, bool bulkSynchronous) {
  pm.addPass(createCommVerifyRanks());
  pm.addPass(createRankcFoldTransposes());
  pm.addPass(createCommBucketGradients());
  pm.addPass(createCommApplyOptimizer());
  pm.addPass(createCommPartition(CommPartitionOptions{!bulkSynchronous}));
  pm.addPass(createCommAssignMpiTags());
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

static void buildBufferization(mlir::OpPassManager &pm);

// Passes that see one function at a time are nested (on func.func, or on
// every function and gpu.module: nestAny), never run on the whole module:
// the pass manager then runs them on the context's threads, a function
// each, and one program of a thousand parts uses every core, not one
// (issue 15). The result does not depend on the threads.
void rankc::buildCpuLoweringPipeline(mlir::OpPassManager &pm,
                                     bool bulkSynchronous, int64_t threads) {
  pm.addPass(createCommLowerToRuntime(
      CommLowerToRuntimeOptions{bulkSynchronous}));
  // Elementwise ops on whole tensors (the importer's form of most nodes)
  // become linalg.generic, as every other loop nest already is.
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createConvertElementwiseToLinalgPass());
  // Chains of elementwise ops become one linalg.generic, hence one loop
  // nest; transposes fold into the GEMMs that read them.
  pm.addNestedPass<mlir::func::FuncOp>(createRankcFuseElementwise());
  // Halo updates read their concat's pieces where they are.
  pm.addNestedPass<mlir::func::FuncOp>(createRankcSplitOverConcat());
  // What is left of a shape and read more than once: one loop nest.
  pm.addNestedPass<mlir::func::FuncOp>(createRankcFuseMultiOutput());
  // erf of f32 as arithmetic that vectorizes (within 1 ulp), not libm calls.
  pm.addNestedPass<mlir::func::FuncOp>(createRankcCpuMathApproximations());
  buildBufferization(pm);
  // scatter_add's loop nest is an scf.parallel (of atomic adds): it stays
  // on one thread, so that its sums do not depend on the threads' timing.
  if (threads > 1)
    pm.addPass(mlir::createParallelForToNestedForsPass());
  // Matmuls to the system BLAS; the rest to loops. Under --threads, the
  // large ones as scf.parallel, and those to OpenMP.
  pm.addPass(createRankcCpuLibraryCalls(RankcCpuLibraryCallsOptions{threads}));
  // A function per loop nest in large parts: LLVM's loop passes cost more
  // than linearly in a function's size.
  pm.addPass(createRankcCpuOutlineLoopNests());
  // The schedule and parts of little work: -O0 (their compile time, not
  // their run time, is what shows).
  pm.addNestedPass<mlir::func::FuncOp>(createRankcOptimizeNoneGlue());
  if (threads > 1) {
    pm.addNestedPass<mlir::func::FuncOp>(createRankcCpuParallelLoops());
    mlir::ConvertSCFToOpenMPPassOptions omp;
    omp.numThreads = unsigned(threads);
    pm.addPass(mlir::createConvertSCFToOpenMPPass(omp));
    // Each loop body comes wrapped in a memref.alloca_scope: with no alloca
    // inside (none here), the canonicalizer inlines it; left, it would hold
    // several blocks once scf-to-cf runs (invalid) and save and restore
    // the stack at every iteration.
    pm.addPass(mlir::createCanonicalizerPass());
  } else {
    pm.addNestedPass<mlir::func::FuncOp>(
        mlir::createConvertLinalgToLoopsPass());
  }
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createLowerAffinePass());
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createSCFToControlFlowPass());
  pm.addNestedPass<mlir::func::FuncOp>(
      mlir::memref::createExpandStridedMetadataPass());
  // memref.alloc calls _mlir_memref_to_llvm_alloc, which the runtime
  // serves from its step arenas (runtime/Arena.h), not malloc.
  // Through its aligned entry point (the arena aligns every buffer to 256
  // bytes anyway): the pointer the loops use is then the one the call
  // returned, not one rounded up through inttoptr, so LLVM sees that it is
  // a fresh buffer (noalias, see lib/Target/Executable.cpp) and vectorizes
  // without run-time overlap checks.
  mlir::FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  memrefToLLVM.useAlignedAlloc = true;
  pm.addPass(mlir::createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  // What LLVM has intrinsics for first; the rest (erf, ...) from libm.
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createConvertMathToLLVMPass());
  pm.addPass(mlir::createConvertMathToLibmPass());
  pm.addNestedPass<mlir::func::FuncOp>(
      mlir::createArithToLLVMConversionPass());
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createConvertIndexToLLVMPass());
  pm.addPass(mlir::createConvertFuncToLLVMPass());
  pm.addPass(mlir::createConvertControlFlowToLLVMPass());
  if (threads > 1)
    pm.addPass(mlir::createConvertOpenMPToLLVMPass());
  pm.nestAny().addPass(mlir::createReconcileUnrealizedCastsPass());
  // The schedule: its one long block cut for linear -O0 code generation,
  // then into functions that build on threads of their own.
  pm.addNestedPass<mlir::LLVM::LLVMFuncOp>(createRankcSplitGlueBlocks());
  pm.addPass(createRankcSplitGlueFunctions());
}

/// Bufferizes a program module after its messages are lowered to the
/// runtime: the part every backend shares.
static void buildBufferization(mlir::OpPassManager &pm) {
  pm.addNestedPass<mlir::func::FuncOp>(
      mlir::bufferization::createEmptyTensorToAllocTensorPass());
  // Tensor constants' globals in program order, so that they are the same
  // on every run (one-shot-bufferize would make them in an order that
  // depends on pointers); of its alignment, so that it reuses them.
  mlir::bufferization::OneShotBufferizePassOptions bufferize;
  pm.addPass(rankc::createRankcConstantGlobals(
      rankc::RankcConstantGlobalsOptions{bufferize.bufferAlignment}));
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      mlir::bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(mlir::bufferization::createOneShotBufferizePass(bufferize));
  // A result written in place through a subview is "copied" onto an equal
  // subview of its own buffer: CSE makes the two one value, and the
  // canonicalizer then drops the copy onto itself.
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createCSEPass());
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createCanonicalizerPass());
}

void rankc::buildCudaLoweringPipeline(mlir::OpPassManager &pm,
                                      const CudaOptions &options,
                                      bool bulkSynchronous) {
  using namespace mlir;
  pm.addPass(createCommLowerToRuntime(
      CommLowerToRuntimeOptions{bulkSynchronous}));
  // Elementwise ops on whole tensors (the importer's form of most nodes)
  // become linalg.generic, as every other loop nest already is.
  pm.addNestedPass<func::FuncOp>(mlir::createConvertElementwiseToLinalgPass());
  // Chains of elementwise ops become one linalg.generic, hence one kernel;
  // transposes fold into the GEMMs that read them.
  pm.addNestedPass<mlir::func::FuncOp>(createRankcFuseElementwise());
  // Halo updates read their concat's pieces where they are: one kernel per
  // piece, written in place, and no copy of the concat.
  pm.addNestedPass<func::FuncOp>(createRankcSplitOverConcat());
  // What is left of a shape and read more than once: one kernel.
  pm.addNestedPass<func::FuncOp>(createRankcFuseMultiOutput());
  // Loops the GPU mapping can take (three), then reductions with too few
  // outputs as trees of parallel stages.
  pm.addNestedPass<func::FuncOp>(createRankcGpuCollapseDims());
  pm.addNestedPass<func::FuncOp>(createRankcGpuSplitReductions());
  buildBufferization(pm);
  // take's and scatter_add's index checks: kernels cannot call the host.
  pm.addPass(createRankcGpuIndexChecks());
  pm.addPass(createRankcGpuDeviceBuffers());
  // Matmuls to cuBLASLt; the rest to generated kernels.
  pm.addPass(createRankcGpuLibraryCalls(
      RankcGpuLibraryCallsOptions{options.precision}));
  pm.addNestedPass<func::FuncOp>(createRankcLinalgToGpuLoops(
      RankcLinalgToGpuLoopsOptions{options.threads}));
  pm.addPass(createConvertParallelLoopToGpuPass());
  pm.addPass(createGpuKernelOutliningPass());
  // ... into a few modules, serialized on threads (below).
  pm.addPass(createRankcGpuMergeKernelModules());
  // Kernels, copies and allocations of a function go on one stream; the host
  // waits for them only before it calls out (the runtime, a part) or returns.
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  // ... except before a GEMM: cuBLAS is queued on the kernels' stream.
  pm.addPass(createRankcGpuStreamOrderedCalls());
  // What is left on the host launches kernels and calls the runtime: -O0.
  pm.addNestedPass<func::FuncOp>(createRankcOptimizeNoneGlue());

  // From here on, the stages of upstream's gpu-lower-to-nvvm-pipeline
  // (mlir/lib/Dialect/GPU/Pipelines/GPUToNVVMPipeline.cpp), with the CUDA
  // toolkit given explicitly rather than looked up in the environment.
  // (Passes that see one function or kernel module at a time run nested:
  // on the threads, every host function and gpu.module on its own.)
  pm.nestAny().addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.nestAny().addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &perOp = pm.nestAny();
  perOp.addPass(createLowerAffinePass());
  perOp.addPass(createArithToLLVMConversionPass());
  perOp.addPass(createConvertIndexToLLVMPass());
  perOp.addPass(createCanonicalizerPass());
  perOp.addPass(createCSEPass());
  // The kernels: to NVVM.
  pm.addNestedPass<gpu::GPUModuleOp>(createStripDebugInfoPass());
  // Kernels take memrefs as bare pointers (shapes, strides and offsets are
  // static): one parameter a buffer rather than a descriptor's five or more,
  // so less PTX for ptxas and fewer stores for the host to launch with.
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.useBarePtrCallConv = true;
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps(nvvm));
  pm.addNestedPass<gpu::GPUModuleOp>(LLVM::createNVVMOptimizeForTargetPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCanonicalizerPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createCSEPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createReconcileUnrealizedCastsPass());
  // The host: launches to mgpu* calls; kernels serialized (LLVM NVPTX, then
  // ptxas for fatbin/bin), a module a thread, and embedded.
  GpuToLLVMConversionPassOptions host;
  host.kernelBarePtrCallConv = true; // as the kernels were lowered
  // Its mgpu* callees declared first, where its lookups find them at once.
  pm.addPass(createRankcGpuRuntimeDeclarations());
  pm.addPass(createGpuToLLVMConversionPass(host));
  pm.addPass(createRankcGpuRuntimeDeclarations(
      RankcGpuRuntimeDeclarationsOptions{/*eraseUnused=*/true}));
  RankcGpuModulesToBinariesOptions binary;
  binary.compilationTarget = options.format;
  binary.toolkitPath = options.toolkit;
  pm.addPass(createRankcGpuModulesToBinaries(binary));
  OpPassManager &glue = pm.nestAny();
  glue.addPass(createConvertMathToLLVMPass());
  glue.addPass(createCanonicalizerPass());
  glue.addPass(createCSEPass());
  glue.addPass(createReconcileUnrealizedCastsPass());
  // Binaries and launches to LLVM-dialect runtime calls: then every
  // function can be built in a piece of its own (lib/Target/ProgramPieces).
  // After the canonicalizer and CSE: what it makes needs neither (a tenth
  // of a second a program at 10^5 nodes).
  if (options.lowerLaunches)
    pm.addPass(createRankcGpuLaunchToLLVM());
  // After the canonicalizer, which would merge the blocks again.
  pm.addNestedPass<LLVM::LLVMFuncOp>(createRankcSplitGlueBlocks());
  pm.addPass(createRankcSplitGlueFunctions());
}

std::string rankc::CudaOptions::findToolkit(std::string &why) {
  auto hasPtxas = [](llvm::StringRef dir) {
    llvm::SmallString<128> ptxas(dir);
    llvm::sys::path::append(ptxas, "bin", "ptxas");
    return llvm::sys::fs::can_execute(ptxas);
  };
  // The variables NVVM::getCUDAToolkitPath() reads: a toolkit named there
  // is the user's choice, so a wrong one is an error, not a fallback.
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *v = std::getenv(var); v && *v) {
      if (hasPtxas(v))
        return v;
      why = std::string(var) + "=" + v + " has no bin/ptxas";
      return "";
    }
  if (hasPtxas("/usr/local/cuda"))
    return "/usr/local/cuda";
  if (auto ptxas = llvm::sys::findProgramByName("ptxas"))
    return llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas))
        .str();
  why = "no ptxas in /usr/local/cuda/bin or on PATH; set CUDA_HOME";
  return "";
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
};
} // namespace

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
        std::string why;
        options.toolkit = CudaOptions::findToolkit(why);
        buildCudaLoweringPipeline(pm, options);
      });
  mlir::PassPipelineRegistration<>(
      "rankc-pipeline",
      "What `rankc compile --emit mlir` runs: verify ranks, partition, assign MPI tags",
      [](mlir::OpPassManager &pm) { buildRankcPipeline(pm); });
}
