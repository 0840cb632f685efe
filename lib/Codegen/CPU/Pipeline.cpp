//===- Pipeline.cpp - the CPU backend's pipeline --------------------------===//

#include "rankc/Codegen/CPU/Passes.h"
#include "rankc/Codegen/Common/Passes.h"
#include "rankc/Conversion/Passes.h"
#include "rankc/Dialect/Comm/Transforms/Passes.h"
#include "rankc/Transforms/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

using namespace rankc;

// Passes that see one function at a time are nested (on func.func, or on
// every function and gpu.module: nestAny), never run on the whole module:
// the pass manager then runs them on the context's threads, a function
// each, and one program of a thousand parts uses every core, not one
// (issue 15). The result does not depend on the threads.
void rankc::buildCpuLoweringPipeline(mlir::OpPassManager &pm,
                                     bool bulkSynchronous, int64_t threads) {
  // The MPI schedule: nonblocking starts and waits, placed for overlap;
  // the manifest; then calls of the runtime.
  pm.addPass(createCommAsyncSchedule(CommAsyncScheduleOptions{bulkSynchronous}));
  pm.addPass(createRankcRuntimeManifest());
  pm.addPass(createConvertCommToRuntime());
  // Parts equal but for their names: one function (their calls keep
  // their part numbers).
  pm.addPass(createRankcFoldEqualFunctions());
  buildTensorFusionPipeline(pm);
  // erf of f32 as arithmetic that vectorizes (within 1 ulp), not libm calls.
  pm.addNestedPass<mlir::func::FuncOp>(createRankcCpuMathApproximations());
  buildBufferizationPipeline(pm);
  // A step's buffers reuse the memory of dead ones (a plan per function).
  if (planBuffersEnabled())
    pm.addPass(createRankcPlanBuffers());
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
  // What a step allocates, for plan.json (before allocations become calls).
  pm.addPass(createRankcStepMemory());
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
  // A function of many buffers gets them in one struct: func-to-llvm's
  // conversion of a signature is quadratic in it.
  rankc::addArgumentsThroughMemory(pm);
  pm.addPass(mlir::createConvertFuncToLLVMPass());
  pm.addPass(mlir::createConvertControlFlowToLLVMPass());
  if (threads > 1)
    pm.addPass(mlir::createConvertOpenMPToLLVMPass());
  pm.nestAny().addPass(mlir::createReconcileUnrealizedCastsPass());
  buildGlueSplittingPipeline(pm);
}

