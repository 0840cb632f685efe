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
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

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

/// Remembers items (a function, a kernel and its module) in order and
/// finds, for a later one, the first earlier one it equals: compared only
/// with those of the same hash, so a sweep over a module is linear. Both
/// folds keep the first of each set of equal items and redirect the uses
/// of the others to it.
template <typename T>
class FirstEqual {
public:
  /// The first remembered item of `hash` that `equal(kept, item)` accepts;
  /// none (and `item` is remembered) if there is none.
  template <typename Equal>
  std::optional<T> find(llvm::hash_code hash, const T &item, Equal equal) {
    llvm::SmallVector<T, 1> &same = kept[hash];
    for (const T &k : same)
      if (equal(k, item))
        return k;
    same.push_back(item);
    return std::nullopt;
  }

private:
  llvm::DenseMap<llvm::hash_code, llvm::SmallVector<T, 1>> kept;
};

} // namespace rankc

#endif // RANKC_TRANSFORMS_EQUALBUTNAME_H
