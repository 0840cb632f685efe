//===- EqualButName.h - symbols equal but for their names ---*- C++ -*-===//
//
// Programs of repeated work (a chain of the same update, a layer per step of
// a deep network, many short chains alike) are partitioned into thousands of
// parts and outlined into thousands of kernels that differ only in their
// names. Folding each into the first equal one (rankc-fold-equal-functions,
// rankc-gpu-fold-equal-kernels) lowers and compiles each body once; both
// ask the same question, answered here.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_TRANSFORMS_EQUALBUTNAME_H
#define RANKC_TRANSFORMS_EQUALBUTNAME_H

#include "mlir/IR/Operation.h"

namespace rankc {

/// An op's attributes, inherent and discardable, without its symbol name.
mlir::DictionaryAttr attributesButName(mlir::Operation *op);

/// A hash of `op` that equal-but-for-name ops share: its name, attributes
/// but the symbol name, and every nested op's name, attributes and types
/// (not which values they use, nor locations). Linear in the op's size.
llvm::hash_code hashButName(mlir::Operation *op);

/// Whether `a` and `b` are the same op but for their symbol names and
/// locations: attributes, result types and regions (nested ops compared in
/// full, values up to renaming).
bool equalButName(mlir::Operation *a, mlir::Operation *b);

} // namespace rankc

#endif // RANKC_TRANSFORMS_EQUALBUTNAME_H
