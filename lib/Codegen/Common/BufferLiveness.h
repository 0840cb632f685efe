//===- BufferLiveness.h - where in a body a buffer is alive -----*- C++ -*-===//
//
// What the memory-plan passes share (rankc-part-out-params,
// rankc-donate-carried, rankc-plan-buffers, rankc-step-memory): in a
// function's straight-line body, the first and last operation that uses a
// buffer or any value made from it; a buffer's bytes in a step's memory;
// the calls of each function.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_CODEGEN_COMMON_BUFFERLIVENESS_H
#define RANKC_CODEGEN_COMMON_BUFFERLIVENESS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <utility>

namespace rankc {

/// Each operation of `body` numbered in order.
llvm::DenseMap<mlir::Operation *, int64_t> numberOps(mlir::Block &body);

/// The positions in `body` of the first and last operation that uses
/// `root` or a value made from it (any result of an operation that uses
/// one: views, addresses, a message's request, whose wait then ends the
/// buffer's life), or failure when the buffer leaves the function (returned,
/// stored, freed). {-1, -1}: never used. With `returnedAt`, a buffer the
/// body's terminator returns is no failure: the positions of the results
/// it is (the buffer itself, not a view of it) are added there, and the
/// terminator counts as a use. Callees are looked up through `symbols`
/// (a pass's one collection: an uncached lookup scans the module, and a
/// schedule of thousands of calls made that quadratic).
mlir::FailureOr<std::pair<int64_t, int64_t>>
liveRange(mlir::Value root, mlir::Block &body,
          const llvm::DenseMap<mlir::Operation *, int64_t> &at,
          mlir::SymbolTableCollection &symbols,
          llvm::SmallVectorImpl<unsigned> *returnedAt = nullptr);

/// Every buffer of a step starts on this (runtime/core/Arena.cpp's kAlign,
/// and the offsets of rankc-plan-buffers' block).
constexpr int64_t kBufferAlign = 256;

/// The bytes a buffer of `type` takes in a step's memory (at least one
/// element's worth, rounded up to kBufferAlign), or -1 if its size is
/// dynamic.
int64_t alignedBytes(mlir::MemRefType type);

/// The calls of each function of `module` (func.call, looked up through a
/// symbol table: a lookup is a hash, not a scan of the module's thousands
/// of parts).
llvm::DenseMap<mlir::Operation *, llvm::SmallVector<mlir::func::CallOp>>
callersOf(mlir::ModuleOp module);

} // namespace rankc

#endif // RANKC_CODEGEN_COMMON_BUFFERLIVENESS_H
