//===- rankc-opt.cpp - mlir-opt with rankc's dialect and passes -----------===//
//
// Upstream's passes and dialects plus rankc's: the comm dialect, every
// layer's passes and the pipelines of `rankc compile`. `--help` ends with
// rankc's passes listed by layer (from each layer's Passes.td).
//
//===----------------------------------------------------------------------===//

#include "rankc/InitAll.h"
#include "rankc/Pipelines/Pipelines.h"

#include "mlir/InitAllPasses.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace {
struct LayerPass {
  const char *layer;
  const char *argument;
};
constexpr LayerPass kLayerPasses[] = {
#include "PassLayers.inc"
};

/// "rankc's passes by layer:" and each layer's passes with their summaries,
/// then the pipelines that put them together.
std::string passesByLayer() {
  std::string text = "\nrankc's passes by layer:\n";
  llvm::StringRef layer;
  for (const LayerPass &p : kLayerPasses) {
    if (layer != p.layer) {
      layer = p.layer;
      text += "\n  " + layer.str() + "\n";
    }
    const mlir::PassInfo *info = mlir::PassInfo::lookup(p.argument);
    text += "    --" + std::string(p.argument);
    if (info)
      text += "  " + info->getPassDescription().str();
    text += "\n";
  }
  text += "\n  pipelines: every layer put together (lib/Pipelines)\n";
  for (const char *pipeline :
       {"rankc-pipeline", "rankc-lower-cpu", "rankc-lower-cuda"}) {
    const mlir::PassPipelineInfo *info =
        mlir::PassPipelineInfo::lookup(pipeline);
    text += "    --" + std::string(pipeline);
    if (info)
      text += "  " + info->getPassDescription().str();
    text += "\n";
  }
  return text;
}
} // namespace

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  rankc::registerRankcPasses();
  rankc::registerRankcPipelines();
  static const std::string layers = passesByLayer();
  static llvm::cl::extrahelp layerHelp(layers.c_str());
  mlir::DialectRegistry registry;
  rankc::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "rankc optimizer driver\n", registry));
}
