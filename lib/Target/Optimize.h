//===- Optimize.h - LLVM's -O3 over a program's module ----------*- C++ -*-===//
//
// Internal to lib/Target.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_LIB_TARGET_OPTIMIZE_H
#define RANKC_LIB_TARGET_OPTIMIZE_H

#include "llvm/Support/Error.h"

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace rankc {

/// LLVM's default -O3 pipeline for `machine`, as `opt -O3` runs it: with
/// the standard instrumentations, so that functions marked optnone
/// (rankc-optimize-none-glue) are skipped.
llvm::Error optimizeModule(llvm::Module &module, llvm::TargetMachine &machine);

} // namespace rankc

#endif
