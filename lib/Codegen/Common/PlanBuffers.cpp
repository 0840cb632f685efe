//===- PlanBuffers.cpp - a step's buffers reuse memory once they are dead -===//
//
// Generated code allocates every buffer it needs and frees none (the
// runtime's step arenas reset once a step is over). Without a plan every
// intermediate of a step keeps its memory to the step's end: a training
// step then holds every temporary of its backward at once. This pass gives
// each function a memory plan instead: its buffers of a static size are
// placed at offsets of one block, and two share bytes when no operation
// touches both while both are alive. A buffer is alive from the first to
// the last operation of the function's body that uses it or anything made
// from it (views, its address, a message's request: a buffer handed to
// MPI or NCCL lives until the wait of the request the start returned).
// Buffers that leave the function are not planned, except a step
// function's outputs that are not carried into the next step: alive to its
// end, they are read by the runtime before the next step begins.
//
// The body is straight-line code (a step's schedule, a part's kernels and
// library calls), so the plan is an interval packing: buffers in the order
// they are born, each in the best-fitting free range of the block (or at
// its end), its range freed after its last use. Linear in the body's
// operations and uses, times a logarithm.
//
// The block: a part's is an extra argument its callers allocate (one more
// buffer of theirs, alive for the call), so a step's plan covers its parts'
// temporaries too; a function called only from outside (the step function)
// asks the runtime for it (`rankc_rt_scratch(bytes)`), which keeps one
// block for every step: its address never changes (CUDA graph replay), and
// no second step's worth of memory is held as the arenas hold.
//
// Every operation of a function runs in order on one stream on the GPU
// (gpu-async-region after this pass; NCCL's stream waits for the program's
// before it starts and the program's waits for it at the wait), so reuse in
// program order is safe there too.
//
//===----------------------------------------------------------------------===//

#include "BufferLiveness.h"
#include "rankc/Codegen/Common/Passes.h"
#include "rankc/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

#include <map>
#include <queue>
#include <set>

namespace rankc {
#define GEN_PASS_DEF_RANKCPLANBUFFERS
#include "rankc/Codegen/Common/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// A buffer's bytes in the plan, or -1 if it cannot be a view of a byte
/// block (a dynamic size, a layout, a memory space, an index element).
int64_t plannedBytes(MemRefType type) {
  if (!type.getLayout().isIdentity() || type.getMemorySpace() ||
      !type.getElementType().isIntOrFloat())
    return -1;
  return rankc::alignedBytes(type);
}

/// The type of `op` if it is an allocation this plan takes: memref.alloc
/// on the host (CPU), gpu.alloc on the device (CUDA).
MemRefType plannable(Operation *op, bool device) {
  if (device) {
    auto a = dyn_cast<gpu::AllocOp>(op);
    if (!a || a.getAsyncToken() || !a.getAsyncDependencies().empty() ||
        a.getHostShared() || !a.getDynamicSizes().empty() ||
        !a.getSymbolOperands().empty())
      return {};
    return a.getMemref().getType();
  }
  auto a = dyn_cast<memref::AllocOp>(op);
  if (!a || !a.getDynamicSizes().empty() || !a.getSymbolOperands().empty() ||
      (a.getAlignment() && *a.getAlignment() > uint64_t(rankc::kBufferAlign)))
    return {};
  return a.getType();
}

struct Interval {
  Operation *alloc;
  MemRefType type;
  int64_t bytes, first, last, offset = 0;
  Operation *firstUser = nullptr; // the body's op at `first`
};

/// Places the intervals (sorted by birth) in one block: best fit among the
/// free ranges, else at the end. Returns the block's bytes.
int64_t pack(MutableArrayRef<Interval> buffers) {
  std::map<int64_t, int64_t> freeAt;               // offset -> size
  std::set<std::pair<int64_t, int64_t>> freeSizes; // (size, offset)
  int64_t end = 0;
  auto release = [&](int64_t offset, int64_t size) {
    auto next = freeAt.lower_bound(offset);
    if (next != freeAt.end() && next->first == offset + size) {
      size += next->second;
      freeSizes.erase({next->second, next->first});
      next = freeAt.erase(next);
    }
    if (next != freeAt.begin()) {
      auto prev = std::prev(next);
      if (prev->first + prev->second == offset) {
        offset = prev->first;
        size += prev->second;
        freeSizes.erase({prev->second, prev->first});
        freeAt.erase(prev);
      }
    }
    freeAt[offset] = size;
    freeSizes.insert({size, offset});
  };
  auto take = [&](int64_t size) {
    auto fit = freeSizes.lower_bound({size, INT64_MIN});
    if (fit != freeSizes.end()) {
      auto [have, offset] = *fit;
      freeSizes.erase(fit);
      freeAt.erase(offset);
      if (have > size) {
        freeAt[offset + size] = have - size;
        freeSizes.insert({have - size, offset + size});
      }
      return offset;
    }
    // A free range at the end grows into the new bytes.
    if (!freeAt.empty()) {
      auto lastFree = std::prev(freeAt.end());
      if (lastFree->first + lastFree->second == end) {
        int64_t offset = lastFree->first;
        freeSizes.erase({lastFree->second, offset});
        freeAt.erase(lastFree);
        end = offset + size;
        return offset;
      }
    }
    int64_t offset = end;
    end += size;
    return offset;
  };
  using Death = std::pair<int64_t, size_t>; // (last use, buffer)
  std::priority_queue<Death, std::vector<Death>, std::greater<Death>> alive;
  for (size_t i = 0; i < buffers.size(); ++i) {
    while (!alive.empty() && alive.top().first < buffers[i].first) {
      const Interval &dead = buffers[alive.top().second];
      release(dead.offset, dead.bytes);
      alive.pop();
    }
    buffers[i].offset = take(buffers[i].bytes);
    alive.push({buffers[i].last, i});
  }
  return end;
}

/// Plans `fn`'s buffers; returns the intervals placed (empty: nothing to
/// plan) and the block's bytes.
/// In a step function (`outputsInBlock`), a result that is not carried into
/// the next step (a gradient, the loss) is planned too, alive to the end:
/// the runtime copies it out before the next step runs the function again.
int64_t planFunction(func::FuncOp fn, bool device, bool outputsInBlock,
                     SymbolTableCollection &symbols,
                     SmallVectorImpl<Interval> &planned) {
  if (!fn.getBody().hasOneBlock())
    return 0;
  Block &body = fn.getBody().front();
  DenseMap<Operation *, int64_t> at = rankc::numberOps(body);
  SmallVector<Operation *> unused;
  for (Operation &op : body) {
    MemRefType type = plannable(&op, device);
    int64_t bytes = type ? plannedBytes(type) : -1;
    if (bytes < 0)
      continue;
    SmallVector<unsigned> returnedAt;
    FailureOr<std::pair<int64_t, int64_t>> range = rankc::liveRange(
        op.getResult(0), body, at, symbols,
        outputsInBlock ? &returnedAt : nullptr);
    if (failed(range) || llvm::any_of(returnedAt, [&](unsigned r) {
          return fn.getResultAttr(r, rankc::kCarriedFrom);
        }))
      continue;
    if (range->first < 0)
      unused.push_back(&op);
    else
      planned.push_back({&op, type, bytes, range->first, range->second});
  }
  // (Positions are those of `at`: numbered before the unused go.)
  SmallVector<Operation *> ops;
  for (Operation &op : body)
    ops.push_back(&op);
  for (Interval &b : planned)
    b.firstUser = ops[b.first];
  for (Operation *op : unused)
    op->erase();
  llvm::stable_sort(planned, [](const Interval &a, const Interval &b) {
    return a.first < b.first;
  });
  return pack(planned);
}

/// Every planned allocation becomes a view of `block` at its offset, made
/// right before its first use; a result gets a view of its own right before
/// the return. (Where the allocation was, often the function's top, a view
/// would keep its descriptor alive across the whole function: LLVM's -O0
/// register allocation then spills every such value at every block's end,
/// and a schedule of a thousand outputs took seconds to build.)
void placeInBlock(ArrayRef<Interval> planned, Value block) {
  for (const Interval &b : planned) {
    Location loc = b.alloc->getLoc();
    auto viewBefore = [&](Operation *op) {
      OpBuilder builder(op);
      Value offset = arith::ConstantIndexOp::create(builder, loc, b.offset);
      return memref::ViewOp::create(builder, loc, b.type, block, offset,
                                    ValueRange())
          .getResult();
    };
    Value view = viewBefore(b.firstUser);
    b.alloc->getResult(0).replaceAllUsesWith(view);
    b.alloc->erase();
    Operation *terminator = view.getParentBlock()->getTerminator();
    for (OpOperand &use : llvm::make_early_inc_range(view.getUses()))
      if (use.getOwner() == terminator)
        use.set(viewBefore(terminator));
  }
}

struct PlanBuffersPass
    : public rankc::impl::RankcPlanBuffersBase<PlanBuffersPass> {
  using RankcPlanBuffersBase::RankcPlanBuffersBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    // Who calls whom (func.call only: the program's functions).
    DenseMap<Operation *, SmallVector<func::CallOp>> callers =
        rankc::callersOf(module);
    SymbolTableCollection symbols;
    auto defined = [](func::FuncOp fn) {
      return !fn.isExternal() && fn.isPrivate();
    };

    // Parts first: their blocks become arguments, allocated by the callers
    // (whose plans then hold them for the length of the call).
    for (func::FuncOp fn : module.getOps<func::FuncOp>()) {
      if (!defined(fn) || !fn->hasAttr(rankc::kPartFunction))
        continue;
      SmallVector<Interval> planned;
      int64_t bytes = planFunction(fn, device, /*outputsInBlock=*/false,
                                   symbols, planned);
      if (planned.empty())
        continue;
      auto blockType = MemRefType::get({bytes}, IntegerType::get(ctx, 8));
      unsigned index = fn.getNumArguments();
      if (failed(fn.insertArgument(index, blockType, DictionaryAttr(),
                                   fn.getLoc())))
        return signalPassFailure();
      fn.setArgAttr(index, rankc::kScratchBytes,
                    IntegerAttr::get(IntegerType::get(ctx, 64), bytes));
      placeInBlock(planned, fn.getArgument(index));
      for (func::CallOp call : callers.lookup(fn)) {
        OpBuilder b(call);
        Value block =
            device ? gpu::AllocOp::create(b, call.getLoc(), blockType, Type(),
                                          ValueRange(), ValueRange(),
                                          ValueRange(), false)
                         .getMemref()
                   : memref::AllocOp::create(b, call.getLoc(), blockType)
                         .getResult();
        call.getOperandsMutable().append(block);
      }
    }

    // Then the functions only the outside calls (the step): their blocks
    // come from the runtime. (A function some other function of the
    // program calls keeps its allocations: two such blocks would be one.)
    func::FuncOp scratch;
    for (func::FuncOp fn : module.getOps<func::FuncOp>()) {
      if (!defined(fn) || fn->hasAttr(rankc::kPartFunction) ||
          llvm::any_of(callers.lookup(fn), [](func::CallOp call) {
            auto owner = call->getParentOfType<func::FuncOp>();
            return owner && owner.isPrivate();
          }))
        continue;
      SmallVector<Interval> planned;
      int64_t bytes = planFunction(fn, device, /*outputsInBlock=*/true,
                                   symbols, planned);
      if (planned.empty())
        continue;
      auto rawType =
          MemRefType::get({ShapedType::kDynamic}, IntegerType::get(ctx, 8));
      if (!scratch) {
        OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
        scratch = func::FuncOp::create(
            b, module.getLoc(), rankc::kScratchFunction,
            b.getFunctionType({b.getI64Type()}, {rawType}));
        scratch.setPrivate();
        scratch->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                         b.getUnitAttr());
      }
      OpBuilder b = OpBuilder::atBlockBegin(&fn.getBody().front());
      Location loc = fn.getLoc();
      Value size = arith::ConstantIntOp::create(b, loc, bytes, 64);
      auto call = func::CallOp::create(b, loc, scratch, ValueRange{size});
      call->setAttr(rankc::kScratchBytes, b.getI64IntegerAttr(bytes));
      if (device) // (for rankc-step-memory: which memory the block is)
        call->setAttr("rankc.scratch_on_device", b.getUnitAttr());
      placeInBlock(planned, call.getResult(0));
    }
  }
};

} // namespace
