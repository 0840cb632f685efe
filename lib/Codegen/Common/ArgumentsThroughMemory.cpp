//===- ArgumentsThroughMemory.cpp - many buffers passed in memory ---------===//
//
// func-to-llvm rewrites a function's signature one argument at a time, and
// each replacement of an argument checks that its new value comes before
// each use (Operation::isBeforeInBlock), in an entry block whose op order
// the previous argument's descriptor ops have just invalidated: every
// argument costs a walk of the block. A training step's forward part takes
// every weight and an out-parameter for every activation the backward
// reads, so its arguments and its block both grow with the network: 10,000
// arguments and a block of 200,000 ops at 10^5 nodes, 31 s of the build in
// that one conversion. Here such a function gets its buffers' descriptors
// in a block its caller fills: one argument, loaded field by field at the
// callee's entry, where nothing else is converted. Many results cost the
// same at the call (each replaced result checked against the caller's
// block, whose order each extraction invalidates): a function of many
// buffer results stores them into a block its caller passes and reads.
//
// (Pass description: include/rankc/Codegen/Common/Passes.td.)
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/Common/Passes.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/DataLayoutInterfaces.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/Support/MathExtras.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCARGUMENTSTHROUGHMEMORY
#include "rankc/Codegen/Common/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Every use of each symbol of the module, by name: one walk for all
/// functions (asking the uses of each function walks the module each time).
using SymbolUsers = DenseMap<StringAttr, SmallVector<Operation *, 1>>;
SymbolUsers symbolUsers(ModuleOp module) {
  SymbolUsers users;
  if (std::optional<SymbolTable::UseRange> uses =
          SymbolTable::getSymbolUses(&module.getBodyRegion()))
    for (const SymbolTable::SymbolUse &use : *uses)
      users[use.getSymbolRef().getRootReference()].push_back(use.getUser());
  return users;
}

/// The calls of `fn`, if every use of its name is a direct func.call; none
/// if it has no caller here (an entry point: its ABI is not ours).
std::optional<SmallVector<func::CallOp>> directCalls(func::FuncOp fn,
                                                     const SymbolUsers &users) {
  auto it = users.find(fn.getSymNameAttr());
  if (it == users.end())
    return std::nullopt;
  SmallVector<func::CallOp> calls;
  for (Operation *user : it->second) {
    auto call = dyn_cast<func::CallOp>(user);
    if (!call || call.getCallee() != fn.getSymName() || call.getArgAttrs() ||
        call.getResAttrs())
      return std::nullopt;
    calls.push_back(call);
  }
  return calls;
}

/// The arguments that move: ranked memrefs without attributes.
llvm::BitVector movedArguments(func::FuncOp fn) {
  llvm::BitVector moved(fn.getNumArguments());
  for (auto [i, type] : llvm::enumerate(fn.getArgumentTypes())) {
    DictionaryAttr attrs = fn.getArgAttrDict(i);
    moved[i] = isa<MemRefType>(type) && (!attrs || attrs.empty());
  }
  return moved;
}

/// Where each moved argument's (or result's) descriptor lies in the block
/// its caller provides: descriptors one after another, each at its own
/// alignment. (A struct type of them all would do as well, but would be
/// printed whole in every access: 10,000 descriptors make a type of half a
/// megabyte.)
struct Frame {
  SmallVector<Type> descriptors;
  SmallVector<int64_t> offsets;
  /// The block, as 8-byte words (every descriptor field is 8 bytes here).
  LLVM::LLVMArrayType type;
};

std::optional<Frame> frameFor(func::FuncOp fn, TypeRange types,
                              const llvm::BitVector &moved,
                              const LLVMTypeConverter &converter) {
  Frame frame;
  DataLayout layout = DataLayout::closest(fn);
  uint64_t size = 0;
  for (int i : moved.set_bits()) {
    Type descriptor = converter.convertType(types[i]);
    if (!descriptor)
      return std::nullopt;
    uint64_t align = layout.getTypeABIAlignment(descriptor);
    if (align > 8)
      return std::nullopt;
    size = llvm::alignTo(size, align);
    frame.descriptors.push_back(descriptor);
    frame.offsets.push_back(int64_t(size));
    size += layout.getTypeSize(descriptor);
  }
  auto word = IntegerType::get(fn.getContext(), 64);
  frame.type = LLVM::LLVMArrayType::get(word, llvm::divideCeil(size, 8));
  return frame;
}

/// The address of the descriptor at `offset` bytes into the block.
Value slotAt(OpBuilder &b, Location loc, Value base, int64_t offset) {
  auto ptr = LLVM::LLVMPointerType::get(b.getContext());
  return LLVM::GEPOp::create(b, loc, ptr, b.getI8Type(), base,
                             ArrayRef<LLVM::GEPArg>{int32_t(offset)},
                             LLVM::GEPNoWrapFlags::inbounds);
}

/// Stores the descriptors of the `values` that `moved` marks into the
/// block at `base` (at `b`'s insertion point); the others, in order.
SmallVector<Value> storeDescriptors(OpBuilder &b, Location loc,
                                   ValueRange values,
                                   const llvm::BitVector &moved,
                                   const Frame &frame, Value base) {
  SmallVector<Value> kept;
  int64_t field = 0;
  for (auto [i, value] : llvm::enumerate(values)) {
    if (!moved[i]) {
      kept.push_back(value);
      continue;
    }
    Value descriptor = UnrealizedConversionCastOp::create(
                           b, loc, frame.descriptors[field], value)
                           .getResult(0);
    LLVM::StoreOp::create(b, loc, descriptor,
                          slotAt(b, loc, base, frame.offsets[field]));
    ++field;
  }
  return kept;
}

/// The buffer of type `type` whose descriptor is the block's `field`-th.
Value loadDescriptor(OpBuilder &b, Location loc, const Frame &frame,
                     int64_t field, Value base, Type type) {
  Value loaded = LLVM::LoadOp::create(
      b, loc, frame.descriptors[field],
      slotAt(b, loc, base, frame.offsets[field]));
  return UnrealizedConversionCastOp::create(b, loc, type, loaded).getResult(0);
}

/// `fn`'s new first argument: the pointer to a block.
Value takeBlockPointer(func::FuncOp fn) {
  MLIRContext *ctx = fn.getContext();
  if (failed(fn.insertArgument(0, LLVM::LLVMPointerType::get(ctx),
                               DictionaryAttr::get(ctx), fn.getLoc())))
    llvm_unreachable("a func.func takes a new first argument");
  return fn.getArgument(0);
}

/// `fn` takes a pointer to the block first, loads the moved arguments'
/// descriptors from it at its entry, and no longer takes them.
void loadArguments(func::FuncOp fn, const llvm::BitVector &moved,
                   const Frame &frame) {
  Value base = takeBlockPointer(fn);
  Block &entry = fn.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  llvm::BitVector erased(fn.getNumArguments());
  for (auto [field, i] : llvm::enumerate(moved.set_bits())) {
    BlockArgument arg = entry.getArgument(i + 1);
    arg.replaceAllUsesWith(loadDescriptor(b, fn.getLoc(), frame, field, base,
                                          arg.getType()));
    erased.set(i + 1);
  }
  if (failed(fn.eraseArguments(erased)))
    llvm_unreachable("the moved arguments have no uses left");
}

/// The block on the stack of the function around `call`: an alloca of its
/// entry block (a static slot), one a caller and size of block, however
/// many calls: a callee reads its arguments' block whole at its entry and
/// writes its results' only at its return, and the caller reads results
/// right after the call, before anything else can use the block again.
Value frameOf(func::CallOp call, const Frame &frame,
              DenseMap<std::pair<Operation *, Type>, Value> &frames) {
  auto caller = call->getParentOfType<FunctionOpInterface>();
  Value &slot = frames[{caller, frame.type}];
  if (!slot) {
    OpBuilder b = OpBuilder::atBlockBegin(&caller.getFunctionBody().front());
    Value one = LLVM::ConstantOp::create(b, call.getLoc(), b.getI64Type(), 1);
    slot = LLVM::AllocaOp::create(
        b, call.getLoc(), LLVM::LLVMPointerType::get(call.getContext()),
        frame.type, one);
  }
  return slot;
}

/// The call stores the moved operands' descriptors into its caller's
/// block right before it and passes the block's address instead.
void storeArguments(func::CallOp call, const llvm::BitVector &moved,
                    const Frame &frame, Value base) {
  OpBuilder b(call);
  SmallVector<Value> operands{base};
  llvm::append_range(operands, storeDescriptors(b, call.getLoc(),
                                                call.getOperands(), moved,
                                                frame, base));
  call.getOperandsMutable().assign(operands);
}

/// The results that move: ranked memrefs (their attributes, read by
/// passes before this one, are dropped).
llvm::BitVector movedResults(func::FuncOp fn) {
  llvm::BitVector moved(fn.getNumResults());
  for (auto [i, type] : llvm::enumerate(fn.getResultTypes()))
    moved[i] = isa<MemRefType>(type);
  return moved;
}

/// `fn` takes a pointer to a block first and stores the moved results'
/// descriptors there at each return, returning the others.
void storeResults(func::FuncOp fn, const llvm::BitVector &moved,
                  const Frame &frame) {
  Value base = takeBlockPointer(fn);
  fn.walk([&](func::ReturnOp ret) {
    OpBuilder b(ret);
    ret.getOperandsMutable().assign(storeDescriptors(
        b, ret.getLoc(), ret.getOperands(), moved, frame, base));
  });
  if (failed(fn.eraseResults(moved)))
    llvm_unreachable("func.func drops results");
}

/// The call passes a block of its caller's stack first and reads the moved
/// results from it right after it.
void loadResults(func::CallOp call, const llvm::BitVector &moved,
                 const Frame &frame, Value base) {
  Location loc = call.getLoc();
  OpBuilder b(call);
  SmallVector<Value> operands{base};
  llvm::append_range(operands, call.getOperands());
  SmallVector<Type> kept;
  for (auto [i, type] : llvm::enumerate(call.getResultTypes()))
    if (!moved[i])
      kept.push_back(type);
  auto replacement = func::CallOp::create(b, loc, call.getCalleeAttr(), kept,
                                          operands);
  for (NamedAttribute a : call->getDiscardableAttrs())
    replacement->setAttr(a.getName(), a.getValue());
  b.setInsertionPointAfter(replacement);
  int64_t field = 0, next = 0;
  for (auto [i, result] : llvm::enumerate(call.getResults())) {
    if (!moved[i]) {
      result.replaceAllUsesWith(replacement.getResult(next++));
      continue;
    }
    result.replaceAllUsesWith(
        loadDescriptor(b, loc, frame, field++, base, result.getType()));
  }
  call.erase();
}

struct ArgumentsThroughMemoryPass
    : public rankc::impl::RankcArgumentsThroughMemoryBase<
          ArgumentsThroughMemoryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (maxArguments < 0) {
      module.emitError(
          "rankc-arguments-through-memory: max-arguments must be at least 0");
      return signalPassFailure();
    }
    // The descriptors func-to-llvm and memref-to-llvm make (their default
    // options: 64-bit indices).
    LLVMTypeConverter converter(&getContext());
    DenseMap<std::pair<Operation *, Type>, Value> frames;
    // (A function's calls are rewritten only while that function is: a
    // call replaced for its results is in no other function's list.)
    SymbolUsers users = symbolUsers(module);
    for (auto fn : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (fn.isExternal() || !fn.isPrivate())
        continue;
      llvm::BitVector arguments = movedArguments(fn),
                      results = movedResults(fn);
      bool moveArguments = int64_t(arguments.count()) > maxArguments,
           moveResults = int64_t(results.count()) > maxArguments;
      if (!moveArguments && !moveResults)
        continue;
      std::optional<SmallVector<func::CallOp>> calls = directCalls(fn, users);
      if (!calls)
        continue;
      if (moveArguments)
        if (std::optional<Frame> frame =
                frameFor(fn, fn.getArgumentTypes(), arguments, converter)) {
          for (func::CallOp call : *calls)
            storeArguments(call, arguments, *frame,
                           frameOf(call, *frame, frames));
          loadArguments(fn, arguments, *frame);
        }
      if (moveResults)
        if (std::optional<Frame> frame =
                frameFor(fn, fn.getResultTypes(), results, converter)) {
          storeResults(fn, results, *frame);
          for (func::CallOp call : *calls)
            loadResults(call, results, *frame, frameOf(call, *frame, frames));
        }
    }
  }
};

} // namespace
