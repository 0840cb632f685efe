"""ATen operators beyond export_torch.py's core (elementwise, matmul, layer
norm, softmax, GELU): losses, shape and indexing ops, embeddings,
convolution and pooling, batch and group norm, each with its backward, as
the DAG's ops (dag-format.md, versions 1 and 2). `translate` returns a DAG
id (or a list of ids for multi-result ops), or None when it does not know
the operator.

A translation builds with the Exporter's `add` (a node), `arg` (an fx
argument as a DAG id: a node, or a number as a constant) and `constant`;
shapes come from the fx nodes' metadata (ShapeProp)."""
import math

import torch


class Unsupported(Exception):
    pass


INF_SAFE = ("f16", "bf16", "f32", "f64")


def _meta(node):
    return node.meta["tensor_meta"]


class Ops:
    """Mixed into export_torch.Exporter."""

    # ---- helpers -----------------------------------------------------------
    def number(self, value, dtype, shape=None):
        """A constant, also +-inf and NaN (which JSON cannot write): made
        from finite constants by a division, exactly."""
        extra = {} if shape is None else {"shape": shape}
        if isinstance(value, float) and not math.isfinite(value):
            if dtype not in INF_SAFE:
                raise Unsupported(f"a non-finite constant of {dtype}")
            num = 0.0 if math.isnan(value) else (1.0 if value > 0 else -1.0)
            return self.add("div", [self.add("constant", value=num, dtype=dtype, **extra),
                                    self.add("constant", value=0.0, dtype=dtype, **extra)])
        if dtype in INF_SAFE:
            value = float(value)
        elif dtype == "bool":
            value = bool(value)
        else:
            value = int(value)
        return self.add("constant", value=value, dtype=dtype, **extra)

    def dtype_of(self, node):
        return self.dtype_name(_meta(node).dtype)

    def shape_of(self, node):
        return list(_meta(node).shape)

    def reshape(self, x, shape):
        return self.add("reshape", [x], shape=list(shape))

    def iota(self, shape, axis, dtype):
        return self.add("iota", shape=list(shape), axis=axis, dtype=dtype)

    def flip(self, x, axes, shape):
        """x reversed along `axes` (take with descending indices)."""
        for ax in axes:
            idx = self.add("constant", value=list(range(shape[ax] - 1, -1, -1)), dtype="i64")
            x = self.add("take", [x, idx], axis=ax)
        return x

    def sum_to(self, x, axes, keep=False):
        return self.add("sum", [x], axes=list(axes), keepdims=keep)

    # ---- dispatch ------------------------------------------------------------
    def translate_more(self, name, n, a, shape, dtype):
        f = getattr(self, "op_" + name.replace(".", "_"), None)
        if f is None:
            return None
        return f(n, a, shape, dtype)

    # ---- losses --------------------------------------------------------------
    def op__log_softmax_default(self, n, a, shape, dtype):
        x, d = self.ids[a[0]], a[1]
        mx = self.add("max", [x], axes=[d], keepdims=True)
        xc = self.add("sub", [x, mx])
        lse = self.add("log", [self.add("sum", [self.add("exp", [xc])], axes=[d], keepdims=True)])
        return self.add("sub", [xc, lse])

    def op__log_softmax_backward_data_default(self, n, a, shape, dtype):
        # grad - exp(y) * sum(grad)
        g, y, d = self.ids[a[0]], self.ids[a[1]], a[2]
        s = self.add("sum", [g], axes=[d], keepdims=True)
        return self.add("sub", [g, self.add("mul", [self.add("exp", [y]), s])])

    def _onehot(self, target, classes, xshape, tdtype, ignore):
        """[N, C] (or [C]) bool: class == target. A target outside [0, C)
        other than ignore_index fails the run, as PyTorch raises: the
        targets go through a `take` from iota(C) (the identity on valid
        labels), whose range check names the rank, the node and the label;
        ignored ones are taken as 0 (their rows are masked by the caller)."""
        valid = self.add("ne", [target, self.number(ignore, tdtype)])
        safe = self.add("where", [valid, target, self.number(0, tdtype)])
        target = self.add("take", [self.iota([classes], 0, tdtype), safe], axis=0,
                          name="target_class")
        if len(xshape) == 1:
            cls = self.iota([classes], 0, tdtype)
            return self.add("eq", [cls, target])
        cls = self.iota(xshape[:2], 1, tdtype)
        t = self.reshape(target, [xshape[0], 1])
        return self.add("eq", [cls, t])

    def op_nll_loss_forward_default(self, n, a, shapes, dtypes):
        x, target, weight, reduction, ignore = a[:5]
        if weight is not None:
            raise Unsupported("aten.nll_loss_forward with class weights")
        xs, dt = self.shape_of(x), self.dtype_of(x)
        if len(xs) > 2:
            raise Unsupported("aten.nll_loss_forward over spatial dimensions")
        X, T = self.ids[x], self.ids[target]
        tdt = self.dtype_of(target)
        hot = self._onehot(T, xs[-1], xs, tdt, ignore)
        picked = self.add("sum", [self.add("where", [hot, X, self.number(0.0, dt)])],
                          axes=[len(xs) - 1])
        keep = self.add("cast", [self.add("ne", [T, self.number(ignore, tdt)])], dtype=dt)
        losses = self.add("neg", [self.add("mul", [picked, keep])])
        total = self.add("sum", [keep])
        if reduction == 0:
            return [losses, total]
        s = self.add("sum", [losses])
        return [self.add("div", [s, total]) if reduction == 1 else s, total]

    def op_nll_loss_backward_default(self, n, a, shape, dtype):
        g, x, target, weight, reduction, ignore, total = a[:7]
        if weight is not None:
            raise Unsupported("aten.nll_loss_backward with class weights")
        xs = self.shape_of(x)
        X, T = self.ids[x], self.ids[target]
        tdt = self.dtype_of(target)
        hot = self.add("cast", [self._onehot(T, xs[-1], xs, tdt, ignore)], dtype=dtype)
        keep = self.add("cast", [self.add("ne", [T, self.number(ignore, tdt)])], dtype=dtype)
        G = self.ids[g]
        if reduction == 1:
            G = self.add("div", [G, self.ids[total]])
        if len(xs) == 2:
            keep = self.reshape(keep, [xs[0], 1])
            if reduction == 0:
                G = self.reshape(G, [xs[0], 1])
        return self.add("neg", [self.add("mul", [self.add("mul", [hot, keep]), G])])

    def op_mse_loss_default(self, n, a, shape, dtype):
        reduction = a[2] if len(a) > 2 else 1
        d = self.add("sub", [self.ids[a[0]], self.ids[a[1]]])
        sq = self.add("mul", [d, d])
        return sq if reduction == 0 else self.add("mean" if reduction == 1 else "sum", [sq])

    def op_mse_loss_backward_default(self, n, a, shape, dtype):
        g, x, t, reduction = self.ids[a[0]], self.ids[a[1]], self.ids[a[2]], a[3]
        d = self.add("sub", [x, t])
        scale = 2.0 / (math.prod(shape) if reduction == 1 else 1)
        return self.add("mul", [self.add("mul", [d, self.number(scale, dtype)]), g])

    def op_sgn_default(self, n, a, shape, dtype):
        x = self.ids[a[0]]
        zero = self.number(0, dtype)
        pos = self.add("cast", [self.add("gt", [x, zero])], dtype=dtype)
        neg = self.add("cast", [self.add("lt", [x, zero])], dtype=dtype)
        return self.add("sub", [pos, neg])

    op_sign_default = op_sgn_default

    # ---- activations ---------------------------------------------------------
    def op_sigmoid_backward_default(self, n, a, shape, dtype):
        g, y = self.ids[a[0]], self.ids[a[1]]
        return self.add("mul", [g, self.add("mul", [y, self.add("sub", [self.number(1.0, dtype), y])])])

    def op_silu_default(self, n, a, shape, dtype):
        x = self.ids[a[0]]
        return self.add("mul", [x, self.add("sigmoid", [x])])

    def op_silu_backward_default(self, n, a, shape, dtype):
        g, x = self.ids[a[0]], self.ids[a[1]]
        s = self.add("sigmoid", [x])
        one = self.number(1.0, dtype)
        inner = self.add("add", [one, self.add("mul", [x, self.add("sub", [one, s])])])
        return self.add("mul", [g, self.add("mul", [s, inner])])

    def _softplus_args(self, a, i):
        beta = a[i] if len(a) > i else 1
        threshold = a[i + 1] if len(a) > i + 1 else 20
        return float(beta), float(threshold)

    def op_softplus_default(self, n, a, shape, dtype):
        x = self.ids[a[0]]
        beta, thr = self._softplus_args(a, 1)
        bx = self.add("mul", [x, self.number(beta, dtype)])
        sp = self.add("div", [self.add("log", [self.add("add", [self.number(1.0, dtype),
                                                                 self.add("exp", [bx])])]),
                              self.number(beta, dtype)])
        return self.add("where", [self.add("gt", [bx, self.number(thr, dtype)]), x, sp])

    def op_softplus_backward_default(self, n, a, shape, dtype):
        g, x = self.ids[a[0]], self.ids[a[1]]
        beta, thr = self._softplus_args(a, 2)
        bx = self.add("mul", [x, self.number(beta, dtype)])
        return self.add("where", [self.add("gt", [bx, self.number(thr, dtype)]), g,
                                  self.add("mul", [g, self.add("sigmoid", [bx])])])

    def op_leaky_relu_default(self, n, a, shape, dtype):
        x = self.ids[a[0]]
        slope = float(a[1]) if len(a) > 1 else 0.01
        return self.add("where", [self.add("gt", [x, self.number(0.0, dtype)]), x,
                                  self.add("mul", [x, self.number(slope, dtype)])])

    def op_leaky_relu_backward_default(self, n, a, shape, dtype):
        g, x, slope = self.ids[a[0]], self.ids[a[1]], float(a[2])
        return self.add("where", [self.add("gt", [x, self.number(0.0, dtype)]), g,
                                  self.add("mul", [g, self.number(slope, dtype)])])

    # ---- shapes ------------------------------------------------------------
    def _as_reshape(self, n, a, shape, dtype):
        return self.reshape(self.ids[a[0]], shape)

    # Views whose result is a row-major reshape of their operand.
    op_unsqueeze_default = _as_reshape
    op_squeeze_dim = _as_reshape
    op_squeeze_default = _as_reshape
    op_squeeze_dims = _as_reshape
    op_flatten_using_ints = _as_reshape

    def _slice_bounds(self, size, start, end, step):
        start = 0 if start is None else start
        end = size if end is None else end
        start = max(0, min(size, start + size if start < 0 else start))
        end = max(start, min(size, end + size if end < 0 else end))
        return start, end, step

    def op_slice_Tensor(self, n, a, shape, dtype):
        src = self.shape_of(a[0])
        dim = (a[1] if len(a) > 1 else 0) % len(src)
        start, end, step = self._slice_bounds(src[dim], a[2] if len(a) > 2 else None,
                                              a[3] if len(a) > 3 else None,
                                              a[4] if len(a) > 4 else 1)
        begin, stop, steps = [0] * len(src), list(src), [1] * len(src)
        begin[dim], stop[dim], steps[dim] = start, end, step
        if begin == [0] * len(src) and stop == src and step == 1:
            return self.ids[a[0]]
        return self.add("slice", [self.ids[a[0]]], begin=begin, end=stop, step=steps)

    def op_select_int(self, n, a, shape, dtype):
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

    def op_split_Tensor(self, n, a, shapes, dtypes):
        src = self.shape_of(a[0])
        dim = (a[2] if len(a) > 2 else 0) % len(src)
        size = a[1]
        sizes = [min(size, src[dim] - i) for i in range(0, src[dim], size)]
        return self._split(self.ids[a[0]], src, dim, sizes)

    def op_split_with_sizes_default(self, n, a, shapes, dtypes):
        src = self.shape_of(a[0])
        dim = (a[2] if len(a) > 2 else 0) % len(src)
        return self._split(self.ids[a[0]], src, dim, list(a[1]))

    def op_cat_default(self, n, a, shape, dtype):
        parts = [t for t in a[0] if math.prod(self.shape_of(t)) > 0 or len(self.shape_of(t)) > 1]
        dim = (a[1] if len(a) > 1 else 0) % len(shape)
        return self.add("concat", [self.ids[t] for t in parts], axis=dim)

    def op_arange_default(self, n, a, shape, dtype):
        return self.iota(shape, 0, dtype)

    def op_arange_start(self, n, a, shape, dtype):
        i = self.iota(shape, 0, dtype)
        return self.add("add", [i, self.number(a[0], dtype)]) if a[0] else i

    def op_arange_start_step(self, n, a, shape, dtype):
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
        locals()[f"op_{_op}_Scalar"] = _compare(_op)
        locals()[f"op_{_op}_Tensor"] = _compare(_op)
    del _op

    def op_bitwise_not_default(self, n, a, shape, dtype):
        if dtype != "bool":
            raise Unsupported("aten.bitwise_not of integers")
        return self.add("not", [self.ids[a[0]]])

    op_logical_not_default = op_bitwise_not_default

    def op_masked_fill_Scalar(self, n, a, shape, dtype):
        return self.add("where", [self.ids[a[1]], self.number(a[2], dtype), self.ids[a[0]]])

    def op_masked_fill_Tensor(self, n, a, shape, dtype):
        return self.add("where", [self.ids[a[1]], self.ids[a[2]], self.ids[a[0]]])

    def op_where_self(self, n, a, shape, dtype):
        return self.add("where", [self.ids[a[0]], self.arg(a[1], dtype), self.arg(a[2], dtype)])

    def _filled(value):
        def f(self, n, a, shape, dtype):
            return self.number(value if value is not None else a[-1], dtype, shape)
        return f

    op_zeros_default = _filled(0)
    op_zeros_like_default = _filled(0)
    op_ones_default = _filled(1)
    op_ones_like_default = _filled(1)
    # Their values are never read before a fill_ or copy_ writes them.
    op_empty_like_default = _filled(0)
    op_empty_memory_format = _filled(0)
    op_new_zeros_default = _filled(0)

    def op_full_default(self, n, a, shape, dtype):
        return self.number(a[1], dtype, shape)

    def op_full_like_default(self, n, a, shape, dtype):
        return self.number(a[1], dtype, shape)

    def op_fill__Scalar(self, n, a, shape, dtype):
        return self.number(a[1], dtype, shape)

    def op_scalar_tensor_default(self, n, a, shape, dtype):
        return self.number(a[0], dtype)

    def op_copy__default(self, n, a, shape, dtype):
        return self.add("cast", [self.ids[a[1]]], dtype=dtype) \
            if self.dtype_of(a[1]) != dtype else self.ids[a[1]]

    def op__to_copy_default(self, n, a, shape, dtype):
        # A conversion (x.float() of integers) is a cast, not an alias.
        src = self.dtype_of(a[0])
        return self.ids[a[0]] if src == dtype else self.add("cast", [self.ids[a[0]]], dtype=dtype)

    op_to_dtype = op__to_copy_default

    def op_lift_fresh_copy_default(self, n, a, shape, dtype):
        return self.ids[a[0]]

    # ---- embeddings ------------------------------------------------------------
    def op_embedding_default(self, n, a, shape, dtype):
        return self.add("take", [self.ids[a[0]], self.ids[a[1]]], axis=0)

    def op_embedding_dense_backward_default(self, n, a, shape, dtype):
        g, idx, num, pad, by_freq = a[:5]
        if by_freq:
            raise Unsupported("aten.embedding_dense_backward with scale_grad_by_freq")
        G, I = self.ids[g], self.ids[idx]
        if pad is not None and pad >= 0:
            drop = self.add("eq", [I, self.number(pad, self.dtype_of(idx))])
            drop = self.reshape(drop, self.shape_of(idx) + [1])
            G = self.add("where", [drop, self.number(0.0, dtype), G])
        return self.add("scatter_add", [self.number(0.0, dtype, shape), I, G], axis=0)

    # ---- convolution -----------------------------------------------------------
    @staticmethod
    def _per_axis(v, k):
        v = list(v) if isinstance(v, (list, tuple)) else [v]
        return v * k if len(v) == 1 else v

    def op_convolution_default(self, n, a, shape, dtype):
        x, w, b, stride, padding, dilation, transposed, out_pad, groups = a[:9]
        k = len(self.shape_of(x)) - 2
        s, p, d = self._per_axis(stride, k), self._per_axis(padding, k), self._per_axis(dilation, k)
        if transposed:
            # A transposed convolution is the input gradient of the plain
            # one whose input has this output's shape (output_padding only
            # widens it), with w [C_in, C_out / groups, K...] as its weight.
            y = self._conv_input_grad(self.ids[x], self.ids[w], shape, self.shape_of(w),
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

    def op_convolution_backward_default(self, n, a, shapes, dtypes):
        g, x, w, bias_sizes, stride, padding, dilation, transposed, out_pad, groups, mask = a[:11]
        xs, ws, gs = self.shape_of(x), self.shape_of(w), self.shape_of(g)
        k = len(xs) - 2
        s, p, d = self._per_axis(stride, k), self._per_axis(padding, k), self._per_axis(dilation, k)
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
                out[1] = self._conv_weight_grad(X, G, gs, ws, xs, s, p, d, groups)
        else:
            if mask[0]:
                out[0] = self._conv_input_grad(G, W, xs, ws, gs, s, p, d, groups,
                                               "aten.convolution_backward")
            if mask[1]:
                out[1] = self._conv_weight_grad(G, X, xs, ws, gs, s, p, d, groups)
        if mask[2]:
            out[2] = self.add("sum", [G], axes=[0] + list(range(2, 2 + k)))
        return out

    # ---- pooling ---------------------------------------------------------------
    def _pool_args(self, a, k):
        kernel = self._per_axis(a[1], k)
        stride = self._per_axis(a[2], k) if len(a) > 2 and a[2] else kernel
        pad = self._per_axis(a[3], k) if len(a) > 3 else [0] * k
        dil = self._per_axis(a[4], k) if len(a) > 4 else [1] * k
        ceil = a[5] if len(a) > 5 else False
        if any(v != 1 for v in dil) or ceil:
            raise Unsupported("aten.max_pool with dilation or ceil_mode")
        return dict(window=kernel, stride=stride, padding=[[q, q] for q in pad])

    def op_max_pool2d_with_indices_default(self, n, a, shapes, dtypes):
        x = self.ids[a[0]]
        attrs = self._pool_args(a, len(self.shape_of(a[0])) - 2)
        return [self.add("pool", [x], reduce="max", **attrs),
                self.add("pool", [x], reduce="argmax", **attrs)]

    op_max_pool3d_with_indices_default = op_max_pool2d_with_indices_default

    def op_max_pool2d_with_indices_backward_default(self, n, a, shape, dtype):
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

    op_max_pool3d_with_indices_backward_default = op_max_pool2d_with_indices_backward_default

    def op_avg_pool2d_default(self, n, a, shape, dtype):
        k = len(self.shape_of(a[0])) - 2
        kernel = self._per_axis(a[1], k)
        stride = self._per_axis(a[2], k) if len(a) > 2 and a[2] else kernel
        pad = self._per_axis(a[3], k) if len(a) > 3 else [0] * k
        if (len(a) > 4 and a[4]) or (len(a) > 5 and not a[5]) or (len(a) > 6 and a[6] is not None):
            raise Unsupported("aten.avg_pool2d with ceil_mode, count_include_pad=False or divisor_override")
        return self.add("pool", [self.ids[a[0]]], reduce="mean", window=kernel, stride=stride,
                        padding=[[q, q] for q in pad])

    # ---- normalization -----------------------------------------------------------
    def op_native_batch_norm_default(self, n, a, shapes, dtypes):
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

    def op_native_batch_norm_backward_default(self, n, a, shapes, dtypes):
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

    def op_native_group_norm_default(self, n, a, shapes, dtypes):
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

    def op_native_group_norm_backward_default(self, n, a, shapes, dtypes):
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
    def op_native_dropout_default(self, n, a, shapes, dtypes):
        if len(a) > 2 and a[2] is False or (len(a) > 1 and a[1] == 0):
            return [self.ids[a[0]], self.number(True, "bool", self.shape_of(a[0]))]
        raise Unsupported("dropout in training mode (aten.native_dropout): the DAG has no "
                          "random numbers; export with the dropout modules in eval() mode")

    def op_bernoulli_float(self, n, a, shape, dtype):
        raise Unsupported("random numbers (aten.bernoulli_, dropout in training mode): the "
                          "DAG has none; export with the dropout modules in eval() mode")

    # ---- recurrent layers' pieces (unbind, stack, and their backward) ------------
    op_unsafe_split_Tensor = op_split_Tensor
    op_unsafe_split_with_sizes_default = op_split_with_sizes_default

    def op_transpose_default(self, n, a, shape, dtype):
        rank = len(shape)
        perm = list(range(rank))
        d0, d1 = a[1] % rank, a[2] % rank
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return self.add("transpose", [self.ids[a[0]]], perm=perm)

    def op_unbind_int(self, n, a, shapes, dtypes):
        src = self.shape_of(a[0])
        dim = (a[1] if len(a) > 1 else 0) % len(src)
        rest = src[:dim] + src[dim + 1:]
        return [self.reshape(s, rest) for s in self._split(self.ids[a[0]], src, dim, [1] * src[dim])]

    def op_stack_default(self, n, a, shape, dtype):
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

    def op_select_backward_default(self, n, a, shape, dtype):
        sizes = list(a[1])
        dim = a[2] % len(sizes)
        index = a[3] % sizes[dim]
        gshape = sizes[:dim] + [1] + sizes[dim + 1:]
        g = self.reshape(self.ids[a[0]], gshape)
        return self._pad_along(g, gshape, sizes, dim, index, dtype)

    def op_slice_backward_default(self, n, a, shape, dtype):
        sizes = list(a[1])
        dim = a[2] % len(sizes)
        start, end, step = self._slice_bounds(sizes[dim], a[3], a[4], a[5])
        if step != 1:
            raise Unsupported("aten.slice_backward with a step")
        return self._pad_along(self.ids[a[0]], self.shape_of(a[0]), sizes, dim, start, dtype)
