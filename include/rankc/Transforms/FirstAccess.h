//===- FirstAccess.h - the op that next touches a filled buffer -*- C++ -*-===//
//
// A linalg.fill often starts a buffer that one later op overwrites or
// accumulates into: a GEMM's C, a reduction's output. Whether the fill can
// go (the GEMM runs with beta 0; the reduction's threads start from the
// fill's value) depends on which op next touches the buffer's memory. The
// bufferized step puts the fill where the tensor was made, often ops before
// that op (a layer norm's kernel, the copies that stage a GEMM's operands):
// both rankc-gpu-library-calls and rankc-linalg-to-gpu-loops ask this one
// question, with the same rules.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_TRANSFORMS_FIRSTACCESS_H
#define RANKC_TRANSFORMS_FIRSTACCESS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Support/LLVM.h"

namespace rankc {

/// The first op after a fill, in its block, to touch the filled buffer.
struct FirstAccess {
  mlir::Operation *op;
  /// The buffer and its reshapes made up to `op` (the same elements under
  /// other shapes): `op` uses at least one of them.
  llvm::SmallVector<mlir::Value> views;
};

/// The buffer that `v` is a reshape of (memref.collapse_shape,
/// expand_shape, any number of them), or `v`.
mlir::Value underReshapes(mlir::Value v);

/// The first op after `fill` (within `lookahead` ops) that uses the buffer
/// it fills or a reshape of it, where no other op can touch that memory:
/// the buffer (underReshapes) is a whole allocation (an op's allocated
/// result: memref.alloc, gpu.alloc; or a memref.view of the step's arena,
/// whose plan gives no two live buffers the same bytes), every view of it
/// made before the fill is a reshape, and it is not used outside the
/// fill's block. Failure otherwise.
mlir::FailureOr<FirstAccess> firstAccessAfterFill(mlir::linalg::FillOp fill,
                                                  int lookahead);

} // namespace rankc

#endif // RANKC_TRANSFORMS_FIRSTACCESS_H
