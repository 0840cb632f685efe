"""The core of a step: elementwise ops, matmuls, views and transposes,
reductions, softmax, GELU and layer norm, each with its backward."""
import math

import torch

from .builder import _meta
from .registry import Unsupported, aten

BINARY = {"add.Tensor": "add", "sub.Tensor": "sub", "mul.Tensor": "mul",
          "div.Tensor": "div", "div.Scalar": "div", "mul.Scalar": "mul",
          "add.Scalar": "add", "sub.Scalar": "sub", "pow.Tensor_Scalar": "pow",
          "maximum.default": "maximum", "minimum.default": "minimum"}

UNARY = {"relu.default": "relu", "tanh.default": "tanh", "exp.default": "exp",
         "neg.default": "neg", "sigmoid.default": "sigmoid", "sqrt.default": "sqrt",
         "rsqrt.default": "rsqrt", "log.default": "log", "erf.default": "erf",
         "abs.default": "abs"}


def _binary(name, op):
    def translate(self, n, a, shape, dtype):
        if name in ("add.Tensor", "sub.Tensor") and len(a) > 2 or n.kwargs.get("alpha", 1) != 1:
            raise Unsupported(f"aten.{name} with alpha")
        # PyTorch promotes mixed operands (an f32 residual plus an autocast
        # bf16 branch is f32); the DAG wants the casts written.
        return self.add(op, [self.promoted(x, dtype) for x in a[:2]])
    return translate


def _unary(op):
    return lambda self, n, a, shape, dtype: self.add(op, [self.arg(a[0], dtype)])


for _name, _op in BINARY.items():
    aten(_name)(_binary(_name, _op))
for _name, _op in UNARY.items():
    aten(_name)(_unary(_op))


@aten("rsub.Scalar")
def rsub(self, n, a, shape, dtype):
    return self.add("sub", [self.arg(a[1], dtype), self.arg(a[0], dtype)])


@aten("_softmax.default", opmath=True)
def softmax(self, n, a, shape, dtype):
    # exp(x - max) / sum(exp(x - max)) along the axis
    x, d = self.arg(a[0], dtype), a[1]
    mx = self.add("max", [x], axes=[d], keepdims=True)
    e = self.add("exp", [self.add("sub", [x, mx])])
    return self.add("div", [e, self.add("sum", [e], axes=[d], keepdims=True)])


# Ops that only view, copy or round a tensor, element for element.
_SAME_ELEMENTS = ("view", "_unsafe_view", "_reshape_alias", "reshape", "clone", "detach",
                  "expand", "_to_copy", "contiguous", "alias")


def _source(node):
    """`node` through ops that keep its elements (views, copies, casts)."""
    numel = math.prod(_meta(node).shape)
    while isinstance(node, torch.fx.Node) and node.args and \
            getattr(node.target, "__name__", "").split(".")[0] in _SAME_ELEMENTS:
        src = node.args[0]
        if not isinstance(src, torch.fx.Node) or math.prod(_meta(src).shape) != numel:
            break  # (an expand that broadcasts)
        node = src
    return node


def _attention_row_dots(self, g, y, d):
    """sum(g * y) along the last axis, where y = softmax(S) and g is the
    gradient of y reaching it through O = y @ V (g = dO @ V^T): sum_d(dO *
    O), as flash attention computes it. It reads two [.., T, head] tensors
    instead of two [.., T, T]. None where the graph is not that."""
    if d not in (-1, len(_meta(y).shape) - 1):
        return None
    mm = _source(g)
    if getattr(mm.target, "__name__", "") != "bmm.default":
        return None
    dO, vt = mm.args
    if getattr(vt.target, "__name__", "") != "transpose.int" or \
            sorted(a % 3 for a in vt.args[1:]) != [1, 2]:
        return None
    v, p = vt.args[0], _source(y)
    outs = [u for u in v.users if getattr(u.target, "__name__", "") == "bmm.default"
            and u.args[1] is v and _source(u.args[0]) is p]
    if len(outs) != 1 or list(_meta(outs[0]).shape) != list(_meta(dO).shape):
        return None
    # f32 only: a bf16 O (autocast's) is rounded, and the sum from it is
    # bf16's noise away from PyTorch's (5 autocast SGD steps of the
    # transformer block moved the loss by 8e-5).
    if any(self.dtype_of(x) != "f32" for x in (dO, outs[0], y)):
        return None
    dots = self.add("sum", [self.add("mul", [self.ids[dO], self.ids[outs[0]]])], axes=[2],
                    keepdims=True, name="attention_row_dots")
    return self.reshape(dots, list(_meta(y).shape[:-1]) + [1])


@aten("_softmax_backward_data.default", opmath=True)
def softmax_backward(self, n, a, shape, dtype):
    # y * (g - sum(g * y)) along the axis
    g, y, d = self.ids[a[0]], self.ids[a[1]], a[2]
    s_ = _attention_row_dots(self, a[0], a[1], d)
    if s_ is None:
        s_ = self.add("sum", [self.add("mul", [g, y])], axes=[d], keepdims=True)
    return self.add("mul", [y, self.add("sub", [g, s_])])


@aten("gelu.default", opmath=True)
def gelu(self, n, a, shape, dtype):
    if n.kwargs.get("approximate", "none") != "none":
        raise Unsupported("aten.gelu with approximate='tanh'")
    x = self.arg(a[0], dtype)
    return self.add("mul", [self._gelu_cdf(x, dtype), x])


@aten("gelu_backward.default", opmath=True)
def gelu_backward(self, n, a, shape, dtype):
    if n.kwargs.get("approximate", "none") != "none":
        raise Unsupported("aten.gelu_backward with approximate='tanh'")
    g, x = self.ids[a[0]], self.ids[a[1]]
    # g * (Phi(x) + x * exp(-x^2 / 2) / sqrt(2 pi))
    x2 = self.add("mul", [x, x])
    pdf = self.add("mul", [self.add("exp", [self.add("mul", [x2, self.constant(-0.5, dtype)])]),
                           self.constant(0.3989422804014327, dtype)])
    d = self.add("add", [self._gelu_cdf(x, dtype), self.add("mul", [x, pdf])])
    return self.add("mul", [g, d])


@aten("detach.default", "alias.default", "clone.default")
def identity(self, n, a, shape, dtype):
    return self.ids[a[0]]


@aten("t.default")
def t(self, n, a, shape, dtype):
    return self.add("transpose", [self.arg(a[0], dtype)], perm=[1, 0])


@aten("transpose.int")
def transpose(self, n, a, shape, dtype):
    rank = len(shape)
    perm = list(range(rank))
    d0, d1 = a[1] % rank, a[2] % rank
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return self.add("transpose", [self.arg(a[0], dtype)], perm=perm)


@aten("permute.default")
def permute(self, n, a, shape, dtype):
    return self.add("transpose", [self.arg(a[0], dtype)], perm=list(a[1]))


@aten("mm.default", "bmm.default")
def mm(self, n, a, shape, dtype):
    return self.add("matmul", [self.arg(a[0], dtype), self.arg(a[1], dtype)])


# (opmath: the bias is added to the f32 accumulator, as in cuBLAS's epilogue)
@aten("addmm.default", opmath=True)
def addmm(self, n, a, shape, dtype):
    if n.kwargs.get("beta", 1) != 1 or n.kwargs.get("alpha", 1) != 1:
        raise Unsupported("aten.addmm with alpha or beta")
    mm = self.add("matmul", [self.arg(a[1], dtype), self.arg(a[2], dtype)])
    return self.add("add", [self.arg(a[0], dtype), mm])


@aten("view.default", "_unsafe_view.default", "reshape.default", "_reshape_alias.default")
def view(self, n, a, shape, dtype):
    return self.add("reshape", [self.arg(a[0], dtype)], shape=shape)


@aten("expand.default")
def expand(self, n, a, shape, dtype):
    return self.add("broadcast_to", [self.arg(a[0], dtype)], shape=shape)


@aten("ones_like.default", "zeros_like.default")
def ones_or_zeros_like(self, n, a, shape, dtype):
    ones = n.target.__name__.startswith("ones")
    return self.add("constant", value=1.0 if ones else 0.0, shape=shape, dtype=dtype)


@aten("sum.dim_IntList")
def sum_dims(self, n, a, shape, dtype):
    keep = bool(a[2]) if len(a) > 2 else False
    return self.add("sum", [self.arg(a[0], dtype)], axes=list(a[1]), keepdims=keep)


@aten("sum.default")
def sum_all(self, n, a, shape, dtype):
    return self.add("sum", [self.arg(a[0], dtype)])


@aten("mean.default")
def mean_all(self, n, a, shape, dtype):
    return self.add("mean", [self.arg(a[0], dtype)])


@aten("mean.dim")
def mean_dims(self, n, a, shape, dtype):
    keep = bool(a[2]) if len(a) > 2 else False
    return self.add("mean", [self.arg(a[0], dtype)], axes=list(a[1]), keepdims=keep)


@aten("threshold_backward.default")
def threshold_backward(self, n, a, shape, dtype):
    # grad where input > threshold, else 0
    thr = self.constant(float(a[2]), dtype)
    cond = self.add("gt", [self.ids[a[1]], thr])
    zero = self.constant(0.0, dtype)
    return self.add("where", [cond, self.ids[a[0]], zero])


@aten("tanh_backward.default", opmath=True)
def tanh_backward(self, n, a, shape, dtype):
    # grad * (1 - y^2)
    one = self.constant(1.0, dtype)
    y2 = self.add("mul", [self.ids[a[1]], self.ids[a[1]]])
    d = self.add("sub", [one, y2])
    return self.add("mul", [self.ids[a[0]], d])


@aten("native_layer_norm.default", opmath=True)
def layer_norm(self, n, a, shape, dtypes):
    c = lambda v: self.constant(v, dtypes[0])  # noqa: E731
    x, dims, w, b, eps = self.ids[a[0]], a[1], a[2], a[3], a[4]
    axes = list(range(-len(dims), 0))
    mean = self.add("mean", [x], axes=axes, keepdims=True)
    xc = self.add("sub", [x, mean])
    var = self.add("mean", [self.add("mul", [xc, xc])], axes=axes, keepdims=True)
    rstd = self.add("rsqrt", [self.add("add", [var, c(float(eps))])])
    out = self.add("mul", [xc, rstd])
    if w is not None:
        out = self.add("mul", [out, self.ids[w]])
    if b is not None:
        out = self.add("add", [out, self.ids[b]])
    return [out, mean, rstd]


@aten("native_layer_norm_backward.default", opmath=True)
def layer_norm_backward(self, n, a, shape, dtypes):
    g, x, dims, mean, rstd, w, b, mask = (self.ids.get(v, v) if isinstance(v, torch.fx.Node) else v
                                           for v in a)
    axes = list(range(-len(dims), 0))
    xhat = self.add("mul", [self.add("sub", [x, mean]), rstd])
    gx = self.add("mul", [g, w]) if w is not None else g
    m1 = self.add("mean", [gx], axes=axes, keepdims=True)
    m2 = self.add("mean", [self.add("mul", [gx, xhat])], axes=axes, keepdims=True)
    dx = self.add("mul", [rstd, self.add("sub", [self.add("sub", [gx, m1]),
                                                  self.add("mul", [xhat, m2])])])
    rank = len(self.shape_of(a[1]))
    batch_axes = list(range(0, rank - len(dims)))
    dw = self.add("sum", [self.add("mul", [g, xhat])], axes=batch_axes) if w is not None else None
    db = self.add("sum", [g], axes=batch_axes) if b is not None else None
    return [dx, dw, db]
