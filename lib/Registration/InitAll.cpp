//===- InitAll.cpp - everything a rankc tool registers --------------------===//
//
// Our dialect, and upstream's dialects and interface extensions: the
// backends bufferize and lower through many upstream dialects, whose
// bufferization and lowering interfaces are registered as extensions.
//
//===----------------------------------------------------------------------===//

#include "rankc/InitAll.h"
#include "rankc/Dialect/Comm/Comm.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/OpenMP/OpenMPToLLVMIRTranslation.h"

void rankc::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<comm::CommDialect>();
  // First: an op keeps the first model attached for an interface.
  registerCallBufferization(registry);
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerBuiltinDialectTranslation(registry);
  mlir::registerLLVMDialectTranslation(registry);
  // The CPU backend's --threads: omp.parallel and omp.wsloop.
  mlir::registerOpenMPDialectTranslation(registry);
  // The CUDA backend: kernels (NVVM) and their embedding (gpu.binary).
  mlir::registerGPUDialectTranslation(registry);
  mlir::registerNVVMDialectTranslation(registry);
  mlir::gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
}
