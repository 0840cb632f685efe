//===- ElementwiseVectors.h - elementwise kernels on 16-byte accesses -----===//
//
// rankc-linalg-to-gpu-loops gives large elementwise ops vector loads and
// stores: each thread moves `width` contiguous elements (16 bytes of f32)
// at once, which keeps enough bytes in flight to stream from HBM.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_LIB_CODEGEN_CUDA_ELEMENTWISEVECTORS_H
#define RANKC_LIB_CODEGEN_CUDA_ELEMENTWISEVECTORS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace rankc {

/// `op` tiled by `sizes` (0: not tiled) as scf.parallel loops over the
/// tiles, and erased; the tile's op.
mlir::FailureOr<mlir::linalg::LinalgOp>
tileAsParallelLoops(mlir::RewriterBase &rewriter, mlir::linalg::LinalgOp op,
                    llvm::ArrayRef<int64_t> sizes);

/// Whether `op` (elementwise, static, at least `minElements` elements) walks
/// every operand's contiguous dimension innermost in `width`-aligned runs.
bool vectorizable(mlir::linalg::GenericOp op, int64_t width,
                  int64_t minElements);

/// Tiles `op` by `width` on its innermost loop and vectorizes the tile.
mlir::LogicalResult vectorizeElementwise(mlir::RewriterBase &rewriter,
                                         mlir::linalg::GenericOp op,
                                         int64_t width);

} // namespace rankc

#endif // RANKC_LIB_CODEGEN_CUDA_ELEMENTWISEVECTORS_H
