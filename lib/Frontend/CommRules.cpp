//===- CommRules.cpp - send, recv, allreduce ===//
//
// Peers, tags and the reductions an allreduce takes.
//
//===----------------------------------------------------------------------===//

#include "InferenceRules.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace rankc::dag {

/// A grid peer's grid covers the world exactly.
static LogicalResult checkGrid(RuleContext &r, const Peer &peer) {
  int64_t product = 1;
  for (int64_t p : peer.grid) {
    if (product > r.doc.worldSize) // (no overflow: extents are >= 1)
      break;
    product *= p;
  }
  if (product != r.doc.worldSize)
    return r.error() << "grid peer: the grid " << shapeText(peer.grid)
                     << " has " << (product > r.doc.worldSize ? "more" : "fewer")
                     << " ranks than the world (" << r.doc.worldSize
                     << "); its extents multiply to world_size";
  return success();
}

static LogicalResult checkPeerAndTag(RuleContext &r) {
  Node &n = r.node;
  const Document &doc = r.doc;
  if (n.has(K_dest) || n.has(K_src)) {
    const Peer &peer = n.rare().peer;
    if (peer.isGrid() && failed(checkGrid(r, peer)))
      return failure();
    if (!peer.isGrid() && !peer.relative &&
        (peer.value < 0 || peer.value >= doc.worldSize))
      return r.error() << "peer rank " << peer.value << " is outside [0, "
                       << doc.worldSize << ")";
  }
  if (auto *i = std::get_if<int64_t>(&n.rare().tag)) {
    if (*i < 0 || *i >= (int64_t(1) << 31))
      return r.error() << "tag " << *i
                       << " is not a non-negative integer below 2^31";
  } else if (std::get<std::string>(n.rare().tag).empty()) {
    return r.error() << "a string tag must not be empty";
  }
  return success();
}


LogicalResult inferComm(RuleContext &r) {
  Node &n = r.node;
  switch (n.op) {
  case Op::Recv:
    if (failed(r.checkShape(n.shape, "shape")))
      return failure();
    n.outShape.assign(n.shape.begin(), n.shape.end());
    n.outDType = n.dtype;
    if (failed(checkPeerAndTag(r)))
      return failure();
    if (n.rare().peer.leavesGrid() && !n.has(K_fill))
      return r.error() << "recv from a grid peer whose shift leaves a "
                          "non-periodic axis needs 'fill' (its value on the "
                          "ranks at that edge)";
    if (n.has(K_fill) && failed(r.checkScalarFits(n.rare().fill, n.outDType,
                                                  "'fill'")))
      return failure();
    break;
  case Op::Send:
    if (failed(checkPeerAndTag(r)))
      return failure();
    n.outShape = r.arg(0).outShape;
    n.outDType = r.arg(0).outDType;
    break;
  case Op::AllReduce:
    if (failed(checkPeerAndTag(r)))
      return failure();
    n.outShape = r.arg(0).outShape;
    n.outDType = r.arg(0).outDType;
    if (n.reduce == Reduce::Argmax)
      return r.error() << "allreduce takes 'sum', 'prod', 'max', 'min' or "
                            "'mean' ('argmax' is pool's)";
    if (n.reduce == Reduce::Mean && failed(r.needFloat(n.outDType)))
      return failure();
    if (n.outDType == DType::Bool &&
        (n.reduce == Reduce::Sum || n.reduce == Reduce::Prod))
      return r.error() << "allreduce '"
                       << (n.reduce == Reduce::Sum ? "sum" : "prod")
                       << "' of bool is not defined; use 'max' (or) or "
                            "'min' (and)";
    break;
  default:
    break;
  }
  return success();
}

} // namespace rankc::dag
