//===- Optimize.cpp - LLVM's -O3 over a program's module ------------------===//
//
// MLIR's makeOptimizingTransformer builds the same pipeline but without
// LLVM's standard pass instrumentations, and it is one of them
// (OptNoneInstrumentation) that makes the new pass manager skip optnone
// functions: without it, a program's schedule and its parts of little work
// went through all of -O3 however they were marked.
//
//===----------------------------------------------------------------------===//

#include "Optimize.h"

#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Target/TargetMachine.h"

llvm::Error rankc::optimizeModule(llvm::Module &module,
                                  llvm::TargetMachine &machine) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassInstrumentationCallbacks callbacks;
  llvm::StandardInstrumentations instrumentations(module.getContext(),
                                                  /*DebugLogging=*/false);
  instrumentations.registerCallbacks(callbacks, &mam);
  llvm::PipelineTuningOptions tuning;
  // No loop unrolling (full, partial or runtime): the vectorizer's
  // interleaving already gives the loops their independent streams, and
  // what the unroller added grew with the trip counts, so with the tensors:
  // the d=1024 transformer step compiled 1.5x slower than the d=256 one
  // through the same loop nests, and unrolled code was 3/4 of -O3's output
  // (4x the instructions). Without it the two compile in the same time,
  // resnet18 compiles in 1.9 s instead of 4.5, and no step got slower
  // (bench/RESULTS.md, "Linear code generation, no unrolling").
  tuning.LoopUnrolling = false;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(&machine, tuning, std::nullopt, &callbacks);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);
  return llvm::Error::success();
}
