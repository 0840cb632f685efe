//===- ConstantGlobals.cpp - tensor constants' globals, in program order --===//
//
// One-shot module bufferization makes the memref.global of a tensor
// constant when it bufferizes the constant, function after function in an
// order that depends on pointer values; the globals' order and names then
// changed between two runs of the same build (Passes.td says more). Made
// here first, through the same upstream function and in module order, they
// are the same on every run, and bufferization reuses them. A large splat
// becomes a fill instead: a global would be all its bytes in the binary.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/Transforms/BufferUtils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/SymbolTable.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCCONSTANTGLOBALS
#include "rankc/Codegen/Common/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

struct ConstantGlobalsPass
    : public rankc::impl::RankcConstantGlobalsBase<ConstantGlobalsPass> {
  using Base::Base;

  /// fill(empty) for a static splat of more than maxSplatElements.
  bool replaceLargeSplat(arith::ConstantOp constant) {
    auto type = dyn_cast<RankedTensorType>(constant.getType());
    auto splat = dyn_cast<SplatElementsAttr>(constant.getValue());
    if (!type || !splat || !type.hasStaticShape() ||
        type.getNumElements() <= maxSplatElements)
      return false;
    OpBuilder b(constant);
    Location loc = constant.getLoc();
    Value scalar = arith::ConstantOp::create(
        b, loc, cast<TypedAttr>(splat.getSplatValue<Attribute>()));
    Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                          type.getElementType());
    constant.replaceAllUsesWith(
        linalg::FillOp::create(b, loc, scalar, empty).getResult(0));
    constant.erase();
    return true;
  }

  void runOnOperation() override {
    SymbolTableCollection symbols;
    for (auto fn : getOperation().getOps<func::FuncOp>()) {
      WalkResult walked = fn.walk([&](arith::ConstantOp constant) {
        if (!isa<RankedTensorType>(constant.getType()) ||
            replaceLargeSplat(constant))
          return WalkResult::advance();
        if (failed(bufferization::getGlobalFor(constant, symbols, alignment))) {
          constant.emitError("cannot make a global of this tensor constant");
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      });
      if (walked.wasInterrupted())
        return signalPassFailure();
    }
  }
};

} // namespace
