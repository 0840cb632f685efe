//===- ProgramModules.cpp - one program of a partitioned module -----------===//

#include "rankc/Target/ProgramModules.h"
#include "rankc/Dialect/Comm/Comm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

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
        (partOf && partOf.getValue() != name) ||
        fn->hasAttr(comm::CommDialect::kMicroStepOf))
      fn.erase();
  }
  return copy;
}

OwningOpRef<ModuleOp> extractMicroStep(ModuleOp module, StringRef name) {
  Attribute ranks;
  std::string micro;
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (fn->hasAttr(comm::CommDialect::kRanks) && fn.getName() == name)
      ranks = fn->getAttr(comm::CommDialect::kRanks);
    auto of = fn->getAttrOfType<StringAttr>(comm::CommDialect::kMicroStepOf);
    if (of && of.getValue() == name)
      micro = fn.getName().str();
  }
  if (micro.empty() || !ranks)
    return {};
  OwningOpRef<ModuleOp> copy = module.clone();
  for (auto fn : llvm::make_early_inc_range(copy->getOps<func::FuncOp>())) {
    auto partOf = fn->getAttrOfType<StringAttr>(comm::CommDialect::kPartOf);
    bool keep = partOf ? partOf.getValue() == micro : fn.getName() == micro;
    if (!keep && (partOf || fn->hasAttr(comm::CommDialect::kRanks) ||
                  fn->hasAttr(comm::CommDialect::kMicroStepOf)))
      fn.erase();
    else if (fn.getName() == micro) {
      // A program from here on: the lowering builds its entry and manifest.
      fn->removeAttr(comm::CommDialect::kMicroStepOf);
      fn->setAttr(comm::CommDialect::kRanks, ranks);
    }
  }
  return copy;
}

void prefixMicroStepSymbols(ModuleOp lowered) {
  llvm::StringMap<StringAttr> renamed;
  MLIRContext *ctx = lowered.getContext();
  for (Operation &op : lowered.getBody()->getOperations()) {
    auto symbol = dyn_cast<SymbolOpInterface>(&op);
    if (!symbol || symbol.isDeclaration())
      continue;
    if (auto fn = dyn_cast<LLVM::LLVMFuncOp>(&op); fn && fn.isExternal())
      continue; // (LLVM's functions do not say so through the interface)
    if (auto global = dyn_cast<LLVM::GlobalOp>(&op))
      if (!global.getValueOrNull() && global.getInitializerRegion().empty())
        continue; // defined elsewhere
    StringRef name = symbol.getName();
    std::string to = name == "rankc_entry"      ? "rankc_micro_entry"
                     : name == "rankc_manifest" ? "rankc_micro_manifest"
                                                : ("rankc_micro." + name).str();
    renamed[name] = StringAttr::get(ctx, to);
  }
  AttrTypeReplacer replacer;
  replacer.addReplacement([&](SymbolRefAttr ref) -> std::optional<Attribute> {
    auto it = renamed.find(ref.getRootReference().getValue());
    if (it == renamed.end())
      return std::nullopt;
    if (auto flat = dyn_cast<FlatSymbolRefAttr>(ref))
      return FlatSymbolRefAttr::get(it->second);
    return SymbolRefAttr::get(it->second, ref.getNestedReferences());
  });
  lowered.getBody()->walk([&](Operation *op) {
    replacer.replaceElementsIn(op, /*replaceAttrs=*/true, /*replaceLocs=*/false,
                               /*replaceTypes=*/false);
  });
  for (Operation &op : lowered.getBody()->getOperations())
    if (auto symbol = dyn_cast<SymbolOpInterface>(&op)) {
      auto it = renamed.find(symbol.getName());
      if (it != renamed.end())
        SymbolTable::setSymbolName(&op, it->second);
    }
}

} // namespace rankc
