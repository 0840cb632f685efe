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
  tuning.LoopUnrolling = true;
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
