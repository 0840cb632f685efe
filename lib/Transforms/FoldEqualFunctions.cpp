//===- FoldEqualFunctions.cpp - one function per distinct body ------------===//
//
// Partitioning cuts a program of repeated work into thousands of parts
// that differ only in their names: the 10^4-node `wide` document of
// bench/compile_scaling.sh has 2,500 parts of 2 bodies, one per chain. Every
// later pass (fusion, bufferization, lowering, LLVM's code generation, the
// CUDA kernels' serialization) then did the same work thousands of times.
// A private function equal to an earlier one but for its name is erased
// and its calls go to the earlier one: each distinct part is compiled once.
//
// Which part runs is still told by the call, not the callee: the trace's
// part numbers (rankc_rt_part_begin/_end) are made per call before this
// pass, and every later pass that changes a part's signature
// (rankc-part-out-params, rankc-plan-buffers, rankc-arguments-through-
// memory) rewrites all its calls.
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/EqualButName.h"
#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCFOLDEQUALFUNCTIONS
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

struct FoldEqualFunctionsPass
    : public rankc::impl::RankcFoldEqualFunctionsBase<FoldEqualFunctionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // Functions used other than as a func.call's callee (an address taken,
    // a name the runtime looks up) keep their identity.
    DenseSet<StringAttr> pinned;
    std::optional<SymbolTable::UseRange> uses =
        SymbolTable::getSymbolUses(module);
    if (!uses)
      return;
    for (const SymbolTable::SymbolUse &use : *uses)
      if (!isa<func::CallOp>(use.getUser()))
        pinned.insert(use.getSymbolRef().getRootReference());

    rankc::FirstEqual<func::FuncOp> kept;
    // Folded function -> the function its calls go to.
    DenseMap<StringAttr, FlatSymbolRefAttr> folded;
    SmallVector<func::FuncOp> erased;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (!fn.isPrivate() || fn.isDeclaration() ||
          pinned.contains(fn.getSymNameAttr()))
        continue;
      std::optional<func::FuncOp> equal =
          kept.find(rankc::hashButName(fn), fn, [](func::FuncOp a, func::FuncOp b) {
            return rankc::equalButName(a, b);
          });
      if (!equal)
        continue;
      folded[fn.getSymNameAttr()] = FlatSymbolRefAttr::get(*equal);
      erased.push_back(fn);
    }
    if (folded.empty())
      return;
    module.walk([&](func::CallOp call) {
      auto it = folded.find(call.getCalleeAttr().getAttr());
      if (it != folded.end())
        call.setCalleeAttr(it->second);
    });
    for (func::FuncOp fn : erased)
      fn.erase();
  }
};

} // namespace
