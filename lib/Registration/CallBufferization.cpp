//===- CallBufferization.cpp - func.call bufferization, callees cached ----===//
//
// Why rankc has its own BufferizableOpInterface model for func.call: a
// partitioned program is a schedule that calls its parts, a thousand calls
// of ten to twenty tensor results each per 50,000 nodes. Upstream's model
// (FuncBufferizableOpInterfaceImpl.cpp, "TODO Avoid recomputing the symbol
// tables every time") builds a new SymbolTableCollection, that is a table of
// every symbol in the module, in getBufferType, which bufferizing a call asks
// once per tensor result: one-shot-bufferize was quadratic in the number of
// parts (0.13 s at 30,000 nodes a program, 0.92 s at 100,000).
//
// This model means the same as upstream's, with every callee looked up in a
// cached table: the analysis's (FuncAnalysisState::symbolTables, as upstream
// does for the analysis) or the bufferization's
// (BufferizationState::getSymbolTables, as upstream does in bufferize). It
// is attached before upstream's extensions, and an op keeps the first model
// attached for an interface (mlir::detail::InterfaceMap::insert).
//
//===----------------------------------------------------------------------===//

#include "rankc/InitAll.h"

#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::bufferization;
using func_ext::FuncAnalysisState;
using func_ext::FuncOpAnalysisState;

namespace {

func::FuncOp lookupCallee(func::CallOp call, SymbolTableCollection &tables) {
  return tables.lookupNearestSymbolFrom<func::FuncOp>(call,
                                                      call.getCalleeAttr());
}

/// The function-boundary analysis's results, when the analysis is One-Shot
/// module analysis (the only one that records them).
const FuncAnalysisState *getFuncState(const AnalysisState &state) {
  auto *oneShot = dyn_cast<OneShotAnalysisState>(&state);
  return oneShot ? oneShot->getExtension<FuncAnalysisState>() : nullptr;
}

/// The callee, if the analysis has finished with it; null otherwise, and the
/// caller then assumes the worst, as upstream does.
func::FuncOp getAnalyzedCallee(func::CallOp call,
                               const FuncAnalysisState *funcState) {
  if (!funcState)
    return nullptr;
  func::FuncOp callee = lookupCallee(call, funcState->symbolTables);
  if (!callee || funcState->analyzedFuncOps.lookup(callee) !=
                     FuncOpAnalysisState::Analyzed)
    return nullptr;
  return callee;
}

struct CallOpModel
    : public BufferizableOpInterface::ExternalModel<CallOpModel,
                                                    func::CallOp> {
  bool bufferizesToMemoryRead(Operation *op, OpOperand &operand,
                              const AnalysisState &state) const {
    const FuncAnalysisState *funcState = getFuncState(state);
    func::FuncOp callee = getAnalyzedCallee(cast<func::CallOp>(op), funcState);
    return !callee || funcState->readBbArgs.lookup(callee).contains(
                          operand.getOperandNumber());
  }

  bool bufferizesToMemoryWrite(Operation *op, OpOperand &operand,
                               const AnalysisState &state) const {
    const FuncAnalysisState *funcState = getFuncState(state);
    func::FuncOp callee = getAnalyzedCallee(cast<func::CallOp>(op), funcState);
    return !callee || funcState->writtenBbArgs.lookup(callee).contains(
                          operand.getOperandNumber());
  }

  AliasingValueList getAliasingValues(Operation *op, OpOperand &operand,
                                      const AnalysisState &state) const {
    const FuncAnalysisState *funcState = getFuncState(state);
    func::FuncOp callee = getAnalyzedCallee(cast<func::CallOp>(op), funcState);
    if (!callee)
      return bufferization::detail::unknownGetAliasingValues(operand);
    int64_t argIndex = operand.getOperandNumber();
    SmallVector<int64_t> results =
        funcState->aliasingReturnVals.lookup(callee).lookup(argIndex);
    // A result is the argument's very buffer only when it is its one alias
    // and the callee returns that argument (equivalentFuncArgs).
    bool equivalent = false;
    if (results.size() == 1) {
      auto equivalents = funcState->equivalentFuncArgs.find(callee);
      if (equivalents != funcState->equivalentFuncArgs.end()) {
        auto arg = equivalents->second.find(results.front());
        equivalent = arg != equivalents->second.end() &&
                     arg->second == argIndex;
      }
    }
    AliasingValueList aliases;
    for (int64_t result : results)
      aliases.addAlias({op->getResult(result),
                        equivalent ? BufferRelation::Equivalent
                                   : BufferRelation::Unknown,
                        /*isDefinite=*/equivalent});
    return aliases;
  }

  /// The arguments a result may alias, from the callee's analysis: only the
  /// arguments that alias some result are visited. Upstream leaves this to
  /// the interface's default, which asks getAliasingValues of every operand:
  /// a part of 5,000 arguments and 5,000 results (the forward of a deep
  /// network, every activation kept for the backward) made each query over
  /// its results cost 5,000, and one-shot's analysis quadratic in the part's
  /// signature (32 s of a 10^5-node step's build).
  AliasingOpOperandList getAliasingOpOperands(Operation *op, Value value,
                                              const AnalysisState &state) const {
    const FuncAnalysisState *funcState = getFuncState(state);
    func::FuncOp callee = getAnalyzedCallee(cast<func::CallOp>(op), funcState);
    if (!callee)
      return bufferization::detail::unknownGetAliasingOpOperands(value);
    int64_t resultIndex = cast<OpResult>(value).getResultNumber();
    auto aliasing = funcState->aliasingReturnVals.find(callee);
    if (aliasing == funcState->aliasingReturnVals.end())
      return {};
    // Operand order, as the default gives them (the map's order is not).
    SmallVector<int64_t> args;
    for (const auto &[argIndex, results] : aliasing->second)
      if (llvm::is_contained(results, resultIndex))
        args.push_back(argIndex);
    llvm::sort(args);
    AliasingOpOperandList aliases;
    for (int64_t argIndex : args) {
      OpOperand &operand = op->getOpOperand(argIndex);
      // The same relation getAliasingValues gives the pair.
      for (const AliasingValue &alias : getAliasingValues(op, operand, state))
        if (alias.value == value)
          aliases.addAlias({&operand, alias.relation, alias.isDefinite});
    }
    return aliases;
  }

  FailureOr<BufferLikeType>
  getBufferType(Operation *op, Value value, const BufferizationOptions &options,
                const BufferizationState &state,
                SmallVector<Value> &invocationStack) const {
    auto call = cast<func::CallOp>(op);
    // The cache is not part of the state's meaning; FuncAnalysisState keeps
    // its own as `mutable` for the same reason.
    func::FuncOp callee = lookupCallee(
        call, const_cast<BufferizationState &>(state).getSymbolTables());
    if (!callee)
      return call.emitError("cannot bufferize a call of ")
             << call.getCalleeAttr() << ": it is not a func.func";
    Type resultType = callee.getFunctionType().getResult(
        cast<OpResult>(value).getResultNumber());
    // Callees are bufferized before their callers, so their signature has
    // the type; a callee not yet bufferized (a cycle of calls) gets the one
    // its signature will have.
    if (auto buffer = dyn_cast<BaseMemRefType>(resultType))
      return cast<BufferLikeType>(buffer);
    auto tensorType = cast<TensorType>(resultType);
    return options.functionArgTypeConverterFn(
        cast<TensorLikeType>(tensorType),
        *options.defaultMemorySpaceFn(tensorType), callee, options);
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto call = cast<func::CallOp>(op);
    func::FuncOp callee = lookupCallee(call, state.getSymbolTables());
    if (!callee)
      return call.emitError("cannot bufferize a call of ")
             << call.getCalleeAttr() << ": it is not a func.func";

    SmallVector<Type> resultTypes;
    for (Value result : call.getResults()) {
      if (!isa<TensorType>(result.getType())) {
        resultTypes.push_back(result.getType());
        continue;
      }
      FailureOr<BufferLikeType> type =
          bufferization::getBufferType(result, options, state);
      if (failed(type))
        return failure();
      resultTypes.push_back(*type);
    }

    // Operands: the buffers of tensors, cast (or copied) to the callee's
    // argument types where bufferization gave them another layout.
    SmallVector<Value> operands;
    for (OpOperand &operand : call->getOpOperands()) {
      if (!isa<TensorType>(operand.get().getType())) {
        operands.push_back(operand.get());
        continue;
      }
      FailureOr<Value> buffer = getBuffer(rewriter, operand.get(), options,
                                          state);
      if (failed(buffer))
        return failure();
      Type argType =
          callee.getFunctionType().getInput(operand.getOperandNumber());
      if (!isa<BaseMemRefType>(argType)) {
        FailureOr<BufferLikeType> type = bufferization::getBufferType(
            callee.getArgument(operand.getOperandNumber()), options, state);
        if (failed(type))
          return failure();
        argType = *type;
      }
      Value value = *buffer;
      if (value.getType() != argType) {
        auto memrefType = dyn_cast<MemRefType>(argType);
        if (!memrefType)
          return call.emitError("cannot pass an unranked buffer to ")
                 << call.getCalleeAttr();
        FailureOr<Value> cast = castOrReallocMemRefValue(rewriter, value,
                                                         memrefType, options);
        if (failed(cast))
          return failure();
        value = *cast;
      }
      operands.push_back(value);
    }

    auto bufferized = func::CallOp::create(rewriter, call.getLoc(),
                                           callee.getSymName(), resultTypes,
                                           operands);
    bufferized->setAttrs(call->getAttrs());
    replaceOpWithBufferizedValues(rewriter, call, bufferized->getResults());
    return success();
  }
};

} // namespace

void rankc::registerCallBufferization(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, func::FuncDialect *) {
    func::CallOp::attachInterface<CallOpModel>(*context);
  });
}
