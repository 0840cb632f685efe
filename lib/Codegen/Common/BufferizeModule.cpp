//===- BufferizeModule.cpp - one-shot module bufferization, linear ---------===//
//
// Upstream's one-shot-bufferize with function boundaries, with upstream's
// analysis of each function body (analyzeOp), copy insertion
// (insertTensorCopies) and bufferization (bufferizeModuleOp); only the
// module driver that runs them (OneShotModuleBufferize.cpp, analyzeModuleOp)
// is rankc's, for two costs that grow faster than the program:
//
// - After analyzing a function, upstream records which of its tensor
//   results alias or are equivalent to which of its tensor arguments by
//   asking for every (result, argument) pair. A data-parallel step's
//   schedule takes every parameter and returns every updated one, and its
//   forward part takes every parameter and returns every activation: at
//   10^5 nodes 5,000 x 5,000 pairs each, two union-find queries a pair,
//   6.7 s of a 27 s build (bench/RESULTS.md). Here each argument's alias
//   class and equivalence class is walked once (applyOnAliases,
//   applyOnEquivalenceClass; classes are disjoint, so every value is
//   visited at most once per function) and each result looked up in them:
//   the same answers (the same maps, in the same order) in time linear in
//   the function.
// - Upstream orders functions callees first by scanning a map of all
//   functions for one with no callee left, once per function (quadratic
//   in the number of parts). Here: callers counted down (Kahn), in the
//   module's order, which also makes the order independent of pointers.
//
// What the analysis records is upstream's FuncAnalysisState, read by the
// func.call model (lib/Registration/CallBufferization.cpp) as upstream's.
// test/Codegen/Common/bufferize-module.mlir checks that the output is
// upstream one-shot-bufferize's, byte for byte.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Bufferize.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotModuleBufferize.h"
#include "mlir/Dialect/Bufferization/Transforms/Transforms.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"

#include <deque>

namespace rankc {
#define GEN_PASS_DEF_RANKCBUFFERIZEMODULE
#include "rankc/Codegen/Common/Passes.h.inc"
} // namespace rankc

using namespace mlir;
using namespace mlir::bufferization;
using func_ext::FuncAnalysisState;
using func_ext::FuncOpAnalysisState;

namespace {

bool hasTensorSignature(func::FuncOp fn) {
  return llvm::any_of(fn.getFunctionType().getInputs(),
                      llvm::IsaPred<TensorType>) ||
         llvm::any_of(fn.getFunctionType().getResults(),
                      llvm::IsaPred<TensorType>);
}

func::FuncOp calleeOf(func::CallOp call, SymbolTableCollection &tables) {
  return tables.lookupNearestSymbolFrom<func::FuncOp>(call,
                                                      call.getCalleeAttr());
}

/// The module's functions, callees before callers (`ordered`), and those
/// on a cycle of calls (`cyclic`), each list in the module's order. As
/// upstream: only callees with tensors in their signature count.
LogicalResult orderByCalls(ModuleOp module, SymbolTableCollection &tables,
                           SmallVectorImpl<func::FuncOp> &ordered,
                           SmallVectorImpl<func::FuncOp> &cyclic) {
  SmallVector<func::FuncOp> all;
  DenseMap<func::FuncOp, unsigned> calleesLeft;
  DenseMap<func::FuncOp, SmallVector<func::FuncOp>> callers;
  WalkResult walked = module.walk([&](func::FuncOp fn) {
    all.push_back(fn);
    unsigned &left = calleesLeft[fn];
    DenseSet<func::FuncOp> seen;
    return fn.walk([&](func::CallOp call) {
      func::FuncOp callee = calleeOf(call, tables);
      if (!callee) {
        call.emitError("callee '")
            << call.getCallee() << "' is not a func.func of the module";
        return WalkResult::interrupt();
      }
      if (hasTensorSignature(callee) && seen.insert(callee).second) {
        ++left;
        callers[callee].push_back(fn);
      }
      return WalkResult::advance();
    });
  });
  if (walked.wasInterrupted())
    return failure();
  std::deque<func::FuncOp> ready;
  for (func::FuncOp fn : all)
    if (calleesLeft[fn] == 0)
      ready.push_back(fn);
  while (!ready.empty()) {
    func::FuncOp fn = ready.front();
    ready.pop_front();
    ordered.push_back(fn);
    for (func::FuncOp caller : callers.lookup(fn))
      if (--calleesLeft[caller] == 0)
        ready.push_back(caller);
  }
  for (func::FuncOp fn : all)
    if (calleesLeft[fn] != 0)
      cyclic.push_back(fn);
  return success();
}

/// A call's results equivalent to its operands where the callee (already
/// analyzed) returns an argument in place: upstream's equivalenceAnalysis.
void joinCallEquivalences(func::FuncOp fn, OneShotAnalysisState &state,
                          FuncAnalysisState &funcState) {
  fn.walk([&](func::CallOp call) {
    func::FuncOp callee = calleeOf(call, funcState.symbolTables);
    auto equivalents = funcState.equivalentFuncArgs.find(callee);
    if (equivalents == funcState.equivalentFuncArgs.end())
      return WalkResult::skip();
    for (auto [resultIdx, argIdx] : equivalents->second) {
      if (!state.isInPlace(call->getOpOperand(argIdx)))
        continue;
      state.unionEquivalenceClasses(call.getResult(resultIdx),
                                    call.getOperand(argIdx));
    }
    return WalkResult::advance();
  });
}

/// The arguments each tensor result may alias and the one it is
/// equivalent to (upstream's aliasingFuncOpBBArgsAnalysis), in time linear
/// in the function: each argument's classes are walked once.
void recordBoundary(func::FuncOp fn, OneShotAnalysisState &state,
                    FuncAnalysisState &funcState) {
  if (fn.getBody().empty()) {
    // No body: every tensor result may alias every tensor argument.
    FunctionType type = fn.getFunctionType();
    for (auto [argIdx, input] : llvm::enumerate(type.getInputs())) {
      if (!isa<TensorType>(input))
        continue;
      for (auto [resultIdx, result] : llvm::enumerate(type.getResults()))
        if (isa<TensorType>(result))
          funcState.aliasingReturnVals[fn][argIdx].push_back(resultIdx);
    }
    return;
  }
  SmallVector<func::ReturnOp> returns;
  for (Block &block : fn.getBody())
    if (auto ret = dyn_cast<func::ReturnOp>(block.getTerminator()))
      returns.push_back(ret);

  // The class of each value in some argument's class; per alias class the
  // arguments in it, per equivalence class the first argument in it.
  DenseMap<Value, unsigned> aliasClass, equivalenceClass;
  SmallVector<SmallVector<int64_t, 1>> argsOfAliasClass;
  SmallVector<int64_t> firstArgOfEquivalenceClass;
  for (BlockArgument arg : fn.getArguments()) {
    if (!isa<RankedTensorType>(arg.getType()))
      continue;
    // (Ids copied out of the maps: the walks insert, which moves entries.)
    auto [alias, newAlias] =
        aliasClass.try_emplace(arg, argsOfAliasClass.size());
    unsigned aliasId = alias->second;
    if (newAlias) {
      argsOfAliasClass.emplace_back();
      state.applyOnAliases(
          arg, [&](Value v) { aliasClass.try_emplace(v, aliasId); });
    }
    argsOfAliasClass[aliasId].push_back(arg.getArgNumber());
    auto [equivalent, newEquivalent] = equivalenceClass.try_emplace(
        arg, firstArgOfEquivalenceClass.size());
    unsigned equivalentId = equivalent->second;
    if (newEquivalent) {
      firstArgOfEquivalenceClass.push_back(arg.getArgNumber());
      state.applyOnEquivalenceClass(arg, [&](Value v) {
        equivalenceClass.try_emplace(v, equivalentId);
      });
    }
  }

  // Aliasing: each argument's results in the order of the returns and
  // their operands, once each (upstream merges the returns the same way).
  DenseMap<int64_t, llvm::SetVector<int64_t>> aliases;
  for (func::ReturnOp ret : returns)
    for (OpOperand &operand : ret->getOpOperands()) {
      if (!isa<RankedTensorType>(operand.get().getType()))
        continue;
      auto it = aliasClass.find(operand.get());
      if (it == aliasClass.end())
        continue;
      for (int64_t argIdx : argsOfAliasClass[it->second])
        aliases[argIdx].insert(operand.getOperandNumber());
    }
  for (BlockArgument arg : fn.getArguments()) {
    auto it = aliases.find(arg.getArgNumber());
    if (it != aliases.end())
      llvm::append_range(funcState.aliasingReturnVals[fn][arg.getArgNumber()],
                         it->second);
  }

  // Equivalence: the first equivalent argument, if every return agrees.
  auto equivalentArg = [&](Value v) -> std::optional<int64_t> {
    if (!isa<TensorType>(v.getType()))
      return std::nullopt;
    auto it = equivalenceClass.find(v);
    if (it == equivalenceClass.end())
      return std::nullopt;
    return firstArgOfEquivalenceClass[it->second];
  };
  for (unsigned i = 0, e = returns.front()->getNumOperands(); i < e; ++i) {
    std::optional<int64_t> argIdx =
        equivalentArg(returns.front()->getOperand(i));
    if (!argIdx)
      continue;
    if (llvm::all_of(ArrayRef(returns).drop_front(), [&](func::ReturnOp r) {
          return equivalentArg(r->getOperand(i)) == argIdx;
        }))
      funcState.equivalentFuncArgs[fn][i] = *argIdx;
  }
}

/// Which tensor arguments the function reads and writes (upstream's
/// funcOpBbArgReadWriteAnalysis): declared by `bufferization.access`, all
/// of them without a body, else analyzed.
void recordArgumentAccess(func::FuncOp fn, OneShotAnalysisState &state,
                          FuncAnalysisState &funcState) {
  FunctionType type = fn.getFunctionType();
  for (int64_t idx = 0, e = type.getNumInputs(); idx < e; ++idx) {
    if (!isa<TensorType>(type.getInput(idx)))
      continue;
    bool isRead, isWritten;
    if (auto access = fn.getArgAttrOfType<StringAttr>(
            idx, BufferizationDialect::kBufferAccessAttrName)) {
      isRead = access == "read" || access == "read-write";
      isWritten = access == "write" || access == "read-write";
    } else if (fn.getBody().empty()) {
      isRead = isWritten = true;
    } else {
      isRead = state.isValueRead(fn.getArgument(idx));
      isWritten = state.isValueWritten(fn.getArgument(idx));
    }
    if (isRead)
      funcState.readBbArgs[fn].insert(idx);
    if (isWritten)
      funcState.writtenBbArgs[fn].insert(idx);
  }
}

/// Upstream's analyzeModuleOp with the two linear pieces above.
LogicalResult analyzeModule(ModuleOp module, OneShotAnalysisState &state,
                            BufferizationStatistics *statistics) {
  FuncAnalysisState *funcState = state.getExtension<FuncAnalysisState>();
  if (!funcState)
    funcState = &state.addExtension<FuncAnalysisState>();
  SmallVector<func::FuncOp> ordered, cyclic;
  if (failed(orderByCalls(module, funcState->symbolTables, ordered, cyclic)))
    return failure();
  for (func::FuncOp fn : ordered) {
    if (!state.getOptions().isOpAllowed(fn))
      continue;
    funcState->startFunctionAnalysis(fn);
    joinCallEquivalences(fn, state, *funcState);
    if (failed(analyzeOp(fn, state, statistics)))
      return failure();
    recordBoundary(fn, state, *funcState);
    recordArgumentAccess(fn, state, *funcState);
    funcState->analyzedFuncOps[fn] = FuncOpAnalysisState::Analyzed;
  }
  // Functions on a cycle of calls: their bodies, not their boundaries (the
  // func.call model assumes the worst of an unanalyzed callee).
  for (func::FuncOp fn : cyclic) {
    if (!state.getOptions().isOpAllowed(fn))
      continue;
    joinCallEquivalences(fn, state, *funcState);
    if (failed(analyzeOp(fn, state, statistics)))
      return failure();
  }
  return success();
}

struct RankcBufferizeModule
    : rankc::impl::RankcBufferizeModuleBase<RankcBufferizeModule> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // What one-shot-bufferize{bufferize-function-boundaries
    // function-boundary-type-conversion=identity-layout-map} builds from
    // its pass options (the defaults otherwise).
    OneShotBufferizationOptions options;
    options.bufferizeFunctionBoundaries = true;
    options.setFunctionBoundaryTypeConversion(
        LayoutMapOption::IdentityLayoutMap);
    options.bufferAlignment = alignment;
    options.unknownTypeConverterFn = [](TensorType type, Attribute space,
                                        const BufferizationOptions &) {
      return getMemRefTypeWithFullyDynamicLayout(type, space);
    };

    BufferizationState bufferization;
    OneShotAnalysisState analysis(module, options);
    if (failed(analyzeModule(module, analysis, /*statistics=*/nullptr)) ||
        failed(insertTensorCopies(module, analysis, bufferization)) ||
        failed(bufferizeModuleOp(module, options, bufferization)))
      signalPassFailure();
  }
};

} // namespace
