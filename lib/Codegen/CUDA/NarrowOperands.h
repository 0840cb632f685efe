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

/// Whether the float constant `a` converts to `narrow` without loss.
bool exactIn(mlir::Attribute a, mlir::FloatType narrow);

/// Whether the scalar `y` that `g`'s body yields is exactly a value of
/// `narrow` moved unchanged: widened from it, an element of one of `g`'s
/// operands or extracted from a tensor defined outside `g` that
/// `fromTensor(tensor, depth)` accepts (a copy, gather or im2col), an exact
/// constant, or a select between such values (a constant pad as
/// rankc-gpu-pads-as-generics writes it: inside, the source's element;
/// outside, the pad value). Each select is one level deeper; past
/// `maxDepth`, no.
bool yieldsNarrowFrom(mlir::linalg::GenericOp g, mlir::Value y,
                      mlir::FloatType narrow, int depth, int maxDepth,
                      llvm::function_ref<bool(mlir::Value, int)> fromTensor);

/// Narrow copies of f32 tensors whose elements are exactly `narrow` values
/// and that are made from narrow values by moving elements only: reshapes
/// and all-parallel generics that yield an input's element, an element
/// extracted from a tensor, an exact constant or a select between such
/// (im2col's copy of a convolution's windows; a constant pad as
/// rankc-gpu-pads-as-generics writes it). Each is built once, however many
/// contractions read it.
class NarrowCopies {
public:
  explicit NarrowCopies(mlir::FloatType narrow) : narrow(narrow) {}
  /// Whether `v` has such a narrow copy.
  bool available(mlir::Value v, int depth = 0);
  /// That copy (`available(v)` must hold), built after `v`'s producers.
  mlir::Value build(mlir::Value v, mlir::RewriterBase &rewriter);
  mlir::FloatType type() const { return narrow; }

private:
  mlir::Value buildGeneric(mlir::linalg::GenericOp g,
                           mlir::RewriterBase &rewriter);
  mlir::FloatType narrow;
  llvm::DenseMap<mlir::Value, mlir::Value> built;
};

/// `op` (a contraction on tensors whose inputs are widened `narrow`
/// values) reading the narrow values where their widening is its operands'
/// producer or they have narrow copies (it may be replaced by the op
/// fusion makes).
void readNarrowOperands(mlir::linalg::LinalgOp op, NarrowCopies &copies,
                        mlir::RewriterBase &rewriter);

/// The generic inputs that read `v`, directly or through expand_shape /
/// collapse_shape (in `reshapes`, each before those that reshape it), if
/// `accepts` takes each of them; false if any other use reads it.
bool readersThroughReshapes(
    mlir::Value v, llvm::function_ref<bool(mlir::OpOperand &)> accepts,
    llvm::SmallVectorImpl<mlir::OpOperand *> &readers,
    llvm::SmallVectorImpl<mlir::Operation *> &reshapes);

/// Gives `reshapes` (readersThroughReshapes' list) results of element type
/// `narrow`, once their source has it.
void narrowReshapes(llvm::ArrayRef<mlir::Operation *> reshapes,
                    mlir::Type narrow);

/// Replaces each generic under `root` that copies its inputs unchanged
/// (upstream's canonicalization of identity generics), and each result that
/// is an input copied unchanged, by those inputs: what is left of an op
/// that only rounded or widened a value once the value is stored narrow
/// (rankc-gpu-round-gemm-results, -narrow-storage).
mlir::LogicalResult eraseIdentityCopies(mlir::Operation *root);

} // namespace rankc

#endif // RANKC_LIB_CODEGEN_CUDA_NARROWOPERANDS_H
