//===- AsyncSchedule.cpp - messages as nonblocking starts and waits -------===//
//
// The schedule partitioning made, made explicit in the IR as MPI models it
// (isend / irecv / iallreduce returning a request, wait completing it), so
// that the conversion to the runtime lowers one op at a time.
//
//===----------------------------------------------------------------------===//

#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Dialect/Comm/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

namespace rankc {
#define GEN_PASS_DEF_COMMASYNCSCHEDULE
#include "rankc/Dialect/Comm/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;
using namespace rankc;

namespace {

/// Where an allreduce of `value` starts in `body`: right after the op that
/// makes its input (or at the start), but not before `lastStart`, the
/// previous collective's start.
void placeCollective(OpBuilder &b, Block &body, Value value,
                     Operation *lastStart) {
  Operation *def = value.getDefiningOp();
  Operation *after = def && def->getBlock() == &body ? def : nullptr;
  if (lastStart && (!after || after->isBeforeInBlock(lastStart)))
    after = lastStart;
  if (after)
    b.setInsertionPointAfter(after);
  else
    b.setInsertionPointToStart(&body);
}

void scheduleProgram(func::FuncOp program, bool blockingSends) {
  OpBuilder b(program.getContext());
  Block &body = program.getBody().front();
  SmallVector<Value> sends;
  Operation *lastCollective = nullptr;
  int32_t event = 0;
  for (Operation &op : llvm::make_early_inc_range(body.without_terminator())) {
    Location loc = op.getLoc();
    if (auto recv = dyn_cast<comm::RecvOp>(op)) {
      // Posted first thing (each before the ones already posted, as the
      // runtime has always posted them); waited for here.
      b.setInsertionPointToStart(&body);
      auto start = comm::IRecvOp::create(b, loc, recv, event++);
      b.setInsertionPoint(&op);
      auto wait = comm::WaitOp::create(b, loc, recv.getResult().getType(),
                                       start.getRequest());
      recv.getResult().replaceAllUsesWith(wait.getValue());
    } else if (auto send = dyn_cast<comm::SendOp>(op)) {
      // Starts here, where partitioning put it: right after its value.
      b.setInsertionPoint(&op);
      auto start = comm::ISendOp::create(b, loc, send.getValue(), send, event++);
      if (blockingSends)
        comm::WaitOp::create(b, loc, Type(), start.getRequest());
      else
        sends.push_back(start.getRequest());
    } else if (auto all = dyn_cast<comm::AllReduceOp>(op)) {
      placeCollective(b, body, all.getValue(), lastCollective);
      auto start = comm::IAllReduceOp::create(b, loc, all, event++);
      // (The bucket it reduces, for the manifest: the runtime reports
      // measured times beside the model's.)
      if (Attribute bucket = all->getAttr(comm::CommDialect::kBucket))
        start->setAttr(comm::CommDialect::kBucket, bucket);
      lastCollective = start;
      b.setInsertionPoint(&op);
      auto wait = comm::WaitOp::create(b, loc, all.getResult().getType(),
                                       start.getRequest());
      all.getResult().replaceAllUsesWith(wait.getValue());
    } else {
      continue;
    }
    op.erase();
  }
  // Every send completes before the program returns its results.
  Operation *terminator = body.getTerminator();
  b.setInsertionPoint(terminator);
  for (Value request : sends)
    comm::WaitOp::create(b, terminator->getLoc(), Type(), request);
}

struct AsyncSchedulePass
    : public rankc::impl::CommAsyncScheduleBase<AsyncSchedulePass> {
  using CommAsyncScheduleBase::CommAsyncScheduleBase;
  void runOnOperation() override {
    for (auto fn : getOperation().getOps<func::FuncOp>())
      if (fn->hasAttr(comm::CommDialect::kRanks) && !fn.isExternal())
        scheduleProgram(fn, blockingSends);
  }
};

} // namespace
