//===- Passes.h - rankc's conversions ---------------------------*- C++ -*-===//
//
// From rankc's dialects to the runtime's C ABI (descriptions: Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_CONVERSION_PASSES_H
#define RANKC_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace rankc {

#define GEN_PASS_DECL
#include "rankc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rankc/Conversion/Passes.h.inc"

/// On a runtime function's declaration: the function enqueues its GPU work
/// on the stream every kernel of the process uses, so it needs no host
/// wait before it (rankc-gpu-stream-ordered-calls reads it).
constexpr llvm::StringLiteral kStreamOrdered = "rankc.stream_ordered";
/// On a part's function after convert-comm-to-runtime (which drops the
/// comm.* attributes): its results go only to the runtime or to other parts.
constexpr llvm::StringLiteral kPartFunction = "rankc.part";
/// On a result of the step function (set with the manifest): the argument
/// whose next value the result is, carried into the next step
/// (rankc-donate-carried writes it there; rankc-plan-buffers keeps it out of
/// the step's block).
constexpr llvm::StringLiteral kCarriedFrom = "rankc.carried_from";

} // namespace rankc

#endif // RANKC_CONVERSION_PASSES_H
