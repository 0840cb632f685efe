//===- EqualButName.cpp - symbols equal but for their names ---------------===//

#include "rankc/Transforms/EqualButName.h"

#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace rankc {

namespace {
constexpr auto kFlags = OperationEquivalence::IgnoreLocations;
} // namespace

DictionaryAttr attributesButName(Operation *op) {
  NamedAttrList attrs(op->getAttrDictionary());
  attrs.erase(SymbolTable::getSymbolAttrName());
  return attrs.getDictionary(op->getContext());
}

llvm::hash_code hashButName(Operation *op) {
  llvm::hash_code h = llvm::hash_combine(op->getName(), attributesButName(op),
                                         op->getResultTypes());
  for (Region &region : op->getRegions())
    region.walk([&](Operation *nested) {
      h = llvm::hash_combine(
          h, OperationEquivalence::computeHash(
                 nested, OperationEquivalence::ignoreHashValue,
                 OperationEquivalence::ignoreHashValue, kFlags));
    });
  return h;
}

bool equalButName(Operation *a, Operation *b) {
  if (a->getName() != b->getName() ||
      a->getNumRegions() != b->getNumRegions() ||
      a->getResultTypes() != b->getResultTypes() ||
      attributesButName(a) != attributesButName(b))
    return false;
  for (auto [ra, rb] : llvm::zip_equal(a->getRegions(), b->getRegions()))
    if (!OperationEquivalence::isRegionEquivalentTo(&ra, &rb, kFlags))
      return false;
  return true;
}

} // namespace rankc
