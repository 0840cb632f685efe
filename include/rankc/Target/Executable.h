//===- Executable.h - partitioned module to programs on disk ----*- C++ -*-===//
//
// `rankc compile --emit exe`: one executable per program (its module lowered
// to LLVM, emitted as object code in-process, linked with the runtime and
// MPICH), OUT/launch and OUT/plan.json.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_TARGET_EXECUTABLE_H
#define RANKC_TARGET_EXECUTABLE_H

#include "rankc/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace rankc {

/// Writes the executables, launch and plan.json of a partitioned module into
/// the folder `out`. Everything is built in a sibling staging folder first:
/// on failure `out` is left as it was.
struct BuildOptions {
  bool bulkSynchronous = false;
  /// Set: `--target cuda` (the parts' computation on the GPU).
  std::optional<CudaOptions> cuda;
};
mlir::LogicalResult writeExecutables(mlir::ModuleOp module,
                                     llvm::StringRef out,
                                     mlir::TimingScope &timing,
                                     const BuildOptions &options);

/// `rankc compile --target cuda --emit ptx`: the PTX of every program's
/// kernels, each module headed by `// program NAME, gpu.module MODULE`.
mlir::LogicalResult writePtx(mlir::ModuleOp module, const CudaOptions &cuda,
                             llvm::raw_ostream &os, mlir::TimingScope &timing);

/// Whether this build of rankc can link CUDA programs.
bool cudaAvailable();

} // namespace rankc

#endif // RANKC_TARGET_EXECUTABLE_H
