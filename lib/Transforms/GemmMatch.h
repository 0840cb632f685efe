//===- GemmMatch.h - which contractions are one cuBLASLt GEMM --*- C++ -*-===//

#ifndef RANKC_LIB_TRANSFORMS_GEMMMATCH_H
#define RANKC_LIB_TRANSFORMS_GEMMMATCH_H

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
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

/// The runtime's dtype code of f32 / f64 (rankc_runtime.h), or -1.
int gemmDType(mlir::Type t);

/// `op` (on tensors, or on buffers of identity layout) as a GEMM of f32 or
/// f64 with static shapes, or failure. With `anyLayout`, buffers may be
/// strided views (which the caller copies to identity-layout buffers).
mlir::FailureOr<Gemm> asGemm(mlir::linalg::LinalgOp op, bool anyLayout = false);

} // namespace rankc

#endif // RANKC_LIB_TRANSFORMS_GEMMMATCH_H
