"""Batch and group norm with their backward, dropout (refused in training
mode), and the pieces of recurrent layers (unbind, stack, their backward)."""
import math  # noqa: F401

import torch  # noqa: F401

from .builder import INF_SAFE, Unsupported, _meta  # noqa: F401
from .ops_shapes import _slice_bounds, _split, split_Tensor, split_with_sizes_default
from .registry import aten


# ---- normalization -----------------------------------------------------------
@aten("native_batch_norm.default", opmath=True)
def native_batch_norm_default(self, n, a, shapes, dtypes):
    x, w, b, rm, rv, training, momentum, eps = a[:8]
    xs = self.shape_of(x)
    dt = self.dtype_of(x)
    axes = [0] + list(range(2, len(xs)))
    cshape = [1, xs[1]] + [1] * (len(xs) - 2)
    X = self.ids[x]
    if training:
        mean = self.add("mean", [X], axes=axes, keepdims=True)
        xc = self.add("sub", [X, mean])
        var = self.add("mean", [self.add("mul", [xc, xc])], axes=axes, keepdims=True)
        # The running statistics (state: export_step makes them inputs
        # carried from step to step), with the unbiased variance.
        count = math.prod(xs) // xs[1]
        if rm is not None:
            m = float(momentum)
            keep, take = self.number(1.0 - m, dt), self.number(m, dt)
            self.updates[rm] = self.add("add", [
                self.add("mul", [self.ids[rm], keep]),
                self.add("mul", [self.reshape(mean, [xs[1]]), take])])
            unbiased = self.add("mul", [self.reshape(var, [xs[1]]),
                                        self.number(count / max(count - 1, 1), dt)])
            self.updates[rv] = self.add("add", [
                self.add("mul", [self.ids[rv], keep]), self.add("mul", [unbiased, take])])
    else:
        mean = self.reshape(self.ids[rm], cshape)
        var = self.reshape(self.ids[rv], cshape)
        xc = self.add("sub", [X, mean])
    invstd = self.add("rsqrt", [self.add("add", [var, self.number(float(eps), dt)])])
    y = self.add("mul", [xc, invstd])
    if w is not None:
        y = self.add("mul", [y, self.reshape(self.ids[w], cshape)])
    if b is not None:
        y = self.add("add", [y, self.reshape(self.ids[b], cshape)])
    return [y, self.reshape(mean, [xs[1]]), self.reshape(invstd, [xs[1]])]

@aten("native_batch_norm_backward.default", opmath=True)
def native_batch_norm_backward_default(self, n, a, shapes, dtypes):
    g, x, w, rm, rv, smean, sinv, training, eps, mask = a[:10]
    if not training:
        raise Unsupported("aten.native_batch_norm_backward in eval mode")
    xs = self.shape_of(x)
    dt = self.dtype_of(x)
    axes = [0] + list(range(2, len(xs)))
    cshape = [1, xs[1]] + [1] * (len(xs) - 2)
    G, X = self.ids[g], self.ids[x]
    mean, inv = self.reshape(self.ids[smean], cshape), self.reshape(self.ids[sinv], cshape)
    xhat = self.add("mul", [self.add("sub", [X, mean]), inv])
    db = self.add("sum", [G], axes=axes)
    dw = self.add("sum", [self.add("mul", [G, xhat])], axes=axes)
    out = [None, dw if mask[1] else None, db if mask[2] else None]
    if mask[0]:
        count = math.prod(xs) // xs[1]
        scale = inv if w is None else self.add("mul", [inv, self.reshape(self.ids[w], cshape)])
        mg = self.add("div", [self.reshape(db, cshape), self.number(float(count), dt)])
        mgx = self.add("div", [self.reshape(dw, cshape), self.number(float(count), dt)])
        inner = self.add("sub", [self.add("sub", [G, mg]), self.add("mul", [xhat, mgx])])
        out[0] = self.add("mul", [scale, inner])
    return out

@aten("native_group_norm.default", opmath=True)
def native_group_norm_default(self, n, a, shapes, dtypes):
    x, w, b, N, C, HW, groups, eps = a[:8]
    xs, dt = self.shape_of(x), self.dtype_of(x)
    xg = self.reshape(self.ids[x], [N, groups, (C // groups) * HW])
    mean = self.add("mean", [xg], axes=[2], keepdims=True)
    xc = self.add("sub", [xg, mean])
    var = self.add("mean", [self.add("mul", [xc, xc])], axes=[2], keepdims=True)
    rstd = self.add("rsqrt", [self.add("add", [var, self.number(float(eps), dt)])])
    y = self.reshape(self.add("mul", [xc, rstd]), xs)
    cshape = [1, C] + [1] * (len(xs) - 2)
    if w is not None:
        y = self.add("mul", [y, self.reshape(self.ids[w], cshape)])
    if b is not None:
        y = self.add("add", [y, self.reshape(self.ids[b], cshape)])
    return [y, self.reshape(mean, [N, groups]), self.reshape(rstd, [N, groups])]

@aten("native_group_norm_backward.default", opmath=True)
def native_group_norm_backward_default(self, n, a, shapes, dtypes):
    g, x, mean, rstd, w, N, C, HW, groups, mask = a[:10]
    xs, dt = self.shape_of(x), self.dtype_of(x)
    gshape = [N, groups, (C // groups) * HW]
    cshape = [1, C] + [1] * (len(xs) - 2)
    G, X = self.ids[g], self.ids[x]
    m3 = self.reshape(self.ids[mean], [N, groups, 1])
    r3 = self.reshape(self.ids[rstd], [N, groups, 1])
    xhat = self.reshape(self.add("mul", [self.add("sub", [self.reshape(X, gshape), m3]), r3]), xs)
    caxes = [0] + list(range(2, len(xs)))
    out = [None, None, None]
    if mask[1]:
        out[1] = self.add("sum", [self.add("mul", [G, xhat])], axes=caxes)
    if mask[2]:
        out[2] = self.add("sum", [G], axes=caxes)
    if mask[0]:
        gx = G if w is None else self.add("mul", [G, self.reshape(self.ids[w], cshape)])
        gx3, xh3 = self.reshape(gx, gshape), self.reshape(xhat, gshape)
        m1 = self.add("mean", [gx3], axes=[2], keepdims=True)
        m2 = self.add("mean", [self.add("mul", [gx3, xh3])], axes=[2], keepdims=True)
        dx = self.add("mul", [r3, self.add("sub", [self.add("sub", [gx3, m1]),
                                                   self.add("mul", [xh3, m2])])])
        out[0] = self.reshape(dx, xs)
    return out

# ---- randomness ------------------------------------------------------------
@aten("native_dropout.default")
def native_dropout_default(self, n, a, shapes, dtypes):
    if len(a) > 2 and a[2] is False or (len(a) > 1 and a[1] == 0):
        return [self.ids[a[0]], self.number(True, "bool", self.shape_of(a[0]))]
    raise Unsupported("dropout in training mode (aten.native_dropout): the DAG has no "
                      "random numbers; export with the dropout modules in eval() mode")

@aten("bernoulli.float")
def bernoulli_float(self, n, a, shape, dtype):
    raise Unsupported("random numbers (aten.bernoulli_, dropout in training mode): the "
                      "DAG has none; export with the dropout modules in eval() mode")

# ---- recurrent layers' pieces (unbind, stack, and their backward) ------------
aten("unsafe_split.Tensor")(split_Tensor)
aten("unsafe_split_with_sizes.default")(split_with_sizes_default)

@aten("transpose.default")
def transpose_default(self, n, a, shape, dtype):
    rank = len(shape)
    perm = list(range(rank))
    d0, d1 = a[1] % rank, a[2] % rank
    perm[d0], perm[d1] = perm[d1], perm[d0]
    return self.add("transpose", [self.ids[a[0]]], perm=perm)

@aten("unbind.int")
def unbind_int(self, n, a, shapes, dtypes):
    src = self.shape_of(a[0])
    dim = (a[1] if len(a) > 1 else 0) % len(src)
    rest = src[:dim] + src[dim + 1:]
    return [self.reshape(s, rest) for s in _split(self, self.ids[a[0]], src, dim, [1] * src[dim])]

@aten("stack.default")
def stack_default(self, n, a, shape, dtype):
    dim = (a[1] if len(a) > 1 else 0) % len(shape)
    parts = []
    for t in a[0]:
        s = self.shape_of(t)
        parts.append(self.reshape(self.ids[t], s[:dim] + [1] + s[dim:]))
    return self.add("concat", parts, axis=dim)

def _pad_along(self, g, gshape, sizes, dim, start, dtype):
    """g placed at [start, start + len) of a zero tensor of `sizes`."""
    parts = []
    if start:
        parts.append(self.number(0.0, dtype, sizes[:dim] + [start] + sizes[dim + 1:]))
    parts.append(g)
    after = sizes[dim] - start - gshape[dim]
    if after:
        parts.append(self.number(0.0, dtype, sizes[:dim] + [after] + sizes[dim + 1:]))
    return parts[0] if len(parts) == 1 else self.add("concat", parts, axis=dim)

@aten("select_backward.default")
def select_backward_default(self, n, a, shape, dtype):
    sizes = list(a[1])
    dim = a[2] % len(sizes)
    index = a[3] % sizes[dim]
    gshape = sizes[:dim] + [1] + sizes[dim + 1:]
    g = self.reshape(self.ids[a[0]], gshape)
    return _pad_along(self, g, gshape, sizes, dim, index, dtype)

@aten("slice_backward.default")
def slice_backward_default(self, n, a, shape, dtype):
    sizes = list(a[1])
    dim = a[2] % len(sizes)
    start, end, step = _slice_bounds(self, sizes[dim], a[3], a[4], a[5])
    if step != 1:
        raise Unsupported("aten.slice_backward with a step")
    return _pad_along(self, self.ids[a[0]], self.shape_of(a[0]), sizes, dim, start, dtype)
