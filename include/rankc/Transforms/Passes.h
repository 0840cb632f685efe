//===- Passes.h - rankc's passes --------------------------------*- C++ -*-===//

#ifndef RANKC_TRANSFORMS_PASSES_H
#define RANKC_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace rankc {

#define GEN_PASS_DECL
#include "rankc/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rankc/Transforms/Passes.h.inc"

/// On a runtime function's declaration: the function enqueues its GPU work
/// on the stream every kernel of the process uses, so it needs no host
/// wait before it (rankc-gpu-stream-ordered-calls).
constexpr llvm::StringLiteral kStreamOrdered = "rankc.stream_ordered";
/// On a part's function after comm-lower-to-runtime (which drops the comm.*
/// attributes): its results go only to the runtime or to other parts.
constexpr llvm::StringLiteral kPartFunction = "rankc.part";

/// The pipeline `rankc compile` runs on a comm-level module (verify, then
/// partition); registered as `rankc-pipeline` for rankc-opt.
/// `bulkSynchronous`: the baseline schedule of bench/overlap.sh (a send
/// waits for all the work of its level and completes before going on).
void buildRankcPipeline(mlir::OpPassManager &pm, bool bulkSynchronous = false);
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

/// From one partitioned program's module to the LLVM dialect, for the CPU:
/// lower messages to the runtime, bufferize, linalg to loops, to LLVM.
/// `threads` > 1 (rankc compile --threads): large loop nests and GEMMs are
/// shared among that many OpenMP threads. Registered as `rankc-lower-cpu`.
void buildCpuLoweringPipeline(mlir::OpPassManager &pm,
                              bool bulkSynchronous = false,
                              int64_t threads = 1);

/// What the CUDA backend is built for.
struct CudaOptions {
  std::string chip = "sm_90";
  std::string features = "+ptx80"; ///< PTX ISA; see defaultFeatures()
  std::string format = "fatbin";   ///< gpu-module-to-binary: fatbin|bin|isa
  int64_t threads = 256;           ///< threads per block
  std::string precision = "f32";   ///< f32 GEMMs: f32 | tf32 | bf16
  std::string toolkit;             ///< CUDA: ptxas, libdevice
  /// gpu.binary and gpu.launch_func lowered to runtime calls in the LLVM
  /// dialect (rankc-gpu-launch-to-llvm); off, they are left for the
  /// translation (`--emit ptx` reads the binaries).
  bool lowerLaunches = true;
  /// $CUDA_ROOT, $CUDA_HOME or $CUDA_PATH (the first set), else
  /// /usr/local/cuda, else where ptxas is on PATH. Empty, with `why`, when
  /// there is none.
  static std::string findToolkit(std::string &why);
  /// The PTX version CUDA 13's ptxas needs for `chip`.
  static std::string defaultFeatures(llvm::StringRef chip);
};

/// From one partitioned program's module to the LLVM dialect with NVVM
/// kernels: the MPI schedule stays on the host (comm-lower-to-runtime), the
/// parts' computation becomes kernels over device buffers (fusion,
/// bufferization, rankc-gpu-device-buffers, rankc-linalg-to-gpu-loops,
/// upstream's parallel-loops-to-gpu, async region and NVVM pipeline).
/// Registered as `rankc-lower-cuda`.
void buildCudaLoweringPipeline(mlir::OpPassManager &pm,
                               const CudaOptions &options,
                               bool bulkSynchronous = false);

} // namespace rankc

#endif // RANKC_TRANSFORMS_PASSES_H
