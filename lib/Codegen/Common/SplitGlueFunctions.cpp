//===- SplitGlueFunctions.cpp - long -O0 functions cut into functions -----===//
//
// A function is the unit the build spreads over threads
// (lib/Target/ProgramPieces.cpp), and a program's schedule is one function
// of the size of the program: cut into functions, its code generation
// spreads too. The cut is a chain of calls in the schedule's place, each
// to a run of its former blocks; the values that cross a cut are arguments
// and results, few in a schedule (the live tensors' descriptors), so the
// code does not grow with it.
//
// (Pass description: include/rankc/Codegen/Common/Passes.td.)
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/Common/Glue.h"
#include "rankc/Codegen/Common/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCSPLITGLUEFUNCTIONS
#include "rankc/Codegen/Common/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Whether `block` may move into another function as a link of a chain:
/// no arguments, no nested regions, no stack memory that would die with
/// the call, and an unconditional branch without operands to the next
/// block.
bool isChainLink(Block &block) {
  if (block.isEntryBlock() || block.getNumArguments() != 0)
    return false;
  auto br = dyn_cast<LLVM::BrOp>(block.getTerminator());
  if (!br || br.getNumOperands() != 0 || br.getDest() != block.getNextNode())
    return false;
  for (Operation &op : block)
    if (op.getNumRegions() != 0 ||
        isa<LLVM::AllocaOp, LLVM::StackSaveOp, LLVM::StackRestoreOp>(op))
      return false;
  return true;
}

/// A value the new function makes itself rather than takes: an operation
/// without operands, regions or effects (a constant, an address of).
bool isRematerializable(Value v) {
  Operation *def = v.getDefiningOp();
  return def && def->getNumOperands() == 0 && def->getNumRegions() == 0 &&
         def->getNumResults() == 1 && isMemoryEffectFree(def);
}

/// Runs of consecutive chain links of about `limit` operations; a run's
/// blocks after its first are reached only from the one before.
std::vector<SmallVector<Block *>> findRuns(LLVM::LLVMFuncOp fn, size_t limit) {
  std::vector<SmallVector<Block *>> runs;
  SmallVector<Block *> run;
  size_t size = 0;
  auto close = [&] {
    if (!run.empty() && size >= limit / 4)
      runs.push_back(run);
    run.clear();
    size = 0;
  };
  for (Block &block : fn.getBody()) {
    if (!isChainLink(block)) {
      close();
      continue;
    }
    if (!run.empty() && block.getSinglePredecessor() != run.back())
      close();
    run.push_back(&block);
    size += block.getOperations().size();
    if (size >= limit)
      close();
  }
  close();
  return runs;
}

/// Moves each run of `fn` into a function of its own, placed after `fn`,
/// and calls it in the run's place. What crosses from one run (or from
/// `fn`'s own blocks) to another is kept in a frame on `fn`'s stack, one
/// slot a value: stored once where it is defined, loaded where a run (or
/// the block calling a run, for `fn`'s own blocks) starts. The runs take
/// the frame's address alone: however many values cross (a schedule that
/// posts every receive first has thousands of requests waited on later),
/// a call is one pointer, never a call of a thousand arguments.
void splitFunction(LLVM::LLVMFuncOp fn,
                   ArrayRef<SmallVector<Block *>> runs, SymbolTable &symbols) {
  MLIRContext *ctx = fn.getContext();
  Location loc = fn.getLoc();
  llvm::DenseMap<Block *, int> runOf;
  for (auto [i, run] : llvm::enumerate(runs))
    for (Block *block : run)
      runOf[block] = i;
  auto regionOf = [&](Block *block) {
    auto it = runOf.find(block);
    return it == runOf.end() ? -1 : it->second;
  };

  // What each run reads from elsewhere, and what `fn`'s blocks read from
  // the runs.
  llvm::SetVector<Value> crossing;
  std::vector<llvm::SetVector<Value>> reads(runs.size()), copies(runs.size());
  llvm::SetVector<Value> readByFn;
  for (Block &block : fn.getBody()) {
    int user = regionOf(&block);
    for (Operation &op : block)
      for (Value v : op.getOperands()) {
        int def = regionOf(v.getParentBlock());
        if (def == user)
          continue;
        if (user >= 0 && isRematerializable(v)) {
          copies[user].insert(v);
          continue;
        }
        crossing.insert(v);
        (user >= 0 ? reads[user] : readByFn).insert(v);
      }
  }
  OpBuilder b(ctx);
  Value frame;
  Type frameType;
  llvm::DenseMap<Value, unsigned> slot;
  if (!crossing.empty()) {
    SmallVector<Type> types;
    for (auto [i, v] : llvm::enumerate(crossing)) {
      slot[v] = i;
      types.push_back(v.getType());
    }
    frameType = LLVM::LLVMStructType::getLiteral(ctx, types);
    b.setInsertionPointToStart(&fn.getBody().front());
    Value one = LLVM::ConstantOp::create(b, loc, b.getI64Type(), 1);
    frame = LLVM::AllocaOp::create(b, loc, LLVM::LLVMPointerType::get(ctx),
                                   frameType, one);
  }
  auto slotOf = [&](OpBuilder &b, Value base, Value v) -> Value {
    return LLVM::GEPOp::create(
        b, loc, LLVM::LLVMPointerType::get(ctx), frameType, base,
        ArrayRef<LLVM::GEPArg>{0, int32_t(slot.lookup(v))});
  };

  // The functions. Each loads what it reads from the frame right before
  // the first of its operations that reads it (a run's blocks are a chain,
  // so that operation dominates every later reader), not all at its entry:
  // SelectionDAG clusters the loads of a block that hang off one chain and
  // one base address with a search over every other such load
  // (ClusterNeighboringLoads), quadratic in their number, and a run that
  // read a thousand descriptors made one block of five thousand loads of
  // the frame (a program of 625 outputs: 3.5 s of -O0 code generation a
  // piece). Between calls and stores, loads hang off different chains;
  // near their use they are also not live, and so not spilled, across the
  // run's other blocks.
  std::vector<LLVM::LLVMFuncOp> pieces;
  std::vector<IRMapping> mappings(runs.size());
  Operation *after = fn;
  auto voidType = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(ctx), {LLVM::LLVMPointerType::get(ctx)});
  for (size_t i = 0; i < runs.size(); ++i) {
    b.setInsertionPointAfter(after);
    auto piece = LLVM::LLVMFuncOp::create(
        b, loc, (fn.getSymName() + "_run" + llvm::Twine(i)).str(), voidType,
        LLVM::Linkage::Internal);
    symbols.insert(piece); // (renamed, were the name taken)
    piece.setPassthroughAttr(b.getStrArrayAttr({"noinline", "optnone"}));
    Block *entry = piece.addEntryBlock(b);
    b.setInsertionPointToEnd(entry);
    for (Value v : copies[i])
      mappings[i].map(v, b.clone(*v.getDefiningOp())->getResult(0));
    OpBuilder before(ctx);
    for (Block *block : runs[i])
      for (Operation &op : *block)
        for (Value v : op.getOperands())
          if (reads[i].contains(v) && !mappings[i].contains(v)) {
            before.setInsertionPoint(&op);
            mappings[i].map(v, LLVM::LoadOp::create(
                                   before, loc, v.getType(),
                                   slotOf(before, entry->getArgument(0), v)));
          }
    pieces.push_back(piece);
    after = piece;
  }
  // Each crossing value is stored where it is defined.
  for (Value v : crossing) {
    int def = regionOf(v.getParentBlock());
    if (Operation *op = v.getDefiningOp())
      b.setInsertionPointAfter(op);
    else if (v.getParentBlock() == &fn.getBody().front())
      b.setInsertionPointAfter(frame.getDefiningOp());
    else
      b.setInsertionPointToStart(v.getParentBlock());
    Value base =
        def < 0 ? frame : pieces[def].getBody().front().getArgument(0);
    LLVM::StoreOp::create(b, loc, v, slotOf(b, base, v));
  }
  for (auto [i, run] : llvm::enumerate(runs))
    for (Block *block : run)
      for (Operation &op : *block)
        for (OpOperand &operand : op.getOpOperands())
          if (Value mapped = mappings[i].lookupOrNull(operand.get()))
            operand.set(mapped);

  // The calls, each in a block of its own where its run began.
  for (auto [i, run] : llvm::enumerate(runs)) {
    Block *next = cast<LLVM::BrOp>(run.back()->getTerminator()).getDest();
    Block *call = b.createBlock(run.front());
    run.front()->replaceAllUsesWith(call);
    LLVM::CallOp::create(b, loc, pieces[i],
                         frame ? ValueRange(frame) : ValueRange());
    LLVM::BrOp::create(b, loc, ValueRange(), next);
  }
  // What `fn`'s own blocks read from the runs is loaded right before the
  // first operation of each block that reads it (the blocks need not be a
  // chain): the slot holds the value its run last wrote, as the SSA value
  // did.
  if (!readByFn.empty())
    for (Block &block : fn.getBody()) {
      if (regionOf(&block) >= 0)
        continue;
      llvm::DenseMap<Value, Value> loaded;
      for (Operation &op : block)
        for (OpOperand &operand : op.getOpOperands()) {
          Value v = operand.get();
          if (!readByFn.contains(v))
            continue;
          Value &load = loaded[v];
          if (!load) {
            b.setInsertionPoint(&op);
            load = LLVM::LoadOp::create(b, loc, v.getType(),
                                        slotOf(b, frame, v));
          }
          operand.set(load);
        }
    }
  for (auto [i, run] : llvm::enumerate(runs)) {
    run.back()->getTerminator()->erase();
    b.setInsertionPointToEnd(run.back());
    LLVM::ReturnOp::create(b, loc, ValueRange());
    Region &body = pieces[i].getBody();
    body.getBlocks().splice(body.end(), fn.getBody().getBlocks(),
                            run.front()->getIterator(),
                            std::next(run.back()->getIterator()));
    b.setInsertionPointToEnd(&body.front());
    LLVM::BrOp::create(b, loc, ValueRange(), run.front());
  }
}

struct SplitGlueFunctionsPass
    : public rankc::impl::RankcSplitGlueFunctionsBase<SplitGlueFunctionsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (maxOps < 1) {
      module.emitError("rankc-split-glue-functions: max-ops must be at least 1");
      return signalPassFailure();
    }
    size_t limit = maxOps;
    SmallVector<LLVM::LLVMFuncOp> long_;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
      // (A run never holds the entry block: a function of one block has
      // none, and most glue is one block. Counting walks every op, so it
      // stops at the limit.)
      if (fn.isExternal() || fn.getBody().hasOneBlock() ||
          !rankc::isGlueFunction(fn))
        continue;
      size_t ops = 0;
      for (Block &block : fn.getBody())
        for (auto it = block.begin(); it != block.end() && ops <= limit; ++it)
          ++ops;
      if (ops > limit)
        long_.push_back(fn);
    }
    if (long_.empty())
      return;
    SymbolTable symbols(module);
    for (LLVM::LLVMFuncOp fn : long_) {
      std::vector<SmallVector<Block *>> runs = findRuns(fn, limit);
      if (!runs.empty())
        splitFunction(fn, runs, symbols);
    }
  }
};

} // namespace
