//===- Passes.h - what both backends share -*- C++ -*-===//
//
// Bufferization and the treatment of glue, for the CPU and CUDA pipelines
// (descriptions: Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_CODEGEN_COMMON_PASSES_H
#define RANKC_CODEGEN_COMMON_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace rankc {

#define GEN_PASS_DECL
#include "rankc/Codegen/Common/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rankc/Codegen/Common/Passes.h.inc"

/// rankc-plan-buffers' block of a function's buffers: the runtime's
/// function that gives the step function its block, and the attribute (its
/// bytes) on a part's argument that receives one from its callers. A
/// block is memory of its own: no other buffer of the function shares it.
inline constexpr llvm::StringLiteral kScratchFunction = "rankc_rt_scratch";
inline constexpr llvm::StringLiteral kScratchBytes = "rankc.scratch_bytes";

/// Bufferizes a program module after its messages are lowered to the
/// runtime (tensor constants' globals in program order first).
void buildBufferizationPipeline(mlir::OpPassManager &pm);

/// Whether a step's buffers get a memory plan (rankc-part-out-params and
/// rankc-plan-buffers): yes unless RANKC_PLAN_BUFFERS=0, the switch that
/// benchmarks use to measure a step without one (bench/gpu/memory.py).
bool planBuffersEnabled();

/// A program's many results written through its caller's memory, the
/// schedule's one long -O0 block cut for linear code generation, then
/// into functions that build on threads of their own: the last passes of
/// both backends.
void buildGlueSplittingPipeline(mlir::OpPassManager &pm);

/// rankc-arguments-through-memory, right before func-to-llvm on both
/// backends. RANKC_ARGUMENTS_THROUGH_MEMORY=MAX overrides its max-arguments
/// (the random programs' tests pass every buffer through memory this way).
void addArgumentsThroughMemory(mlir::OpPassManager &pm);

} // namespace rankc

#endif // RANKC_CODEGEN_COMMON_PASSES_H
