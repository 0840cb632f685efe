//===- StepMemory.cpp - the bytes a step allocates, for plan.json ---------===//
//
// What the runtime's step arena will hold (Passes.td says how it is
// counted). Mirrors runtime/core/Arena.cpp's rounding: keep the two equal.
//
//===----------------------------------------------------------------------===//

#include "BufferLiveness.h"
#include "rankc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

#include <functional>

namespace rankc {
#define GEN_PASS_DEF_RANKCSTEPMEMORY
#include "rankc/Codegen/Common/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

struct StepMemoryPass
    : public rankc::impl::RankcStepMemoryBase<StepMemoryPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t host = 0, device = 0;
    bool dynamic = false;
    // How often each function runs in a step: once per call of a caller's
    // run (a function that equal parts were folded into runs once per
    // part: rankc-fold-equal-functions), once if nothing here calls it.
    DenseMap<Operation *, SmallVector<func::CallOp>> callers =
        rankc::callersOf(module);
    DenseMap<Operation *, int64_t> runs;
    std::function<int64_t(Operation *)> runsOf = [&](Operation *fn) {
      auto [it, fresh] = runs.try_emplace(fn, 1);
      if (!fresh)
        return it->second;
      int64_t n = 0;
      for (func::CallOp call : callers.lookup(fn))
        n += runsOf(call->getParentOfType<FunctionOpInterface>());
      return runs[fn] = std::max<int64_t>(n, 1);
    };
    auto count = [&](Operation *alloc, MemRefType type, int64_t &sum) {
      int64_t bytes = rankc::alignedBytes(type);
      if (bytes < 0)
        dynamic = true;
      else
        sum += bytes *
               runsOf(alloc->getParentOfType<FunctionOpInterface>());
    };
    // (Device code allocates nothing itself: gpu.module bodies are skipped.)
    int64_t scratch = 0;
    bool scratchOnDevice = false;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      // The planned buffers' block (rankc-plan-buffers): one for every
      // step, the largest a step function asks for.
      if (auto bytes = op->getAttrOfType<IntegerAttr>(rankc::kScratchBytes))
        scratch = std::max(scratch, bytes.getInt());
      if (op->hasAttr("rankc.scratch_on_device"))
        scratchOnDevice = true;
      if (!isa<memref::AllocOp, gpu::AllocOp>(op))
        return WalkResult::advance();
      // Inside a loop an allocation happens as often as the loop runs.
      if (!isa<FunctionOpInterface>(op->getParentOp()))
        dynamic = true;
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        count(op, alloc.getType(), host);
      else
        count(op, cast<gpu::AllocOp>(op).getMemref().getType(), device);
      return WalkResult::advance();
    });
    Builder b(module.getContext());
    module->setAttr("rankc.step_host_bytes", b.getI64IntegerAttr(host));
    module->setAttr("rankc.step_device_bytes", b.getI64IntegerAttr(device));
    module->setAttr("rankc.step_scratch_bytes", b.getI64IntegerAttr(scratch));
    if (device > 0 || scratchOnDevice)
      module->setAttr("rankc.step_buffers_on_device", b.getUnitAttr());
    if (dynamic)
      module->setAttr("rankc.step_bytes_dynamic", b.getUnitAttr());
  }
};

} // namespace
