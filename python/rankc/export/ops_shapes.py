"""Shapes, selection, factories and embeddings: slice, select, split,
cat, arange, masked_fill, where, full, copies, embedding and its backward."""
import math  # noqa: F401

import torch  # noqa: F401

from .builder import INF_SAFE, Unsupported, _meta  # noqa: F401
from .registry import aten


# ---- shapes ------------------------------------------------------------
def _as_reshape(self, n, a, shape, dtype):
    return self.reshape(self.ids[a[0]], shape)

# Views whose result is a row-major reshape of their operand.
aten("unsqueeze.default")(_as_reshape)
aten("squeeze.dim")(_as_reshape)
aten("squeeze.default")(_as_reshape)
aten("squeeze.dims")(_as_reshape)
aten("flatten.using_ints")(_as_reshape)

def _slice_bounds(self, size, start, end, step):
    start = 0 if start is None else start
    end = size if end is None else end
    start = max(0, min(size, start + size if start < 0 else start))
    end = max(start, min(size, end + size if end < 0 else end))
    return start, end, step

@aten("slice.Tensor")
def slice_Tensor(self, n, a, shape, dtype):
    src = self.shape_of(a[0])
    dim = (a[1] if len(a) > 1 else 0) % len(src)
    start, end, step = _slice_bounds(self, src[dim], a[2] if len(a) > 2 else None,
                                          a[3] if len(a) > 3 else None,
                                          a[4] if len(a) > 4 else 1)
    begin, stop, steps = [0] * len(src), list(src), [1] * len(src)
    begin[dim], stop[dim], steps[dim] = start, end, step
    if begin == [0] * len(src) and stop == src and step == 1:
        return self.ids[a[0]]
    return self.add("slice", [self.ids[a[0]]], begin=begin, end=stop, step=steps)

@aten("select.int")
def select_int(self, n, a, shape, dtype):
    src = self.shape_of(a[0])
    dim, index = a[1] % len(src), a[2] % src[a[1] % len(src)]
    begin, stop = [0] * len(src), list(src)
    begin[dim], stop[dim] = index, index + 1
    s = self.add("slice", [self.ids[a[0]]], begin=begin, end=stop)
    return self.reshape(s, shape)

def _split(self, x, src, dim, sizes):
    out, at = [], 0
    for size in sizes:
        begin, stop = [0] * len(src), list(src)
        begin[dim], stop[dim] = at, at + size
        out.append(self.add("slice", [x], begin=begin, end=stop))
        at += size
    return out

@aten("split.Tensor")
def split_Tensor(self, n, a, shapes, dtypes):
    src = self.shape_of(a[0])
    dim = (a[2] if len(a) > 2 else 0) % len(src)
    size = a[1]
    sizes = [min(size, src[dim] - i) for i in range(0, src[dim], size)]
    return _split(self, self.ids[a[0]], src, dim, sizes)

@aten("split_with_sizes.default")
def split_with_sizes_default(self, n, a, shapes, dtypes):
    src = self.shape_of(a[0])
    dim = (a[2] if len(a) > 2 else 0) % len(src)
    return _split(self, self.ids[a[0]], src, dim, list(a[1]))

@aten("cat.default")
def cat_default(self, n, a, shape, dtype):
    parts = [t for t in a[0] if math.prod(self.shape_of(t)) > 0 or len(self.shape_of(t)) > 1]
    dim = (a[1] if len(a) > 1 else 0) % len(shape)
    return self.add("concat", [self.ids[t] for t in parts], axis=dim)

@aten("arange.default")
def arange_default(self, n, a, shape, dtype):
    return self.iota(shape, 0, dtype)

@aten("arange.start")
def arange_start(self, n, a, shape, dtype):
    i = self.iota(shape, 0, dtype)
    return self.add("add", [i, self.number(a[0], dtype)]) if a[0] else i

@aten("arange.start_step")
def arange_start_step(self, n, a, shape, dtype):
    start, step = a[0], a[2] if len(a) > 2 else 1
    i = self.iota(shape, 0, dtype)
    if step != 1:
        i = self.add("mul", [i, self.number(step, dtype)])
    return self.add("add", [i, self.number(start, dtype)]) if start else i

# ---- comparisons, selection, factories ----------------------------------
def _compare(op):
    def f(self, n, a, shape, dtype):
        t = self.dtype_of(a[0])
        y = self.ids[a[1]] if isinstance(a[1], torch.fx.Node) else self.number(a[1], t)
        return self.add(op, [self.ids[a[0]], y])
    return f

for _op in ("eq", "ne", "lt", "le", "gt", "ge"):
    aten(f"{_op}.Scalar", f"{_op}.Tensor")(_compare(_op))
del _op

@aten("bitwise_not.default")
def bitwise_not_default(self, n, a, shape, dtype):
    if dtype != "bool":
        raise Unsupported("aten.bitwise_not of integers")
    return self.add("not", [self.ids[a[0]]])

aten("logical_not.default")(bitwise_not_default)

@aten("masked_fill.Scalar")
def masked_fill_Scalar(self, n, a, shape, dtype):
    return self.add("where", [self.ids[a[1]], self.number(a[2], dtype), self.ids[a[0]]])

@aten("masked_fill.Tensor")
def masked_fill_Tensor(self, n, a, shape, dtype):
    return self.add("where", [self.ids[a[1]], self.ids[a[2]], self.ids[a[0]]])

@aten("where.self")
def where_self(self, n, a, shape, dtype):
    return self.add("where", [self.ids[a[0]], self.arg(a[1], dtype), self.arg(a[2], dtype)])

def _filled(value):
    def f(self, n, a, shape, dtype):
        return self.number(value if value is not None else a[-1], dtype, shape)
    return f

aten("zeros.default")(_filled(0))
aten("ones.default")(_filled(1))
# Their values are never read before a fill_ or copy_ writes them.
aten("empty_like.default")(_filled(0))
aten("empty.memory_format")(_filled(0))
aten("new_zeros.default")(_filled(0))

@aten("full.default")
def full_default(self, n, a, shape, dtype):
    return self.number(a[1], dtype, shape)

@aten("full_like.default")
def full_like_default(self, n, a, shape, dtype):
    return self.number(a[1], dtype, shape)

@aten("fill_.Scalar")
def fill__Scalar(self, n, a, shape, dtype):
    return self.number(a[1], dtype, shape)

@aten("scalar_tensor.default")
def scalar_tensor_default(self, n, a, shape, dtype):
    return self.number(a[0], dtype)

@aten("copy_.default")
def copy__default(self, n, a, shape, dtype):
    return self.add("cast", [self.ids[a[1]]], dtype=dtype) \
        if self.dtype_of(a[1]) != dtype else self.ids[a[1]]

@aten("_to_copy.default")
def _to_copy_default(self, n, a, shape, dtype):
    # A conversion (x.float() of integers) is a cast, not an alias.
    src = self.dtype_of(a[0])
    return self.ids[a[0]] if src == dtype else self.add("cast", [self.ids[a[0]]], dtype=dtype)

aten("to.dtype")(_to_copy_default)

@aten("lift_fresh_copy.default")
def lift_fresh_copy_default(self, n, a, shape, dtype):
    return self.ids[a[0]]

# ---- embeddings ------------------------------------------------------------
@aten("embedding.default")
def embedding_default(self, n, a, shape, dtype):
    return self.add("take", [self.ids[a[0]], self.ids[a[1]]], axis=0)

@aten("embedding_dense_backward.default")
def embedding_dense_backward_default(self, n, a, shape, dtype):
    g, idx, num, pad, by_freq = a[:5]
    if by_freq:
        raise Unsupported("aten.embedding_dense_backward with scale_grad_by_freq")
    G, I = self.ids[g], self.ids[idx]
    if pad is not None and pad >= 0:
        drop = self.add("eq", [I, self.number(pad, self.dtype_of(idx))])
        drop = self.reshape(drop, self.shape_of(idx) + [1])
        G = self.add("where", [drop, self.number(0.0, dtype), G])
    return self.add("scatter_add", [self.number(0.0, dtype, shape), I, G], axis=0)
