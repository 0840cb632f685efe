//===- rankc.cpp - the rankc driver ---------------------------------------===//
//
// Thin: the command line of shared/spec/cli.md (lib/Driver/Options.cpp)
// turned into calls of lib/Driver, diagnostics into `error:` lines. Exit
// status: 0 success, 1 invalid program or input, 2 wrong command line.
//
//===----------------------------------------------------------------------===//

#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Driver/Commands.h"
#include "rankc/Driver/Driver.h"
#include "rankc/Frontend/LoadProgram.h"
#include "rankc/InitAll.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>

using namespace mlir;

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // (calibrate runs measurements, no MLIR: a command line of its own)
  if (argc >= 2 && llvm::StringRef(argv[1]) == "calibrate")
    return rankc::runCalibrate(argc, argv, argv[0]);
  rankc::DriverOptions o;
  std::string error;
  switch (rankc::parseCommandLine(argc, argv, o, error)) {
  case rankc::CommandLine::Help:
    llvm::outs() << rankc::kUsage;
    return 0;
  case rankc::CommandLine::Error:
    llvm::errs() << "error: " << error << "\n" << rankc::kUsage;
    return 2;
  case rankc::CommandLine::Run:
    break;
  }

  DialectRegistry registry;
  rankc::registerAllDialects(registry);
  MLIRContext ctx(registry);
  // The frontend builds ops of these; passes load what else they need.
  ctx.loadDialect<rankc::comm::CommDialect, arith::ArithDialect,
                  func::FuncDialect, linalg::LinalgDialect, math::MathDialect,
                  tensor::TensorDialect>();
  ScopedDiagnosticHandler handler(&ctx, rankc::printDiagnostic);
  // Errors name the file, program and node; a dump of the op adds nothing.
  ctx.printOpOnDiagnostic(false);

  DefaultTimingManager timingManager;
  timingManager.setEnabled(o.timing);
  TimingScope timing = timingManager.getRootScope();

  llvm::SourceMgr sourceMgr;
  // Freeing a module of 10^6 ops and its context takes seconds that nobody
  // waits for: once the results are written, rankc exits without tearing
  // them down (as clang's -disable-free does), the timing report printed
  // first.
  auto exitNow = [&](int rc) -> int {
    timing.stop();
    timingManager.print();
    llvm::outs().flush();
    llvm::errs().flush();
    std::fflush(nullptr);
    std::_Exit(rc);
  };
  if (o.command == "check")
    return exitNow(failed(rankc::checkInput(ctx, o.input, sourceMgr, timing,
                                            llvm::outs())));

  if (!o.printOutputs && !rankc::outputAllowed(o))
    return exitNow(1);

  if (o.command == "import") {
    OwningOpRef<ModuleOp> module =
        rankc::loadProgram(&ctx, o.input, sourceMgr, timing);
    return module ? rankc::emitMLIR(*module, o) : 1;
  }

  if (o.printOutputs) {
    // Configure time (CMake): the programs' names are enough, and the
    // frontend alone gives them.
    OwningOpRef<ModuleOp> module =
        rankc::loadProgram(&ctx, o.input, sourceMgr, timing);
    if (!module)
      return 1;
    for (const std::string &f : rankc::outputsOf(*module, o))
      llvm::outs() << f << "\n";
    return 0;
  }

  return exitNow(rankc::runCompile(ctx, o, argv[0], sourceMgr, timing));
}
