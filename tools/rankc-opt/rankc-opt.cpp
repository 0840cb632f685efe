//===- rankc-opt.cpp - mlir-opt with rankc's dialects and passes ----------===//

#include "rankc/InitAll.h"
#include "rankc/Transforms/Passes.h"
#include "rankc/Conversion/Passes.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  rankc::registerRankcPasses();
  rankc::registerRankcConversionPasses();
  rankc::registerRankcPipelines();
  mlir::DialectRegistry registry;
  rankc::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "rankc optimizer driver\n", registry));
}
