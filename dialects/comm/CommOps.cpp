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
                             UnitAttr &relative) {
  int64_t value = 0;
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
                      UnitAttr relative) {
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

/// Shared checks of every message: a static shape and a valid tag and peer.
static LogicalResult verifyMessage(Operation *op, RankedTensorType type,
                                   int64_t peer, bool relative,
                                   Attribute tag) {
  if (!type.hasStaticShape())
    return op->emitOpError("needs a statically shaped tensor, got ") << type;
  if (!isValidTag(tag))
    return op->emitOpError("tag must be an integer in [0, 2^31) or a "
                           "non-empty string, got ")
           << tag;
  if (!relative && peer < 0)
    return op->emitOpError("peer rank must be >= 0, got ") << peer;
  return success();
}

LogicalResult SendOp::verify() {
  return verifyMessage(*this, getValue().getType(), getPeer(), getRelative(),
                       getTag());
}

LogicalResult RecvOp::verify() {
  return verifyMessage(*this, getResult().getType(), getPeer(), getRelative(),
                       getTag());
}

LogicalResult AllReduceOp::verify() {
  RankedTensorType type = getValue().getType();
  if (!type.hasStaticShape())
    return emitOpError("needs a statically shaped tensor, got ") << type;
  if (!isValidTag(getTag()))
    return emitOpError("tag must be an integer in [0, 2^31) or a non-empty "
                       "string, got ")
           << getTag();
  if (getReduce() == ReduceKind::mean && !isa<FloatType>(type.getElementType()))
    return emitOpError("'mean' needs a floating-point tensor, got ") << type;
  if (type.getElementType().isInteger(1) &&
      (getReduce() == ReduceKind::sum || getReduce() == ReduceKind::prod))
    return emitOpError("'")
           << stringifyReduceKind(getReduce())
           << "' of booleans is not defined; use 'max' (or) or 'min' (and)";
  return success();
}
