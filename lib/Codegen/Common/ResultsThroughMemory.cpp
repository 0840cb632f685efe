//===- ResultsThroughMemory.cpp - many results written, not returned ------===//
//
// A program of many outputs is a function of many results: func-to-llvm
// packs them into one struct, which the x86-64 convention returns through
// a hidden pointer. SelectionDAG then lowers the call to one node merging
// every scalar of every descriptor, replaced use by use (visitMERGE_VALUES,
// each replacement re-hashing the node's operands): 625 outputs are 3,125
// scalars, and time quadratic in them (1.3 s of -O0 code generation of a
// 5,000-node program, 40% of its build). Here the callee stores each field
// of what it returns into a struct its caller owns, and the caller loads a
// field right where it reads it: no aggregate crosses the call, and no
// block holds more loads of the struct than it reads fields.
//
// (Pass description: include/rankc/Codegen/Common/Passes.td.)
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/Common/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCRESULTSTHROUGHMEMORY
#include "rankc/Codegen/Common/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Field `i` of the aggregate `agg`, read off the chain of insertvalue ops
/// that built it where it can be (the usual case: func-to-llvm builds a
/// function's result struct field by field right before the return), so
/// that the chain dies; else an extractvalue.
Value fieldOf(OpBuilder &b, Location loc, Value agg, int64_t i) {
  Value at = agg;
  while (auto insert = at.getDefiningOp<LLVM::InsertValueOp>()) {
    ArrayRef<int64_t> pos = insert.getPosition();
    if (pos.size() == 1 && pos[0] == i)
      return insert.getValue();
    if (pos[0] == i)
      break; // (a part of the field: read the field whole)
    at = insert.getContainer();
  }
  return LLVM::ExtractValueOp::create(b, loc, agg, ArrayRef<int64_t>{i});
}

/// Erases the ops of an insertvalue chain nothing reads any more.
void eraseDeadChain(Value agg) {
  while (auto insert = agg.getDefiningOp<LLVM::InsertValueOp>()) {
    if (!insert->use_empty())
      return;
    agg = insert.getContainer();
    insert.erase();
  }
  if (Operation *def = agg.getDefiningOp())
    if (def->use_empty() && isa<LLVM::UndefOp, LLVM::PoisonOp>(def))
      def->erase();
}

/// The calls of `fn` in `module`, if every use of its name is a plain
/// direct call (no address taken, no bundles or attributes of arguments
/// or results to carry over).
std::optional<SmallVector<LLVM::CallOp>> plainCalls(LLVM::LLVMFuncOp fn,
                                                    ModuleOp module) {
  SmallVector<LLVM::CallOp> calls;
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(fn, module);
  if (!uses)
    return std::nullopt;
  for (const SymbolTable::SymbolUse &use : *uses) {
    auto call = dyn_cast<LLVM::CallOp>(use.getUser());
    if (!call || call.getCallee() != fn.getSymName() ||
        !call.getOpBundleOperands().empty() || call.getArgAttrs() ||
        call.getResAttrs() || call.getVarCalleeType())
      return std::nullopt;
    calls.push_back(call);
  }
  // (One called from nowhere here is an entry point: its ABI is not ours.)
  if (calls.empty())
    return std::nullopt;
  return calls;
}

/// `fn` takes a pointer to a struct of its former result type first and
/// writes its result there, field by field, instead of returning it.
void writeResultsThrough(LLVM::LLVMFuncOp fn, LLVM::LLVMStructType result) {
  MLIRContext *ctx = fn.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  LLVM::LLVMFunctionType type = fn.getFunctionType();
  SmallVector<Type> params{ptr};
  llvm::append_range(params, type.getParams());
  fn.setFunctionType(LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(ctx), params, type.isVarArg()));
  if (ArrayAttr args = fn.getArgAttrsAttr()) {
    SmallVector<Attribute> shifted{DictionaryAttr::get(ctx)};
    llvm::append_range(shifted, args.getValue());
    fn.setArgAttrsAttr(ArrayAttr::get(ctx, shifted));
  }
  fn.removeResAttrsAttr();
  Value out = fn.getBody().front().insertArgument(0u, ptr, fn.getLoc());

  SmallVector<LLVM::ReturnOp> returns;
  fn.walk([&](LLVM::ReturnOp r) { returns.push_back(r); });
  OpBuilder b(ctx);
  for (LLVM::ReturnOp r : returns) {
    Value agg = r.getArg();
    b.setInsertionPoint(r);
    for (int64_t i = 0, e = result.getBody().size(); i < e; ++i) {
      Value field = fieldOf(b, r.getLoc(), agg, i);
      Value slot = LLVM::GEPOp::create(b, r.getLoc(), ptr, result, out,
                                       ArrayRef<LLVM::GEPArg>{0, int32_t(i)});
      LLVM::StoreOp::create(b, r.getLoc(), field, slot);
    }
    LLVM::ReturnOp::create(b, r.getLoc(), ValueRange());
    r.erase();
    eraseDeadChain(agg);
  }
}

/// Replaces the reads of `value`, the part at `path` of the result that
/// the call wrote to `out`, by loads: through extractvalue ops (func-to-llvm
/// extracts every result right after the call, and each descriptor's
/// fields again where it uses them) down to each reader, loading the part
/// it reads right before it. Only within the call's block, where nothing
/// runs the call again before the reader; a reader elsewhere gets its load
/// right after the call.
void loadWhereRead(Value value, SmallVector<LLVM::GEPArg> path,
                   LLVM::CallOp call, Value out, LLVM::LLVMStructType result) {
  OpBuilder b(call.getContext());
  Location loc = call.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(call.getContext());
  for (OpOperand &use : llvm::make_early_inc_range(value.getUses())) {
    Operation *reader = use.getOwner();
    bool here = reader->getBlock() == call->getBlock();
    if (auto extract = dyn_cast<LLVM::ExtractValueOp>(reader); extract && here) {
      SmallVector<LLVM::GEPArg> deeper = path;
      for (int64_t p : extract.getPosition())
        deeper.push_back(int32_t(p));
      loadWhereRead(extract.getResult(), deeper, call, out, result);
      extract.erase();
      continue;
    }
    if (here)
      b.setInsertionPoint(reader);
    else
      b.setInsertionPointAfter(call);
    Value slot = LLVM::GEPOp::create(b, loc, ptr, result, out, path);
    use.set(LLVM::LoadOp::create(b, loc, value.getType(), slot));
  }
}

/// The call passes a struct on its caller's stack (an alloca of the entry
/// block: a static slot), and what read its result reads memory.
void rewriteCall(LLVM::CallOp call, LLVM::LLVMFuncOp fn,
                 LLVM::LLVMStructType result) {
  MLIRContext *ctx = call.getContext();
  Location loc = call.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
  OpBuilder b = OpBuilder::atBlockBegin(&caller.getBody().front());
  Value one = LLVM::ConstantOp::create(b, loc, b.getI64Type(), 1);
  Value out = LLVM::AllocaOp::create(b, loc, ptr, result, one);

  b.setInsertionPoint(call);
  SmallVector<Value> args{out};
  llvm::append_range(args, call.getArgOperands());
  auto written = LLVM::CallOp::create(b, loc, fn, args);
  loadWhereRead(call.getResult(), {0}, written, out, result);
  call.erase();
}

struct ResultsThroughMemoryPass
    : public rankc::impl::RankcResultsThroughMemoryBase<
          ResultsThroughMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (maxFields < 1) {
      module.emitError(
          "rankc-results-through-memory: max-fields must be at least 1");
      return signalPassFailure();
    }
    for (auto fn : llvm::to_vector(module.getOps<LLVM::LLVMFuncOp>())) {
      auto result =
          dyn_cast<LLVM::LLVMStructType>(fn.getFunctionType().getReturnType());
      if (fn.isExternal() || !result || result.isOpaque() ||
          int64_t(result.getBody().size()) <= maxFields)
        continue;
      std::optional<SmallVector<LLVM::CallOp>> calls = plainCalls(fn, module);
      if (!calls)
        continue;
      writeResultsThrough(fn, result);
      for (LLVM::CallOp call : *calls)
        rewriteCall(call, fn, result);
    }
  }
};

} // namespace
