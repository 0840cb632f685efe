"""Convolution and pooling, with their backward, as the DAG's conv, pool
(max, argmax, mean) and scatter_add."""
import math  # noqa: F401

import torch  # noqa: F401

from .builder import INF_SAFE, Unsupported, _meta  # noqa: F401
from .registry import aten


# ---- convolution -----------------------------------------------------------
def _per_axis(v, k):
    v = list(v) if isinstance(v, (list, tuple)) else [v]
    return v * k if len(v) == 1 else v

# (opmath: the bias is added to the f32 accumulator, as cuDNN and oneDNN do)
@aten("convolution.default", opmath=True)
def convolution_default(self, n, a, shape, dtype):
    x, w, b, stride, padding, dilation, transposed, out_pad, groups = a[:9]
    k = len(self.shape_of(x)) - 2
    s, p, d = _per_axis(stride, k), _per_axis(padding, k), _per_axis(dilation, k)
    if transposed:
        # A transposed convolution is the input gradient of the plain
        # one whose input has this output's shape (output_padding only
        # widens it), with w [C_in, C_out / groups, K...] as its weight.
        y = _conv_input_grad(self, self.ids[x], self.ids[w], shape, self.shape_of(w),
                                  self.shape_of(x), s, p, d, groups, "aten.convolution")
    else:
        y = self.add("conv", [self.ids[x], self.ids[w]], stride=s,
                     padding=[[q, q] for q in p], dilation=d, groups=groups)
    if b is None:
        return y
    bias = self.reshape(self.ids[b], [1, shape[1]] + [1] * k)
    return self.add("add", [y, bias])

def _conv_input_grad(self, G, W, xs, ws, gs, s, p, d, groups, what):
    """dx of the convolution of x (shape xs) by W (ws) whose output
    gradient is G (gs): G dilated by the stride, convolved with the
    flipped kernel, its in/out channels swapped within each group."""
    k = len(xs) - 2
    O, Cg, C = ws[0], ws[1], xs[1]
    Og = O // groups
    lo = [(ws[2 + i] - 1) * d[i] - p[i] for i in range(k)]
    if min(lo) < 0:
        raise Unsupported(f"{what} with padding > dilation * (kernel - 1)")
    hi = [xs[2 + i] - ((gs[2 + i] - 1) * s[i] + 1) + p[i] for i in range(k)]
    wt = self.reshape(W, [groups, Og, Cg] + ws[2:])
    wt = self.add("transpose", [wt], perm=[0, 2, 1] + [3 + i for i in range(k)])
    wt = self.reshape(wt, [C, Og] + ws[2:])
    wt = self.flip(wt, list(range(2, 2 + k)), [C, Og] + ws[2:])
    return self.add("conv", [G, wt], input_dilation=s, dilation=d,
                    padding=[[lo[i], hi[i]] for i in range(k)], groups=groups)

def _conv_weight_grad(self, G, X, xs, ws, gs, s, p, d, groups):
    """dw of the convolution of X (shape xs) by a weight of shape ws
    whose output gradient is G (gs): dw[o, c, k] = sum_{n, e} G[n, o, e]
    X[n, c, e * s + k * d - p], a convolution of X (channels as the
    batch) by G (batch as the channels), group by group."""
    k = len(xs) - 2
    Cg, Og = ws[1], ws[0] // groups
    sp = list(range(2, 2 + k))
    blocks = []
    for gi in range(groups):
        xg = X if groups == 1 else self.add(
            "slice", [X], begin=[0, gi * Cg] + [0] * k, end=[xs[0], (gi + 1) * Cg] + xs[2:])
        gg = G if groups == 1 else self.add(
            "slice", [G], begin=[0, gi * Og] + [0] * k, end=[gs[0], (gi + 1) * Og] + gs[2:])
        perm = [1, 0] + sp
        xt = self.add("transpose", [xg], perm=perm)   # [Cg, N, D...]
        gt = self.add("transpose", [gg], perm=perm)   # [Og, N, E...]
        r = self.add("conv", [xt, gt], stride=d, dilation=s,
                     padding=[[p[i], p[i]] for i in range(k)])  # [Cg, Og, >= K...]
        full = [xs[2 + i] + 2 * p[i] - (gs[2 + i] - 1) * s[i] - 1 for i in range(k)]
        full = [f // d[i] + 1 for i, f in enumerate(full)]
        if full != ws[2:]:
            r = self.add("slice", [r], begin=[0] * (2 + k), end=[Cg, Og] + ws[2:])
        blocks.append(self.add("transpose", [r], perm=perm))  # [Og, Cg, K...]
    return blocks[0] if groups == 1 else self.add("concat", blocks, axis=0)

@aten("convolution_backward.default")
def convolution_backward_default(self, n, a, shapes, dtypes):
    g, x, w, bias_sizes, stride, padding, dilation, transposed, out_pad, groups, mask = a[:11]
    xs, ws, gs = self.shape_of(x), self.shape_of(w), self.shape_of(g)
    k = len(xs) - 2
    s, p, d = _per_axis(stride, k), _per_axis(padding, k), _per_axis(dilation, k)
    G, X, W = self.ids[g], self.ids[x], self.ids[w]
    out = [None, None, None]
    if transposed:
        # The adjoint of a transposed convolution is the plain one: dx
        # convolves G by w; dw is the plain convolution's weight gradient
        # with the roles of x and G swapped.
        if mask[0]:
            out[0] = self.add("conv", [G, W], stride=s, padding=[[q, q] for q in p],
                              dilation=d, groups=groups)
        if mask[1]:
            out[1] = _conv_weight_grad(self, X, G, gs, ws, xs, s, p, d, groups)
    else:
        if mask[0]:
            out[0] = _conv_input_grad(self, G, W, xs, ws, gs, s, p, d, groups,
                                           "aten.convolution_backward")
        if mask[1]:
            out[1] = _conv_weight_grad(self, G, X, xs, ws, gs, s, p, d, groups)
    if mask[2]:
        out[2] = self.add("sum", [G], axes=[0] + list(range(2, 2 + k)))
    return out

# ---- pooling ---------------------------------------------------------------
def _pool_args(self, a, k):
    kernel = _per_axis(a[1], k)
    stride = _per_axis(a[2], k) if len(a) > 2 and a[2] else kernel
    pad = _per_axis(a[3], k) if len(a) > 3 else [0] * k
    dil = _per_axis(a[4], k) if len(a) > 4 else [1] * k
    ceil = a[5] if len(a) > 5 else False
    if any(v != 1 for v in dil) or ceil:
        raise Unsupported("aten.max_pool with dilation or ceil_mode")
    return dict(window=kernel, stride=stride, padding=[[q, q] for q in pad])

@aten("max_pool2d_with_indices.default")
def max_pool2d_with_indices_default(self, n, a, shapes, dtypes):
    x = self.ids[a[0]]
    attrs = _pool_args(self, a, len(self.shape_of(a[0])) - 2)
    return [self.add("pool", [x], reduce="max", **attrs),
            self.add("pool", [x], reduce="argmax", **attrs)]

aten("max_pool3d_with_indices.default")(max_pool2d_with_indices_default)

@aten("max_pool2d_with_indices_backward.default")
def max_pool2d_with_indices_backward_default(self, n, a, shape, dtype):
    # Each output's gradient added at its maximum's flat index, row by
    # row of [N * C] (scatter_add over one flat axis).
    g, x, idx = self.ids[a[0]], a[1], self.ids[a[7]]
    xs, gs = self.shape_of(x), self.shape_of(a[0])
    rows, inner, outer = xs[0] * xs[1], math.prod(xs[2:]), math.prod(gs[2:])
    base = self.add("mul", [self.iota([rows, outer], 0, "i64"), self.number(inner, "i64")])
    flat = self.add("add", [self.reshape(idx, [rows, outer]), base])
    s = self.add("scatter_add", [self.number(0.0, dtype, [rows * inner]),
                                 self.reshape(flat, [rows * outer]),
                                 self.reshape(g, [rows * outer])], axis=0)
    return self.reshape(s, xs)

aten("max_pool3d_with_indices_backward.default")(max_pool2d_with_indices_backward_default)

@aten("avg_pool2d.default", opmath=True)
def avg_pool2d_default(self, n, a, shape, dtype):
    k = len(self.shape_of(a[0])) - 2
    kernel = _per_axis(a[1], k)
    stride = _per_axis(a[2], k) if len(a) > 2 and a[2] else kernel
    pad = _per_axis(a[3], k) if len(a) > 3 else [0] * k
    if (len(a) > 4 and a[4]) or (len(a) > 5 and not a[5]) or (len(a) > 6 and a[6] is not None):
        raise Unsupported("aten.avg_pool2d with ceil_mode, count_include_pad=False or divisor_override")
    return self.add("pool", [self.ids[a[0]]], reduce="mean", window=kernel, stride=stride,
                    padding=[[q, q] for q in pad])
