//===- Pipeline.cpp - the CUDA backend's pipeline -------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"
#include "rankc/Codegen/Common/Passes.h"
#include "rankc/Conversion/Passes.h"
#include "rankc/Dialect/Comm/Transforms/Passes.h"
#include "rankc/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace rankc;

void rankc::buildCudaLoweringPipeline(mlir::OpPassManager &pm,
                                      const CudaOptions &options,
                                      bool bulkSynchronous) {
  using namespace mlir;
  // The MPI schedule: nonblocking starts and waits, placed for overlap;
  // the manifest; then calls of the runtime.
  pm.addPass(createCommAsyncSchedule(CommAsyncScheduleOptions{bulkSynchronous}));
  pm.addPass(createRankcRuntimeManifest());
  pm.addPass(createConvertCommToRuntime());
  // Parts equal but for their names: one function (their calls keep
  // their part numbers).
  pm.addPass(createRankcFoldEqualFunctions());
  // Fusion as on the CPU: one kernel per chain, per shape read more than
  // once, per piece of a concat (written in place, no copy of the concat).
  buildTensorFusionPipeline(pm);
  // A constant pad (fill, then the interior inserted) as one kernel.
  pm.addNestedPass<func::FuncOp>(createRankcGpuPadsAsGenerics());
  // Tensors made from no more than they hold, read as they are written
  // (attention's masked scores, exp(x - max)), computed in their readers
  // while the softmax is in its 4-d shapes (again below, once more are
  // cheap).
  pm.addNestedPass<func::FuncOp>(createRankcGpuRecomputeCheapTensors());
  // Loops the GPU mapping can take (three), then reductions with too few
  // outputs as trees of parallel stages.
  pm.addNestedPass<func::FuncOp>(createRankcGpuCollapseDims());
  pm.addNestedPass<func::FuncOp>(createRankcGpuSplitReductions());
  // bf16 matmuls (f32 ones between casts) marked for tensor cores.
  pm.addNestedPass<func::FuncOp>(createRankcGpuNarrowContractions());
  // Autocast GEMMs' results rounded once, by cuBLASLt as it writes them.
  pm.addNestedPass<func::FuncOp>(createRankcGpuRoundGemmResults());
  // Widened bf16 values (most f32 tensors of an autocast step) stored as
  // bf16, widened by their readers: half the bytes.
  pm.addNestedPass<func::FuncOp>(createRankcGpuNarrowStorage());
  // Tensors made from much less than they hold (log_softmax's over bf16
  // logits, a one-hot) computed in their readers, never stored.
  pm.addNestedPass<func::FuncOp>(createRankcGpuRecomputeCheapTensors());
  buildBufferizationPipeline(pm);
  // take's and scatter_add's index checks: kernels cannot call the host.
  pm.addPass(createRankcGpuIndexChecks());
  pm.addPass(createRankcGpuDeviceBuffers());
  // A step's device buffers reuse the memory of dead ones (a plan per
  // function; kernels and copies run in program order on one stream).
  if (planBuffersEnabled())
    pm.addPass(
        createRankcPlanBuffers(RankcPlanBuffersOptions{/*device=*/true}));
  // Matmuls to cuBLASLt; the rest to generated kernels.
  pm.addPass(createRankcGpuLibraryCalls(
      RankcGpuLibraryCallsOptions{options.precision}));
  RankcLinalgToGpuLoopsOptions loops;
  loops.threads = options.threads;
  loops.rowChains = options.rowChains;
  pm.addNestedPass<func::FuncOp>(createRankcLinalgToGpuLoops(loops));
  pm.addPass(createConvertParallelLoopToGpuPass());
  // Launch bounds and the tiling's index arithmetic folded to constants
  // and sunk into the launches (upstream's outlining no longer sinks): left
  // as kernel parameters, a kernel whose loops were joined split its index
  // by 64-bit division by runtime values (resnet18's im2col copies, ~300 us
  // for 4.7 MB); with constants LLVM multiplies and shifts instead.
  pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // One kernel per distinct body (launch sites of repeated work share it) ...
  pm.addPass(createRankcGpuFoldEqualKernels());
  // ... gathered into a few modules, serialized on threads (below).
  pm.addPass(createRankcGpuMergeKernelModules());
  // Kernels, copies and allocations of a function go on one stream; the host
  // waits for them only before it calls out (the runtime, a part) or returns.
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  // ... except before a GEMM: cuBLAS is queued on the kernels' stream.
  pm.addPass(createRankcGpuStreamOrderedCalls());
  // What a step allocates, for plan.json (device buffers are gpu.alloc now).
  pm.addPass(createRankcStepMemory());
  // What is left on the host launches kernels and calls the runtime: -O0.
  pm.addNestedPass<func::FuncOp>(createRankcOptimizeNoneGlue());

  // From here on, the stages of upstream's gpu-lower-to-nvvm-pipeline
  // (mlir/lib/Dialect/GPU/Pipelines/GPUToNVVMPipeline.cpp), with the CUDA
  // toolkit given explicitly rather than looked up in the environment.
  // (Passes that see one function or kernel module at a time run nested:
  // on the threads, every host function and gpu.module on its own.)
  pm.nestAny().addPass(createSCFToControlFlowPass());
  // A function of many buffers gets them in one struct: func-to-llvm's
  // conversion of a signature is quadratic in it.
  rankc::addArgumentsThroughMemory(pm);
  pm.addPass(createConvertFuncToLLVMPass());
  pm.nestAny().addPass(memref::createExpandStridedMetadataPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  // (Before arith becomes LLVM: llvm.frem has no NVPTX instruction.)
  pm.addNestedPass<gpu::GPUModuleOp>(createRankcGpuRemFToLibdevice());
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
  buildGlueSplittingPipeline(pm);
}

