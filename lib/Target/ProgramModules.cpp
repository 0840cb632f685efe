//===- ProgramModules.cpp - one program of a partitioned module -----------===//

#include "rankc/Target/ProgramModules.h"
#include "rankc/Dialect/Comm/Comm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;

namespace rankc {

std::vector<std::string> programNames(ModuleOp module) {
  std::vector<std::string> names;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn->hasAttr(comm::CommDialect::kRanks))
      names.push_back(fn.getName().str());
  return names;
}

OwningOpRef<ModuleOp> extractProgram(ModuleOp module, StringRef name) {
  OwningOpRef<ModuleOp> copy = module.clone();
  for (auto fn : llvm::make_early_inc_range(copy->getOps<func::FuncOp>())) {
    bool program = fn->hasAttr(comm::CommDialect::kRanks);
    auto partOf = fn->getAttrOfType<StringAttr>(comm::CommDialect::kPartOf);
    if ((program && fn.getName() != name) ||
        (partOf && partOf.getValue() != name))
      fn.erase();
  }
  return copy;
}

} // namespace rankc
