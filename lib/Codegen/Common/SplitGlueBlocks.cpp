//===- SplitGlueBlocks.cpp - short blocks for -O0 code generation ---------===//
//
// SelectionDAG selects a block as one DAG, and its cost grows faster than
// the DAG: a schedule of 134,000 instructions in one block took 3.0 s of
// -O0 code generation where one of 13,700 took 0.2 s. Cutting the glue's
// blocks into blocks of a bounded size keeps every DAG small.
// (Pass description: include/rankc/Codegen/Common/Passes.td.)
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/Common/Glue.h"
#include "rankc/Codegen/Common/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCSPLITGLUEBLOCKS
#include "rankc/Codegen/Common/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

struct SplitGlueBlocksPass
    : public rankc::impl::RankcSplitGlueBlocksBase<SplitGlueBlocksPass> {
  using Base::Base;

  void runOnOperation() override {
    LLVM::LLVMFuncOp fn = getOperation();
    if (maxOps < 1) {
      fn.emitError("rankc-split-glue-blocks: max-ops must be at least 1");
      return signalPassFailure();
    }
    if (maxLoads < 1) {
      fn.emitError("rankc-split-glue-blocks: max-loads must be at least 1");
      return signalPassFailure();
    }
    if (fn.isExternal() || !rankc::isGlueFunction(fn))
      return;
    size_t limit = maxOps, loadLimit = maxLoads;
    SmallVector<Block *> blocks;
    for (Block &block : fn.getBody())
      blocks.push_back(&block);
    OpBuilder b(fn.getContext());
    for (Block *block : blocks) {
      // Not before an alloca of the entry block: moved out of it, it
      // would be a dynamic one.
      Block::iterator it = block->begin();
      if (block->isEntryBlock())
        for (Operation &op : *block)
          if (isa<LLVM::AllocaOp>(op))
            it = std::next(op.getIterator());
      // A cut every `limit` operations, and before a load that would be
      // the `loadLimit + 1`th since the last call or store: SelectionDAG
      // chains the loads between two such writes to one token, and
      // clusters those of one base address in a time quadratic in their
      // number (a call of a part of 650 buffers loaded 3,256 descriptor
      // fields of the frame right before it).
      SmallVector<Operation *> cuts;
      size_t ops = 0, loads = 0;
      for (Block::iterator end = block->getTerminator()->getIterator();
           it != end; ++it) {
        bool load = isa<LLVM::LoadOp>(*it);
        if (ops == limit || (load && loads == loadLimit)) {
          cuts.push_back(&*it);
          ops = loads = 0;
        }
        ++ops;
        if (load)
          ++loads;
        else if (isa<LLVM::CallOp, LLVM::StoreOp>(*it))
          loads = 0;
      }
      for (Operation *cut : llvm::reverse(cuts)) {
        Location loc = cut->getLoc();
        Block *tail = block->splitBlock(cut);
        b.setInsertionPointToEnd(block);
        LLVM::BrOp::create(b, loc, ValueRange(), tail);
      }
    }
  }
};

} // namespace
