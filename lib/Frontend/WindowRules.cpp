//===- WindowRules.cpp - conv and pool (version 2) ===//
//
// Window attributes with their defaults filled in, and the output shapes.
//
//===----------------------------------------------------------------------===//

#include "InferenceRules.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace rankc::dag {

// conv and pool (dag-format.md, "Convolution and pooling"): per spatial
// axis a list of k entries (padding: k [lo, hi] pairs), defaults filled in
// here so that the importer sees every attribute.
LogicalResult inferWindow(RuleContext &r) {
  Program &p = r.program;
  Node &n = r.node;
  const Node &x = p.nodes[n.args[0]];
  const char *name = opName(n.op);
  bool conv = n.op == Op::Conv;
  if (x.outShape.size() < 3)
    return r.error() << "'" << name << "' x has shape "
                     << shapeText(x.outShape)
                     << ": it needs [N, C, D1, ...] (rank >= 3)";
  size_t k = x.outShape.size() - 2;
  NodeAttrs &a = n.rare();
  auto list = [&](std::vector<int64_t> &v, const char *key, int64_t dflt,
                  int64_t least, bool given) -> LogicalResult {
    if (!given) {
      v.assign(k, dflt);
      return success();
    }
    if (v.size() != k)
      return r.error() << "'" << name << "' " << key << " has " << v.size()
                       << " entries; x has " << k << " spatial axes";
    for (int64_t e : v)
      if (e < least)
        return r.error() << "'" << name << "' " << key << " entries must be >= "
                         << least << ", got " << e;
    return success();
  };
  if (!conv && failed(list(a.window, "window", 1, 1, true)))
    return failure();
  if (failed(list(a.stride, "stride", 1, 1, n.has(K_stride))))
    return failure();
  if (!n.has(K_stride) && !conv)
    a.stride = a.window; // pool's default: non-overlapping windows
  if (!n.has(K_padding))
    a.padding.assign(2 * k, 0);
  else if (a.padding.size() != 2 * k)
    return r.error() << "'" << name << "' padding has "
                     << a.padding.size() / 2 << " [lo, hi] pairs; x has " << k
                     << " spatial axes";
  for (int64_t e : a.padding)
    if (e < 0)
      return r.error() << "'" << name
                       << "' padding must be non-negative, got " << e;
  if (failed(list(a.dilation, "dilation", 1, 1, n.has(K_dilation))) ||
      failed(list(a.inputDilation, "input_dilation", 1, 1,
                  n.has(K_input_dilation))))
    return failure();

  // Sizes in 128 bits: a hostile document cannot overflow them.
  auto tooLarge = [&](__int128 v) { return v > (__int128(1) << 59); };
  Shape out{x.outShape[0], 0};
  if (conv) {
    const Node &w = p.nodes[n.args[1]];
    if (failed(isFloat(x.outDType) ? success()
                                   : LogicalResult(r.error()
                                                   << "'conv' takes floats, got "
                                                   << dtypeName(x.outDType))))
      return failure();
    if (w.outDType != x.outDType)
      return r.error() << "'conv' operands have different dtypes ("
                       << dtypeName(x.outDType) << " and "
                       << dtypeName(w.outDType) << "); insert a 'cast'";
    int64_t c = x.outShape[1], g = a.groups;
    if (w.outShape.size() != x.outShape.size())
      return r.error() << "'conv' w has shape " << shapeText(w.outShape)
                       << "; x " << shapeText(x.outShape)
                       << " needs w of rank " << x.outShape.size()
                       << " ([O, C / groups, K1, ...])";
    int64_t o = w.outShape[0];
    if (g < 1 || c % g || o % g)
      return r.error() << "'conv' groups " << g << " must be >= 1 and divide "
                       << "C (" << c << ") and O (" << o << ")";
    if (w.outShape[1] != c / g)
      return r.error() << "'conv' w has " << w.outShape[1]
                       << " input channels per group; x has C = " << c
                       << " in " << g << " group(s): expected " << c / g;
    out[1] = o;
    for (size_t i = 0; i < k; ++i) {
      __int128 d = x.outShape[2 + i], kk = w.outShape[2 + i];
      // The padded, dilated axis (an empty axis dilates to nothing).
      __int128 padded = (d ? (d - 1) * a.inputDilation[i] + 1 : 0) +
                        a.padding[2 * i] + a.padding[2 * i + 1];
      __int128 span = padded - (kk - 1) * a.dilation[i] - 1;
      __int128 e = (span >= 0 ? span / a.stride[i]
                              : -((-span + a.stride[i] - 1) / a.stride[i])) +
                   1;
      if (e < 0 || tooLarge(padded))
        return r.error() << "'conv' kernel (" << int64_t(kk) << ", dilation "
                         << a.dilation[i] << ") is larger than spatial axis "
                         << i << " of x (" << int64_t(d)
                         << ", padded and dilated: " << int64_t(padded) << ")";
      out.push_back(int64_t(e));
    }
  } else {
    if (n.reduce == Reduce::Prod || n.reduce == Reduce::Min)
      return r.error() << "'pool' takes reduce 'max', 'sum', 'mean' or "
                            "'argmax'";
    if (x.outDType == DType::Bool)
      return r.error() << "'pool' does not take bool";
    if (n.reduce == Reduce::Mean && !isFloat(x.outDType))
      return r.error() << "'pool' mean takes floats, got "
                       << dtypeName(x.outDType);
    out[1] = x.outShape[1];
    for (size_t i = 0; i < k; ++i) {
      __int128 d = x.outShape[2 + i], lo = a.padding[2 * i],
               hi = a.padding[2 * i + 1], win = a.window[i];
      if (d + lo + hi < win)
        return r.error() << "'pool' window " << int64_t(win)
                         << " is larger than spatial axis " << i << " of x ("
                         << int64_t(d) << " with padding " << int64_t(lo)
                         << " + " << int64_t(hi) << ")";
      int64_t e = int64_t((d + lo + hi - win) / a.stride[i] + 1);
      // max and argmax ignore padding: every window needs an element of x.
      bool maxLike = n.reduce == Reduce::Max || n.reduce == Reduce::Argmax;
      __int128 last = __int128(e - 1) * a.stride[i] - lo;
      if (maxLike && (lo >= win || last >= d))
        return r.error() << "'pool' " << (n.reduce == Reduce::Max ? "max" : "argmax")
                         << ": a window of spatial axis " << i
                         << " covers padding only (window " << int64_t(win)
                         << ", padding " << int64_t(lo) << " + " << int64_t(hi)
                         << ", axis " << int64_t(d) << ")";
      out.push_back(e);
    }
  }
  __int128 elements = 1;
  for (int64_t d : out)
    if (tooLarge(elements *= d))
      return r.error() << "'" << name << "' result " << shapeText(out)
                       << " is too large (its size overflows 64 bits)";
  n.outShape = out;
  n.outDType = !conv && n.reduce == Reduce::Argmax ? DType::I64 : x.outDType;
  return success();
}


} // namespace rankc::dag
