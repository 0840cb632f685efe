//===- Pipelines.h - what `rankc compile` runs ------------------*- C++ -*-===//
//
// The pipelines put together from every layer's passes: the partitioning
// pipeline on a comm-level module, and (from Codegen/CPU and Codegen/CUDA)
// each backend's lowering. This is the only layer that knows all of them,
// and the one tools register.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_PIPELINES_PIPELINES_H
#define RANKC_PIPELINES_PIPELINES_H

#include "rankc/Codegen/CPU/Passes.h"
#include "rankc/Codegen/CUDA/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

namespace rankc {

/// The pipeline `rankc compile` runs on a comm-level module (verify, then
/// partition); registered as `rankc-pipeline` for rankc-opt.
/// `bulkSynchronous`: the baseline schedule of bench/overlap.sh (a send
/// waits for all the work of its level and completes before going on).
void buildRankcPipeline(mlir::OpPassManager &pm, bool bulkSynchronous = false);

/// Every layer's passes and the three pipelines (rankc-pipeline,
/// rankc-lower-cpu, rankc-lower-cuda), for rankc-opt.
void registerRankcPasses();
void registerRankcPipelines();

/// Runs `pm` on `op`, verifying once at the end rather than after every
/// pass (MLIR's default): on a program of 10^5 nodes each verification
/// takes about half a second, most of what the partitioning passes cost.
/// RANKC_VERIFY_EACH=1 verifies after every pass again, which names the
/// pass that broke the IR (rankc-opt, and so the lit tests of each pass,
/// always do).
/// The final verification is timed under `timing` when given.
mlir::LogicalResult runVerifyingOnce(mlir::PassManager &pm, mlir::Operation *op,
                                     mlir::TimingScope *timing = nullptr);

} // namespace rankc

#endif // RANKC_PIPELINES_PIPELINES_H
