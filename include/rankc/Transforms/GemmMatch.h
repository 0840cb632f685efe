//===- GemmMatch.h - contractions as one library GEMM --*- C++ -*-===//

#ifndef RANKC_LIB_TRANSFORMS_GEMMMATCH_H
#define RANKC_LIB_TRANSFORMS_GEMMMATCH_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace rankc {

/// A contraction as one (batched) row-major GEMM:
/// C[b, m, n] (+)= sum_k A[b, m, k] B[b, k, n], where each of b, m, n, k
/// may stand for several loop dimensions that are contiguous in every
/// operand, and A may be stored as [b, k, m], B as [b, n, k] (transposed).
/// With broadcastB, B is one matrix for every batch (its batch stride 0):
/// the batch is made of leading M dimensions of A and C.
struct Gemm {
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool transA = false, transB = false, broadcastB = false;
};

/// The runtime's dtype code of a GEMM's inputs (rankc_runtime.h): f32,
/// f64, bf16 or f16 (with an f32 C); or -1.
int gemmDType(mlir::Type t);

/// `op` (on tensors, or on buffers of identity layout) as a GEMM of f32 or
/// f64 with static shapes, or failure. With `anyLayout`, buffers may be
/// strided views (which the caller copies to identity-layout buffers). With
/// `narrowInputs` (cuBLASLt), A and B may be bf16 or f16 and C f32.
mlir::FailureOr<Gemm> asGemm(mlir::linalg::LinalgOp op, bool anyLayout = false,
                             bool narrowInputs = false);

/// The fill of zeros that starts `op`'s accumulator `acc` (or the buffer
/// `acc` is a reshape of), if any: a GEMM call folds it (beta = 0). Either
/// `op` is the first op after the fill to touch the buffer, a whole
/// allocation (FirstAccess.h), or only ops that touch no memory come
/// between them.
mlir::linalg::FillOp zeroFillOf(mlir::linalg::LinalgOp op, mlir::Value acc);

/// Gives every operand of `op` that is a strided view a buffer of identity
/// layout from `alloc`: inputs are copied in before `op` (linalg.copy), a
/// strided result is copied in too (the GEMM may accumulate into it) and
/// back out after `op`.
void stageStridedOperands(
    mlir::OpBuilder &b, mlir::linalg::LinalgOp op,
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   mlir::MemRefType)>
        alloc);

/// The runtime's GEMM entry point `name` in `module` (declared if needed):
/// (A, B, C, batch, M, N, K, dtype, accumulate, transA, transB, precision,
/// broadcastB), addresses as index; with `block`, four i64 more (the
/// block [m0, m1) x [n0, n1) of C to compute); with `bias`, the address of
/// a bias vector last (rankc_rt_gemm_bias).
mlir::func::FuncOp declareGemm(mlir::OpBuilder &b, mlir::ModuleOp module,
                               llvm::StringRef name, bool block = false,
                               bool bias = false);

/// Replaces `op` (on buffers of identity layout, matched as `g`) by a call
/// of `gemm`, folding the zero fill that starts its accumulator. With
/// `narrowOut` (a buffer of A's bf16 or f16 type, C's shape; only for an
/// accumulator that starts from zeros), the call writes C rounded there
/// instead (RANKC_GEMM_NARROW_C); with `bias` too (n values of that type,
/// `gemm` declared with `bias`), the call adds it to each row of the f32
/// sum before rounding.
mlir::func::CallOp replaceByGemmCall(mlir::OpBuilder &b,
                                     mlir::linalg::LinalgOp op, const Gemm &g,
                                     mlir::func::FuncOp gemm,
                                     int32_t precision,
                                     mlir::Value narrowOut = {},
                                     mlir::Value bias = {});

} // namespace rankc

#endif // RANKC_LIB_TRANSFORMS_GEMMMATCH_H
