//===- GpuStreamOrderedCalls.cpp - no host wait before stream-ordered calls ===//
//
// The d=1024 transformer step waited for the GPU before each of its 26
// GEMMs: 0.7 ms a step of an idle GPU while the host refilled the queue
// (CUPTI: 4.36 ms of kernels in a 5.04 ms step). cuBLAS runs on the same
// stream as the kernels, so the waits order nothing.
//
// Nor before a call of a part: its kernels go on the same stream (the
// process's: mgpuStreamCreate returns it), and its host code touches no
// device memory. Since a part writes its results into buffers the caller
// allocates (rankc-part-out-params), every output's allocation before a
// part's call would otherwise make the host wait for the GPU there.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"
#include "rankc/Conversion/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUSTREAMORDEREDCALLS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

struct GpuStreamOrderedCallsPass
    : public rankc::impl::RankcGpuStreamOrderedCallsBase<
          GpuStreamOrderedCallsPass> {
  void runOnOperation() override {
    // The marked callees, found once: a lookup a call (each a scan of the
    // module) was quadratic, 0.13 s of a 10^5-node program's build.
    ModuleOp module = getOperation();
    DenseSet<StringAttr> ordered;
    for (auto fn : module.getOps<func::FuncOp>())
      if (fn->hasAttr(rankc::kStreamOrdered) ||
          fn->hasAttr(rankc::kPartFunction))
        ordered.insert(fn.getSymNameAttr());
    SmallVector<gpu::WaitOp> erase;
    // Only a host wait (no result) right before `op`.
    auto waitBefore = [&](Operation *op) {
      auto wait = dyn_cast_or_null<gpu::WaitOp>(op->getPrevNode());
      if (wait && !wait.getAsyncToken())
        erase.push_back(wait);
    };
    for (auto fn : module.getOps<func::FuncOp>()) {
      // A part's results go to the runtime (which orders itself), to other
      // parts (the same stream) or out at the end of the step (the runtime
      // waits for the stream there): its return needs no wait either.
      if (fn->hasAttr(rankc::kPartFunction))
        fn.walk([&](func::ReturnOp ret) { waitBefore(ret); });
      fn.walk([&](func::CallOp call) {
        if (ordered.contains(call.getCalleeAttr().getAttr()))
          waitBefore(call);
      });
    }
    for (gpu::WaitOp w : erase)
      w.erase();
  }
};

} // namespace
