//===- InitAll.cpp - everything a rankc tool registers --------------------===//

#include "rankc/InitAll.h"
#include "rankc/Dialect/Comm/Comm.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

void rankc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<comm::CommDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                  mlir::math::MathDialect, mlir::tensor::TensorDialect>();
}
