//===- Passes.h - the CUDA backend ------------------------------*- C++ -*-===//
//
// From one partitioned program to the LLVM dialect with NVVM kernels
// (descriptions: Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_CODEGEN_CUDA_PASSES_H
#define RANKC_CODEGEN_CUDA_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace rankc {

/// On a contraction: the narrow float type (bf16, f16) both its f32
/// operands were widened from (rankc-gpu-narrow-contractions).
inline constexpr llvm::StringLiteral kNarrowOperands = "rankc.narrow_operands";
/// On the generic that rounds a GEMM's f32 result to its readers' narrow
/// type (rankc-gpu-round-gemm-results): the GEMM call writes it instead.
inline constexpr llvm::StringLiteral kGemmResult = "rankc.gemm_result";
/// The runtime's record of a bad index (rankc-gpu-index-checks): memory of
/// its own, shared with no buffer of the program.
inline constexpr llvm::StringLiteral kIndexRecordFunction =
    "rankc_rt_index_record";

#define GEN_PASS_DECL
#include "rankc/Codegen/CUDA/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rankc/Codegen/CUDA/Passes.h.inc"

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
  /// Row chains as one kernel each (rankc-linalg-to-gpu-loops' `row-chains`;
  /// `RANKC_GPU_ROW_CHAINS=0` turns them off in `rankc compile`).
  bool rowChains = true;
  /// $CUDA_ROOT, $CUDA_HOME or $CUDA_PATH (the first set), else
  /// /usr/local/cuda, else where ptxas is on PATH. Empty, with `why`, when
  /// there is none (CudaToolkit.cpp).
  static std::string findToolkit(std::string &why);
  /// The PTX version CUDA 13's ptxas needs for `chip`.
  static std::string defaultFeatures(llvm::StringRef chip);
};

/// From one partitioned program's module to the LLVM dialect with NVVM
/// kernels: the MPI schedule stays on the host (convert-comm-to-runtime),
/// the parts' computation becomes kernels over device buffers (fusion,
/// bufferization, rankc-gpu-device-buffers, rankc-linalg-to-gpu-loops,
/// upstream's parallel-loops-to-gpu, async region and NVVM pipeline).
/// Registered as `rankc-lower-cuda`.
void buildCudaLoweringPipeline(mlir::OpPassManager &pm,
                               const CudaOptions &options,
                               bool bulkSynchronous = false);

} // namespace rankc

#endif // RANKC_CODEGEN_CUDA_PASSES_H
