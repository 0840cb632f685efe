//===- NarrowOperands.h - a narrow contraction reads its bf16 inputs ------===//
//
// (What and why: NarrowOperands.cpp.)
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_LIB_CODEGEN_CUDA_NARROWOPERANDS_H
#define RANKC_LIB_CODEGEN_CUDA_NARROWOPERANDS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace rankc {

/// `op` (a contraction on tensors whose inputs are widened `narrow`
/// values) reading the narrow values where their widening is its operands'
/// producer (it may be replaced by the op fusion makes).
void readNarrowOperands(mlir::linalg::LinalgOp op, mlir::FloatType narrow,
                        mlir::RewriterBase &rewriter);

} // namespace rankc

#endif // RANKC_LIB_CODEGEN_CUDA_NARROWOPERANDS_H
