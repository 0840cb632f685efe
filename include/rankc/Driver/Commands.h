//===- Commands.h - the commands of `rankc`, as library calls ----*- C++ -*-===//
//
// tools/rankc parses the command line (Options.h), sets up MLIR and calls
// these; they return the exit status (cli.md: 0 success, 1 invalid program
// or input).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_DRIVER_COMMANDS_H
#define RANKC_DRIVER_COMMANDS_H

#include "rankc/Driver/Options.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
}

namespace rankc {

/// Prints diagnostics as `error: FILE:LINE:COL: program [r], node 'x': msg`.
mlir::LogicalResult printDiagnostic(mlir::Diagnostic &diag);

/// The output rule of cli.md ("OUT is rankc's"), checked before any work:
/// a refused OUT (or depfile) is named (an `error:` line) and left as it was.
bool outputAllowed(const DriverOptions &o);

/// Writes o.output (or standard output for "-") whole, or not at all.
int writeOutput(const DriverOptions &o,
                llvm::function_ref<mlir::LogicalResult(llvm::raw_ostream &)> write);

/// The module's MLIR to o.output (`--emit mlir`, `rankc import`).
int emitMLIR(mlir::ModuleOp module, const DriverOptions &o);

/// The files `rankc compile` writes with these options (`--print-outputs`).
std::vector<std::string> outputsOf(mlir::ModuleOp module,
                                   const DriverOptions &o);

/// --depfile: a Make rule "first output: every file this compile read".
int writeDepfile(const DriverOptions &o, llvm::ArrayRef<std::string> outputs,
                 llvm::ArrayRef<std::string> read);

/// `rankc compile` past the output check: cache, compile, emit.
int runCompile(mlir::MLIRContext &ctx, const DriverOptions &o,
               const char *argv0, llvm::SourceMgr &sourceMgr,
               mlir::TimingScope &timing);

/// `--bucket-cap-mb auto --machine FILE`: the allreduce fit of the world
/// size nearest the module's, as `comm.machine` on a data-parallel module
/// (comm-bucket-gradients chooses its buckets by it); with `profile` (a
/// `launch --stats` file), the step's measured computation (the slowest
/// rank's median) too. An unreadable file, or one without an allreduce fit
/// (or a profile without a step), is an error naming it.
mlir::LogicalResult applyMachineModel(mlir::ModuleOp module,
                                      llvm::StringRef path,
                                      llvm::StringRef profile);

/// `rankc calibrate` (its own command line: kCalibrateUsage).
int runCalibrate(int argc, char **argv, const char *argv0);
extern const char *const kCalibrateUsage;

} // namespace rankc

#endif // RANKC_DRIVER_COMMANDS_H
