//===- Executable.h - partitioned module to programs on disk ----*- C++ -*-===//
//
// `rankc compile --emit exe`: one executable per program (its module lowered
// to LLVM, emitted as object code in-process, linked with the runtime and
// MPICH), OUT/launch and OUT/plan.json.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_TARGET_EXECUTABLE_H
#define RANKC_TARGET_EXECUTABLE_H

#include "rankc/Target/RuntimeFiles.h"
#include "rankc/Codegen/CUDA/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace rankc {

/// What `rankc compile` writes into OUT: `--emit exe` (executables,
/// launch, plan.json) or `--emit lib` (OUT/lib/librankc_P.so,
/// OUT/include/rankc_P.h, OUT/python/rankc_program.py, plan.json).
enum class Emit { Exe, Lib };

struct BuildOptions {
  bool bulkSynchronous = false;
  /// Set: `--target cuda` (the parts' computation on the GPU).
  std::optional<CudaOptions> cuda;
  Emit emit = Emit::Exe;
  RuntimeFiles runtime;
  std::string inputName; ///< the DAG file, named in generated headers
  std::string inputPath; ///< the DAG file as given: OUT may not hold it
  /// The processor host code is compiled for (--cpu): an LLVM CPU name,
  /// or "native" for the compiling machine's own (with all its features).
  std::string cpu = "x86-64-v3";
  /// Threads of each rank (--threads, CPU only): OpenMP when > 1.
  int64_t threads = 1;
};

/// True if `cpu` is "native" or a processor LLVM knows for the host's
/// architecture.
bool isKnownCpu(llvm::StringRef cpu);

/// Writes the programs of a partitioned module into the folder `out`.
/// Everything is built in a sibling staging folder first: on failure `out`
/// is left as it was.
mlir::LogicalResult writePrograms(mlir::ModuleOp module, llvm::StringRef out,
                                  mlir::TimingScope &timing,
                                  const BuildOptions &options);

/// The files writePrograms writes (plan.json first), for --print-outputs
/// and --depfile. Needs only the programs' names (an imported module will do).
std::vector<std::string> programOutputs(mlir::ModuleOp module,
                                        llvm::StringRef out, Emit emit);

/// `rankc compile --target cuda --emit ptx`: the PTX of every program's
/// kernels, each module headed by `// program NAME, gpu.module MODULE`.
mlir::LogicalResult writePtx(mlir::ModuleOp module, const CudaOptions &cuda,
                             llvm::raw_ostream &os, mlir::TimingScope &timing);

} // namespace rankc

#endif // RANKC_TARGET_EXECUTABLE_H
