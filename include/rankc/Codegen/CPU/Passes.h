//===- Passes.h - the CPU backend -*- C++ -*-===//
//
// From one partitioned program to the LLVM dialect for the host
// (descriptions: Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_CODEGEN_CPU_PASSES_H
#define RANKC_CODEGEN_CPU_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace rankc {

#define GEN_PASS_DECL
#include "rankc/Codegen/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rankc/Codegen/CPU/Passes.h.inc"

/// From one partitioned program's module to the LLVM dialect, for the CPU:
/// lower messages to the runtime, bufferize, linalg to loops, to LLVM.
/// `threads` > 1 (rankc compile --threads): large loop nests and GEMMs are
/// shared among that many OpenMP threads. Registered as `rankc-lower-cpu`.
void buildCpuLoweringPipeline(mlir::OpPassManager &pm,
                              bool bulkSynchronous = false,
                              int64_t threads = 1);

} // namespace rankc

#endif // RANKC_CODEGEN_CPU_PASSES_H
