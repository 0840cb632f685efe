//===- BufferLiveness.h - where in a body a buffer is alive -----*- C++ -*-===//
//
// The liveness rankc-plan-buffers and rankc-donate-carried share: in a
// function's straight-line body, the first and last operation that uses a
// buffer or any value made from it.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_CODEGEN_COMMON_BUFFERLIVENESS_H
#define RANKC_CODEGEN_COMMON_BUFFERLIVENESS_H

#include "mlir/IR/Block.h"
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
/// terminator counts as a use.
mlir::FailureOr<std::pair<int64_t, int64_t>>
liveRange(mlir::Value root, mlir::Block &body,
          const llvm::DenseMap<mlir::Operation *, int64_t> &at,
          llvm::SmallVectorImpl<unsigned> *returnedAt = nullptr);

} // namespace rankc

#endif // RANKC_CODEGEN_COMMON_BUFFERLIVENESS_H
