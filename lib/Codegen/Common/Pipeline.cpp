//===- Pipeline.cpp - the stages both backends share ----------------------===//

#include "rankc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"

#include <cstdio>
#include <cstdlib>
#include <string_view>

bool rankc::planBuffersEnabled() {
  const char *env = std::getenv("RANKC_PLAN_BUFFERS");
  return !env || std::string_view(env) != "0";
}

void rankc::buildBufferizationPipeline(mlir::OpPassManager &pm) {
  pm.addNestedPass<mlir::func::FuncOp>(
      mlir::bufferization::createEmptyTensorToAllocTensorPass());
  // Tensor constants' globals in program order, so that they are the same
  // on every run (one-shot-bufferize would make them in an order that
  // depends on pointers); of its alignment, so that it reuses them.
  rankc::RankcBufferizeModuleOptions bufferize;
  pm.addPass(rankc::createRankcConstantGlobals(
      rankc::RankcConstantGlobalsOptions{bufferize.alignment}));
  // A function with a value of many uses (a schedule whose input every
  // part reads) is bufferized in segments: one-shot's analysis is
  // quadratic in the uses of one value.
  // RANKC_BUFFERIZATION_SEGMENTS=MAX_USES:SEGMENT overrides the defaults
  // (the random programs' tests cut every function this way).
  rankc::RankcOutlineBufferizationSegmentsOptions segments;
  if (const char *env = std::getenv("RANKC_BUFFERIZATION_SEGMENTS")) {
    long long maxUses = 0, segment = 0;
    if (std::sscanf(env, "%lld:%lld", &maxUses, &segment) == 2) {
      segments.maxUses = maxUses;
      segments.segment = segment;
    }
  }
  pm.addPass(rankc::createRankcOutlineBufferizationSegments(segments));
  // One-shot-bufferize with function boundaries, its module driver linear
  // in the functions' arguments and results (rankc-bufferize-module).
  // RANKC_UPSTREAM_BUFFERIZE=1 runs upstream's pass instead, with the same
  // options: the tests compare the two builds byte for byte.
  const char *upstream = std::getenv("RANKC_UPSTREAM_BUFFERIZE");
  if (upstream && std::string_view(upstream) == "1") {
    mlir::bufferization::OneShotBufferizePassOptions options;
    options.bufferAlignment = bufferize.alignment;
    options.bufferizeFunctionBoundaries = true;
    options.functionBoundaryTypeConversion =
        mlir::bufferization::LayoutMapOption::IdentityLayoutMap;
    pm.addPass(mlir::bufferization::createOneShotBufferizePass(options));
  } else {
    pm.addPass(rankc::createRankcBufferizeModule(bufferize));
  }
  pm.addPass(rankc::createRankcInlineBufferizationSegments());
  // What parts return, written where their callers allocate: buffers the
  // step's memory plan (rankc-plan-buffers, in each backend) can place.
  if (rankc::planBuffersEnabled()) {
    pm.addPass(rankc::createRankcPartOutParams());
    // Parameters and moments updated in the buffers they are read from.
    pm.addPass(rankc::createRankcDonateCarried());
  }
  // A result written in place through a subview is "copied" onto an equal
  // subview of its own buffer: CSE makes the two one value, and the
  // canonicalizer then drops the copy onto itself.
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createCSEPass());
  pm.addNestedPass<mlir::func::FuncOp>(mlir::createCanonicalizerPass());
}

void rankc::addArgumentsThroughMemory(mlir::OpPassManager &pm) {
  rankc::RankcArgumentsThroughMemoryOptions options;
  if (const char *env = std::getenv("RANKC_ARGUMENTS_THROUGH_MEMORY")) {
    long long maxArguments = 0;
    if (std::sscanf(env, "%lld", &maxArguments) == 1)
      options.maxArguments = maxArguments;
  }
  pm.addPass(rankc::createRankcArgumentsThroughMemory(options));
}

void rankc::buildGlueSplittingPipeline(mlir::OpPassManager &pm) {
  pm.addPass(createRankcResultsThroughMemory());
  pm.addNestedPass<mlir::LLVM::LLVMFuncOp>(createRankcSplitGlueBlocks());
  pm.addPass(createRankcSplitGlueFunctions());
  // (The loads of the frame the cut made, spread over blocks too.)
  pm.addNestedPass<mlir::LLVM::LLVMFuncOp>(createRankcSplitGlueBlocks());
}
