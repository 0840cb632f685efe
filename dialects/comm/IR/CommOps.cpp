//===- CommOps.cpp - comm operations --------------------------------------===//

#include "rankc/Dialect/Comm/Comm.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace rankc::comm;

//===----------------------------------------------------------------------===//
// Custom assembly: peers (`rank 3`, `offset -1`) and tags (`7`, `"halo"`)
//===----------------------------------------------------------------------===//

static ParseResult parsePeer(OpAsmParser &parser, IntegerAttr &peer,
                             UnitAttr &relative, GridAttr &grid) {
  int64_t value = 0;
  if (succeeded(parser.parseOptionalKeyword("grid"))) {
    peer = parser.getBuilder().getI64IntegerAttr(0);
    return parser.parseCustomAttributeWithFallback(grid);
  }
  if (succeeded(parser.parseOptionalKeyword("offset"))) {
    relative = parser.getBuilder().getUnitAttr();
  } else if (parser.parseKeyword("rank")) {
    return failure();
  }
  if (parser.parseInteger(value))
    return failure();
  peer = parser.getBuilder().getI64IntegerAttr(value);
  return success();
}

static void printPeer(OpAsmPrinter &printer, Operation *, IntegerAttr peer,
                      UnitAttr relative, GridAttr grid) {
  if (grid) {
    printer << "grid ";
    printer.printStrippedAttrOrType(grid);
    return;
  }
  printer << (relative ? "offset " : "rank ") << peer.getInt();
}

static ParseResult parseTag(OpAsmParser &parser, Attribute &tag) {
  std::string text;
  if (succeeded(parser.parseOptionalString(&text))) {
    tag = parser.getBuilder().getStringAttr(text);
    return success();
  }
  int64_t value = 0;
  if (parser.parseInteger(value))
    return failure();
  tag = parser.getBuilder().getI64IntegerAttr(value);
  return success();
}

static void printTag(OpAsmPrinter &printer, Operation *, Attribute tag) {
  printer << tagToString(tag);
}

#define GET_OP_CLASSES
#include "rankc/Dialect/Comm/CommOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Verifiers
//===----------------------------------------------------------------------===//

/// What messages and collectives share: a static shape and a valid tag.
static LogicalResult verifyShapeAndTag(Operation *op, RankedTensorType type,
                                       Attribute tag) {
  if (!type.hasStaticShape())
    return op->emitOpError("needs a statically shaped tensor, got ") << type;
  if (!isValidTag(tag))
    return op->emitOpError("tag must be an integer in [0, 2^31) or a "
                           "non-empty string, got ")
           << tag;
  return success();
}

/// Shared checks of every message: a static shape and a valid tag and peer.
static LogicalResult verifyMessage(Operation *op, RankedTensorType type,
                                   int64_t peer, bool relative,
                                   Attribute tag, GridAttr grid = {}) {
  if (failed(verifyShapeAndTag(op, type, tag)))
    return failure();
  if (grid && (relative || peer != 0))
    return op->emitOpError("a grid peer has no rank or offset besides it");
  if (!grid && !relative && peer < 0)
    return op->emitOpError("peer rank must be >= 0, got ") << peer;
  return success();
}

/// A receive's `fill`: a scalar of its element type, present wherever its
/// grid peer may be missing.
static LogicalResult verifyFill(Operation *op, RankedTensorType type,
                                GridAttr grid, TypedAttr fill) {
  if (fill && fill.getType() != type.getElementType())
    return op->emitOpError("'fill' must be a scalar of the element type ")
           << type.getElementType() << ", got " << fill;
  if (fill && !isa<IntegerAttr, FloatAttr>(fill))
    return op->emitOpError("'fill' must be an integer or float attribute");
  if (grid && grid.leavesGrid() && !fill)
    return op->emitOpError("receives from a grid peer that some ranks lack "
                           "(a shift off a non-periodic axis): it needs 'fill'");
  return success();
}

LogicalResult SendOp::verify() {
  return verifyMessage(*this, getValue().getType(), getPeer(), getRelative(),
                       getTag(), getGridAttr());
}

LogicalResult RecvOp::verify() {
  if (failed(verifyMessage(*this, getResult().getType(), getPeer(),
                           getRelative(), getTag(), getGridAttr())))
    return failure();
  return verifyFill(*this, getResult().getType(), getGridAttr(),
                    getFillAttr());
}

/// The checks every allreduce shares, started or not.
static LogicalResult verifyAllReduce(Operation *op, RankedTensorType type,
                                     ReduceKind reduce, Attribute tag) {
  if (failed(verifyShapeAndTag(op, type, tag)))
    return failure();
  if (reduce == ReduceKind::mean && !isa<FloatType>(type.getElementType()))
    return op->emitOpError("'mean' needs a floating-point tensor, got ")
           << type;
  if (type.getElementType().isInteger(1) &&
      (reduce == ReduceKind::sum || reduce == ReduceKind::prod))
    return op->emitOpError("'")
           << stringifyReduceKind(reduce)
           << "' of booleans is not defined; use 'max' (or) or 'min' (and)";
  return success();
}

LogicalResult AllReduceOp::verify() {
  return verifyAllReduce(*this, getValue().getType(), getReduce(), getTag());
}

//===----------------------------------------------------------------------===//
// The asynchronous schedule
//===----------------------------------------------------------------------===//

void ISendOp::build(OpBuilder &b, OperationState &state, Value value,
                    SendOp send, int32_t event) {
  build(b, state, RequestType::get(b.getContext(), Type()), value,
        send.getPeerAttr(), send.getRelativeAttr(), send.getGridAttr(),
        send.getTagAttr(), send.getMpiTagAttr(), b.getI32IntegerAttr(event));
}

void IRecvOp::build(OpBuilder &b, OperationState &state, RecvOp recv,
                    int32_t event) {
  build(b, state, RequestType::get(b.getContext(), recv.getResult().getType()),
        recv.getPeerAttr(), recv.getRelativeAttr(), recv.getGridAttr(),
        recv.getTagAttr(), recv.getMpiTagAttr(), b.getI32IntegerAttr(event),
        recv.getFillAttr());
}

void IAllReduceOp::build(OpBuilder &b, OperationState &state,
                         AllReduceOp allreduce, int32_t event) {
  build(b, state,
        RequestType::get(b.getContext(), allreduce.getValue().getType()),
        allreduce.getReduceAttr(), allreduce.getValue(), allreduce.getTagAttr(),
        b.getI32IntegerAttr(event));
}

LogicalResult ISendOp::verify() {
  return verifyMessage(*this, getValue().getType(), getPeer(), getRelative(),
                       getTag(), getGridAttr());
}

LogicalResult IRecvOp::verify() {
  auto type = dyn_cast_or_null<RankedTensorType>(
      getRequest().getType().getValueType());
  if (!type)
    return emitOpError("a receive's request names the tensor it delivers: "
                       "!comm.request<tensor<...>>");
  if (failed(verifyMessage(*this, type, getPeer(), getRelative(), getTag(),
                           getGridAttr())))
    return failure();
  return verifyFill(*this, type, getGridAttr(), getFillAttr());
}

LogicalResult IAllReduceOp::verify() {
  return verifyAllReduce(*this, getValue().getType(), getReduce(), getTag());
}

// `comm.wait %r` for a send's request; `comm.wait %r : tensor<...>` for one
// that delivers a value (its request is then !comm.request<tensor<...>>).
ParseResult WaitOp::parse(OpAsmParser &parser, OperationState &state) {
  OpAsmParser::UnresolvedOperand request;
  Type value;
  if (parser.parseOperand(request) ||
      parser.parseOptionalAttrDict(state.attributes))
    return failure();
  if (succeeded(parser.parseOptionalColon()) && parser.parseType(value))
    return failure();
  if (value)
    state.addTypes(value);
  return parser.resolveOperand(
      request, RequestType::get(parser.getContext(), value), state.operands);
}

void WaitOp::print(OpAsmPrinter &printer) {
  printer << " " << getRequest();
  printer.printOptionalAttrDict((*this)->getAttrs());
  if (getValue())
    printer << " : " << getValue().getType();
}

LogicalResult WaitOp::verify() {
  Type delivered = getRequest().getType().getValueType();
  Type result = getValue() ? getValue().getType() : Type();
  if (delivered != result)
    return emitOpError("the request delivers ")
           << (delivered ? delivered : Type(NoneType::get(getContext())))
           << " but the wait gives "
           << (result ? result : Type(NoneType::get(getContext())));
  return success();
}
