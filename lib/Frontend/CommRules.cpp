//===- CommRules.cpp - send, recv, allreduce ===//
//
// Peers, tags and the reductions an allreduce takes.
//
//===----------------------------------------------------------------------===//

#include "InferenceRules.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace rankc::dag {

static LogicalResult checkPeerAndTag(RuleContext &r) {
  Node &n = r.node;
  const Document &doc = r.doc;
  if (n.has(K_dest) || n.has(K_src)) {
    if (!n.rare().peer.relative && (n.rare().peer.value < 0 || n.rare().peer.value >= doc.worldSize))
      return r.error() << "peer rank " << n.rare().peer.value << " is outside [0, "
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
