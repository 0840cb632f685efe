//===- TensorBuilders.h - building blocks of the importer -------*- C++ -*-===//
//
// Private to lib/Frontend: how each DAG op becomes upstream tensor, linalg,
// arith and math IR. Scalar helpers build the bodies of linalg ops; tensor
// helpers build whole ops. All shapes are static (the checker inferred them).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_LIB_FRONTEND_TENSORBUILDERS_H
#define RANKC_LIB_FRONTEND_TENSORBUILDERS_H

#include "rankc/Frontend/Dag.h"
#include "rankc/Support/IndexChecks.h"

#include "llvm/ADT/ArrayRef.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace rankc::dag {

mlir::Type elementType(mlir::MLIRContext *ctx, DType t);
mlir::RankedTensorType tensorType(mlir::MLIRContext *ctx,
                                  llvm::ArrayRef<int64_t> shape, DType t);

// Scalars (inside linalg bodies).
mlir::Value castScalar(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                       DType from, DType to);
mlir::Value unaryScalar(mlir::OpBuilder &b, mlir::Location loc, Op op, DType t,
                        mlir::Value x);
mlir::Value binaryScalar(mlir::OpBuilder &b, mlir::Location loc, Op op,
                         DType t, mlir::Value x, mlir::Value y);
mlir::Value constantScalar(mlir::OpBuilder &b, mlir::Location loc, DType t,
                           double value);
/// NumPy's remainder (the divisor's sign); an integer divisor of 0 gives 0
/// here (checkNonzeroDivisor ends the run first).
mlir::Value remScalar(mlir::OpBuilder &b, mlir::Location loc, DType t,
                      mlir::Value x, mlir::Value y);
/// `value` of an integer `type`, truncated to its width (u8 255 -> 0xff).
mlir::IntegerAttr integerAttr(mlir::Type type, int64_t value);

// Tensors.
using ScalarBody = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// A linalg.generic over `shape` whose inputs broadcast NumPy-style.
mlir::Value buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::ValueRange inputs,
                             llvm::ArrayRef<int64_t> shape, DType out,
                             ScalarBody body);

/// One element of a constant (or a receive's fill) as an attribute of `t`.
mlir::Attribute scalarAttr(mlir::Builder &b, DType t, const Scalar &s);
mlir::Value buildConstant(mlir::OpBuilder &b, mlir::Location loc,
                          const Node &n);
/// comm.allreduce of `x` (unsigned max/min through the signed ones).
mlir::Value buildAllReduce(mlir::OpBuilder &b, mlir::Location loc,
                           const Node &n, mlir::Value x, mlir::Attribute tag);
mlir::Value buildIota(mlir::OpBuilder &b, mlir::Location loc, const Node &n);
mlir::Value buildReduction(mlir::OpBuilder &b, mlir::Location loc,
                           const Node &n, mlir::Value in, DType inType,
                           llvm::ArrayRef<int64_t> inShape);
mlir::Value buildEinsum(mlir::OpBuilder &b, mlir::Location loc,
                        const Node &n, mlir::ValueRange inputs,
                        llvm::ArrayRef<std::string> terms,
                        const std::string &output);
/// Builds `n` with `build`, for f16/bf16 in f32 (operands cast up, the
/// result rounded once: dag-format.md v3's mixed-precision rule).
mlir::Value inWideFloat(
    mlir::OpBuilder &b, mlir::Location loc, const Node &n,
    mlir::ValueRange args,
    llvm::function_ref<mlir::Value(const Node &, mlir::ValueRange)> build);
mlir::Value buildMatmul(mlir::OpBuilder &b, mlir::Location loc,
                        const Node &n, mlir::Value lhs, mlir::Value rhs);
mlir::Value buildReshape(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value in, llvm::ArrayRef<int64_t> shape);

// Indexing (IndexingBuilders.cpp).
// (The runtime's function that ends a run on an index out of range:
// kIndexErrorFunction, rankc/Support/IndexChecks.h.)
/// The program function's list of checked nodes (check number -> node id).
constexpr llvm::StringLiteral kIndexChecks = "rankc.index_checks";
void declareIndexError(mlir::OpBuilder &b, mlir::ModuleOp module);
/// A check's entry for an integer `rem` (the runtime's message differs):
/// "<node id> rem" in kIndexChecks.
constexpr llvm::StringLiteral kRemCheckSuffix = " rem";
/// `check` < 0: the indices are known to be in range (no check).
mlir::Value buildTake(mlir::OpBuilder &b, mlir::Location loc, const Node &n,
                      mlir::Value x, mlir::Value indices, DType indexType,
                      llvm::ArrayRef<int64_t> xShape, int32_t check);
mlir::Value buildScatterAdd(mlir::OpBuilder &b, mlir::Location loc,
                            const Node &n, mlir::Value base,
                            mlir::Value indices, DType indexType,
                            mlir::Value updates, int32_t check);
/// Ends the run (check `check`) when an integer `divisor` is 0.
void checkNonzeroDivisor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value divisor, int32_t check);

// Convolution and pooling (WindowBuilders.cpp).
mlir::Value buildConv(mlir::OpBuilder &b, mlir::Location loc, const Node &n,
                      mlir::Value x, mlir::Value w,
                      llvm::ArrayRef<int64_t> xShape,
                      llvm::ArrayRef<int64_t> wShape);
mlir::Value buildPool(mlir::OpBuilder &b, mlir::Location loc, const Node &n,
                      mlir::Value x, llvm::ArrayRef<int64_t> xShape,
                      DType xType);

} // namespace rankc::dag

#endif // RANKC_LIB_FRONTEND_TENSORBUILDERS_H
