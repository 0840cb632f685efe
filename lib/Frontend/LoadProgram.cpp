//===- LoadProgram.cpp - a rankc input file as a module -------------------===//

#include "rankc/Frontend/LoadProgram.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Frontend/DagImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

OwningOpRef<ModuleOp> rankc::loadProgram(MLIRContext *ctx, StringRef path,
                                         llvm::SourceMgr &sourceMgr,
                                         TimingScope &timing) {
  if (!path.ends_with(".mlir"))
    return dag::translateDagToMLIR(ctx, path, timing);

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    emitError(UnknownLoc::get(ctx))
        << "cannot read '" << path << "': " << ec.message();
    return {};
  }
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  TimingScope parseTimer = timing.nest("parse MLIR");
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, ctx);
  parseTimer.stop();
  if (!module)
    return {};
  if (!module->getOperation()->hasAttr(comm::CommDialect::kWorldSize)) {
    emitError(module->getLoc())
        << "not a rankc module: the module has no 'comm.world_size'";
    return {};
  }
  return module;
}
