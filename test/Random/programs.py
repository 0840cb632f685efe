#!/usr/bin/env python3
"""Random valid rankc-dag documents over every op of dag-format.md.

    make_program(seed) -> (doc, ranges, eps)

One document per seed: MPMD (a program per rank) or SPMD (one program on
"all", messages to ranks at an offset), 1 to 4 ranks, every leaf,
elementwise, contraction, reduction, indexing, convolution, pooling,
shape and communication op, in every dtype the op takes. `ranges[id]` is
the (low, high) of the values an input must get (indices must be in range);
`eps[id]` the relative error a value may carry (from the coarsest dtype it
was computed in).

Valid by construction:
- deadlock-free: events (computation on a rank, a message, an allreduce)
  are generated in one global order and each send carries a value that
  exists at that point, so every wait follows the order;
- comparable with NumPy: every value carries a bound on its magnitude
  (no overflow, no f16 infinity) and whether it is exact (both sides hold
  the same bits: inputs and ops that only move, select or negate values).
  Discontinuous ops (floor, comparisons, casts to integers) and
  ill-conditioned ones (log, sqrt, div, pow) take exact operands only, so
  that a rounding difference upstream cannot turn into a different value.
"""
import itertools
import math
import random

FLOATS = ["f16", "bf16", "f32", "f64"]
INTS = ["i8", "i32", "i64", "u8", "u16", "u32"]
UNSIGNED = ["u8", "u16", "u32"]  # version 3's
LIMIT = {"f16": 2e3, "bf16": 2e3, "f32": 1e6, "f64": 1e6, "i8": 100,
         "i32": 1e6, "i64": 1e6, "bool": 1, "u8": 200, "u16": 6e4, "u32": 1e6}
EXACT_UNARY = ["neg", "abs", "relu"]
SMOOTH_UNARY = ["exp", "sin", "cos", "tanh", "erf", "sigmoid"]
RISKY_UNARY = ["log", "sqrt", "rsqrt", "floor", "ceil"]


# The relative error one rounding to each float dtype may add.
EPS = {"f16": 1e-2, "bf16": 4e-2, "f32": 2e-5, "f64": 1e-11}


class Val:
    def __init__(self, vid, shape, dtype, mag, exact, eps):
        self.id, self.shape, self.dtype = vid, list(shape), dtype
        self.mag, self.exact, self.eps = float(mag), exact, eps


def numel(shape):
    return math.prod(shape)


class Rank:
    """The values of one program (one rank's in MPMD, every rank's in SPMD)."""

    def __init__(self):
        self.nodes = []
        self.vals = []


class Gen:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        rng = self.rng
        # About 1 document in 12 has more computation and every value of a
        # program as an output: more results than a struct is returned in
        # (rankc-results-through-memory). Drawn apart, so that the other
        # documents are those the seeds always gave.
        self.many_outputs = random.Random(f"many-outputs-{seed}").random() < 0.08
        self.ws = rng.choice([1, 2, 2, 3, 3, 4])
        self.spmd = self.ws > 1 and rng.random() < 0.35
        self.progs = [Rank() for _ in range(1 if self.spmd else self.ws)]
        self.count = 0
        self.tag = 0
        self.v2 = False
        self.v3 = False  # unsigned dtypes, step, rem, grid peers
        self.ranges = {}
        self.zero_ok = rng.random() < 0.15  # zero-size axes in this document
        self.vals = {}  # id -> Val, every program's

    # -- plumbing -----------------------------------------------------
    def add(self, p, node, shape=None, dtype=None, mag=1.0, exact=False):
        self.count += 1
        node["id"] = f"n{self.count}"
        self.progs[p].nodes.append(node)
        if (node["op"] in ("step", "rem") or node.get("dtype") in UNSIGNED or
                dtype in UNSIGNED or "grid" in str(node.get("dest", node.get("src", "")))):
            self.v3 = True
        if shape is None:
            return None
        # The error a value may carry: its own dtype's rounding, and for a
        # computed value the coarsest of its operands' (a bf16 product cast
        # to f64 is still only as good as bf16).
        eps = EPS.get(dtype, 0.0)
        if not exact:
            eps = max([eps] + [self.vals[a].eps for a in node.get("args", [])])
        v = Val(node["id"], shape, dtype, mag, exact, eps)
        self.progs[p].vals.append(v)
        self.vals[v.id] = v
        return v

    def dim(self, lo=1):
        if self.zero_ok and lo == 0 and self.rng.random() < 0.1:
            return 0
        return self.rng.randint(max(lo, 1), 5)

    def shape(self, rank=None):
        rank = self.rng.choice([0, 1, 1, 2, 2, 3, 4]) if rank is None else rank
        return [self.dim(0) for _ in range(rank)]

    def dtype(self, kind="any"):
        r = self.rng.random()
        if kind == "float" or (kind == "any" and r < 0.6):
            return self.rng.choice(["f32", "f32", "f64", "f64", "f16", "bf16"])
        if kind == "int" or (kind == "any" and r < 0.9):
            return self.rng.choice(INTS)
        return "bool"

    def pick(self, p, pred=lambda v: True):
        cands = [v for v in self.progs[p].vals if pred(v)]
        return self.rng.choice(cands) if cands else None

    def leaf(self, p, shape, dtype, lo=None, hi=None):
        """A new input (or param, constant or iota) of this shape and dtype."""
        rng = self.rng
        r = rng.random()
        if r < 0.05 and not shape and dtype != "bool" and lo is None:
            # The step number: 0 in a one-step run (the differential runs one).
            return self.add(p, {"op": "step", "dtype": dtype}, shape, dtype, 1, True)
        if r < 0.15 and dtype != "bool":
            value = (rng.randint(-3, 3) if dtype not in FLOATS
                     else round(rng.uniform(-2, 2), 2))
            if dtype in UNSIGNED:
                value = abs(value)
            if lo is not None:
                value = rng.randint(lo, hi)
            if len(shape) == 1 and shape[0] > 0 and rng.random() < 0.5:
                value = [value] * shape[0]
                node = {"op": "constant", "value": value, "dtype": dtype}
                if isinstance(value, list):
                    return self.add(p, node, shape, dtype, max(abs(value[0]), 1), True)
            node = {"op": "constant", "value": value, "dtype": dtype, "shape": shape}
            return self.add(p, node, shape, dtype, max(abs(value), 1), True)
        if r < 0.25 and shape and dtype != "bool" and lo is None:
            axis = rng.randrange(len(shape))
            return self.add(p, {"op": "iota", "shape": shape, "dtype": dtype, "axis": axis},
                            shape, dtype, max(shape[axis], 1), True)
        op = "param" if r < 0.35 else "input"
        v = self.add(p, {"op": op, "shape": shape, "dtype": dtype}, shape, dtype,
                     LIMIT[dtype] if lo is None and dtype not in FLOATS else
                     (max(abs(lo), abs(hi)) if lo is not None else 1.0), True)
        if dtype in INTS:
            self.ranges[v.id] = ((lo, hi) if lo is not None else
                                 (0, 16) if dtype in UNSIGNED else (-8, 8))
            v.mag = max(abs(self.ranges[v.id][0]), abs(self.ranges[v.id][1]))
        return v

    def of_shape(self, p, shape, dtype, exact=False, maxmag=None):
        """A value of exactly this shape and dtype: an existing one, one
        reshaped or broadcast from an existing one, or a new leaf."""
        ok = lambda v: (v.dtype == dtype and (v.exact or not exact) and
                        (maxmag is None or v.mag <= maxmag))
        same = self.pick(p, lambda v: ok(v) and v.shape == shape)
        r = self.rng.random()
        if same and r < 0.6:
            return same
        if r < 0.75:
            src = self.pick(p, lambda v: ok(v) and numel(v.shape) == numel(shape) and
                            v.shape != shape and numel(shape) > 0)
            if src:
                target = list(shape)
                if target and self.rng.random() < 0.3:
                    target[self.rng.randrange(len(target))] = -1
                return self.add(p, {"op": "reshape", "args": [src.id], "shape": target},
                                shape, dtype, src.mag, src.exact)
        if r < 0.9:
            src = self.pick(p, lambda v: ok(v) and broadcastable(v.shape, shape))
            if src:
                return self.add(p, {"op": "broadcast_to", "args": [src.id], "shape": shape},
                                shape, dtype, src.mag, src.exact)
        return self.leaf(p, shape, dtype)

    # -- computation ----------------------------------------------------
    def compute(self, p):
        rng = self.rng
        kinds = ["unary"] * 4 + ["binary"] * 5 + ["cast", "cast", "where", "reduce",
                 "reduce", "matmul", "einsum", "shape", "shape", "slice", "concat",
                 "take", "scatter_add", "conv", "pool", "leaf", "linear", "softmax"]
        for _ in range(8):
            kind = rng.choice(kinds)
            if getattr(self, "op_" + kind)(p) is not None:
                return

    def op_leaf(self, p):
        return self.leaf(p, self.shape(), self.dtype())

    def op_unary(self, p):
        x = self.pick(p)
        if x is None:
            return None
        rng = self.rng
        if x.dtype == "bool":
            return self.add(p, {"op": "not", "args": [x.id]}, x.shape, "bool", 1, x.exact)
        ops = list(EXACT_UNARY)
        if x.dtype in FLOATS:
            ops += SMOOTH_UNARY + (RISKY_UNARY if x.exact else [])
        else:
            ops += ["floor", "ceil"]  # identity on integers
        if x.dtype in UNSIGNED:
            ops.remove("neg")  # wraps (tested by hand), past the magnitudes here
        op = rng.choice(ops)
        if x.dtype == "i8" and op in ("neg", "abs") and x.mag >= 100:
            return None
        mag = {"exp": math.exp(min(x.mag, 700)), "sin": 1, "cos": 1, "tanh": 1, "erf": 1,
               "sigmoid": 1, "log": 1e3, "sqrt": math.sqrt(x.mag), "rsqrt": 1e3,
               "floor": x.mag + 1, "ceil": x.mag + 1}.get(op, x.mag)
        if mag > LIMIT[x.dtype]:
            return None
        exact = x.exact and (op in EXACT_UNARY or op in ("floor", "ceil"))
        return self.add(p, {"op": op, "args": [x.id]}, x.shape, x.dtype, mag, exact)

    def op_binary(self, p):
        rng = self.rng
        x = self.pick(p)
        if x is None:
            return None
        t = x.dtype
        if t == "bool":
            ops = ["and", "or", "eq", "ne", "add", "mul", "maximum", "minimum"]
        else:
            ops = ["add", "sub", "mul", "maximum", "minimum", "eq", "ne", "lt", "le",
                   "gt", "ge", "rem"] + (["div", "pow"] if t in FLOATS else [])
            if t in UNSIGNED:
                ops.remove("sub")  # wraps: tested by hand
        op = rng.choice(ops)
        if op == "rem":
            return self.op_rem(p, x)
        needs_exact = op in ("div", "pow", "eq", "ne", "lt", "le", "gt", "ge")
        if needs_exact and not x.exact:
            return None
        # The other operand: same shape, or one that broadcasts with it.
        shape = list(x.shape)
        if rng.random() < 0.3 and shape:
            other = shape[rng.randrange(len(shape)):]
            other = [1 if rng.random() < 0.3 else d for d in other]
        else:
            other = shape
        y = self.of_shape(p, other, t, exact=needs_exact)
        if rng.random() < 0.5:
            x, y = y, x
        out = broadcast(x.shape, y.shape)
        if op in ("eq", "ne", "lt", "le", "gt", "ge"):
            return self.add(p, {"op": op, "args": [x.id, y.id]}, out, "bool", 1, True)
        mag = {"add": x.mag + y.mag, "sub": x.mag + y.mag, "mul": x.mag * y.mag,
               "div": 1e4, "pow": 1e4}.get(op, max(x.mag, y.mag))
        if t == "bool":
            mag = 1
        if op == "pow" and (x.mag > 4 or y.mag > 3):
            return None
        if mag > LIMIT[t]:
            return None
        exact = x.exact and y.exact and (op in ("maximum", "minimum", "and", "or") or
                                         (t not in FLOATS and op in ("add", "sub", "mul")))
        return self.add(p, {"op": op, "args": [x.id, y.id]}, out, t, mag, exact)

    def op_rem(self, p, x):
        """NumPy's remainder by a divisor that is never 0 for integers (a
        constant), of exact operands for floats (it is discontinuous)."""
        rng, t = self.rng, x.dtype
        if not x.exact:
            return None
        if t in FLOATS:
            y = self.of_shape(p, x.shape, t, exact=True)
        else:
            d = rng.randint(1, 5) * (1 if t in UNSIGNED or rng.random() < 0.5 else -1)
            y = self.add(p, {"op": "constant", "value": d, "dtype": t}, [], t, abs(d), True)
        if rng.random() < 0.5 and t in FLOATS:
            x, y = y, x
        out = broadcast(x.shape, y.shape)
        return self.add(p, {"op": "rem", "args": [x.id, y.id]}, out, t,
                        max(x.mag, y.mag), t not in FLOATS or t == "f64")

    def op_cast(self, p):
        x = self.pick(p)
        if x is None:
            return None
        to = self.dtype()
        if to == x.dtype:
            return None
        if to in UNSIGNED and x.dtype not in UNSIGNED and x.dtype != "bool":
            return None  # negative values wrap or are undefined (floats)
        if x.dtype in FLOATS and to not in FLOATS:
            # Truncation and != 0 are discontinuous; out-of-range is UB.
            if not x.exact or x.mag > 100:
                return None
        if to in FLOATS and x.mag > LIMIT[to]:
            return None
        if to == "i8" and x.mag > 100:
            return None
        exact = x.exact and (to not in FLOATS or to == "f64" or x.dtype not in FLOATS)
        return self.add(p, {"op": "cast", "args": [x.id], "dtype": to}, x.shape, to,
                        1 if to == "bool" else x.mag, exact)

    def op_where(self, p):
        c = self.pick(p, lambda v: v.dtype == "bool")
        if c is None:
            return None
        a = self.pick(p, lambda v: v.dtype != "bool" and broadcastable(v.shape, c.shape))
        t = a.dtype if a else self.dtype()
        a = a or self.of_shape(p, c.shape, t)
        b = self.of_shape(p, a.shape, t)
        out = broadcast(broadcast(c.shape, a.shape), b.shape)
        return self.add(p, {"op": "where", "args": [c.id, a.id, b.id]}, out, t,
                        max(a.mag, b.mag), c.exact and a.exact and b.exact)

    def op_reduce(self, p):
        rng = self.rng
        x = self.pick(p, lambda v: v.shape)
        if x is None:
            return None
        ops = ["sum", "prod", "max", "min"] + (["mean"] if x.dtype in FLOATS else [])
        op = rng.choice(ops)
        node = {"op": op, "args": [x.id]}
        axes = list(range(len(x.shape)))
        if rng.random() < 0.7:
            axes = sorted(rng.sample(axes, rng.randint(1, len(axes))))
            node["axes"] = [a - len(x.shape) if rng.random() < 0.2 else a for a in axes]
        keep = rng.random() < 0.3
        if keep:
            node["keepdims"] = True
        shape = [1 if i in axes else d for i, d in enumerate(x.shape)] if keep else \
            [d for i, d in enumerate(x.shape) if i not in axes]
        n = numel([x.shape[a] for a in axes])
        t = x.dtype
        if op in ("sum", "prod") and t in ("bool", "i8", "i32", "u8", "u16", "u32"):
            t = "i64"
        if op in ("max", "min") and n == 0:
            return None  # no identity to compare with
        mag = {"sum": x.mag * max(n, 1),
               "prod": max(x.mag, 1) ** min(max(n, 1), 64)}.get(op, x.mag)
        if mag > LIMIT[t] or (op == "prod" and x.dtype in FLOATS and not x.exact and n > 1):
            return None
        exact = x.exact and (op in ("max", "min") or t not in FLOATS)
        return self.add(p, node, shape, t, mag, exact)

    def op_matmul(self, p):
        rng = self.rng
        t = self.dtype("float" if rng.random() < 0.8 else "int")
        if t in ("i8",):
            return None
        m, k, n = self.dim(), self.dim(0), self.dim()
        batch = [self.dim()] if rng.random() < 0.3 else []
        a = self.of_shape(p, batch + [m, k], t, maxmag=30)
        b = self.of_shape(p, batch + [k, n], t, maxmag=30)
        mag = a.mag * b.mag * max(k, 1)
        if mag > LIMIT[t]:
            return None
        return self.add(p, {"op": "matmul", "args": [a.id, b.id]}, batch + [m, n], t, mag,
                        a.exact and b.exact and t not in FLOATS)

    def op_linear(self, p):
        """An autocast linear layer as the exporter writes addmm (v3): bf16
        x, w and bias widened to f32, the matmul plus the bias, rounded
        to bf16 once (the CUDA backend's cuBLASLt bias epilogue)."""
        rng = self.rng
        m, k, n = self.dim(), self.dim(0), self.dim()
        x = self.of_shape(p, [m, k], "bf16", maxmag=8)
        trans = rng.random() < 0.5  # w stored [n, k], as nn.Linear keeps it
        w = self.of_shape(p, [n, k] if trans else [k, n], "bf16", maxmag=8)
        bias = self.of_shape(p, [n], "bf16", maxmag=30)
        mag = x.mag * w.mag * max(k, 1) + bias.mag
        if mag > LIMIT["bf16"]:
            return None
        wide = lambda v: self.add(p, {"op": "cast", "args": [v.id], "dtype": "f32"},
                                  v.shape, "f32", v.mag, v.exact)
        if trans:
            w = self.add(p, {"op": "transpose", "args": [w.id], "perm": [1, 0]},
                         [k, n], "bf16", w.mag, w.exact)
        xf, wf, bf = wide(x), wide(w), wide(bias)
        mm = self.add(p, {"op": "matmul", "args": [xf.id, wf.id]}, [m, n], "f32",
                      x.mag * w.mag * max(k, 1))
        args = [bf.id, mm.id] if rng.random() < 0.5 else [mm.id, bf.id]
        s = self.add(p, {"op": "add", "args": args}, [m, n], "f32", mag)
        return self.add(p, {"op": "cast", "args": [s.id], "dtype": "bf16"},
                        [m, n], "bf16", mag)

    def op_softmax(self, p):
        """log_softmax over the last axis of a bf16 value widened to f32, as
        autocast computes it: `x - max` read by the sum of exponentials and
        by the result (tensors the CUDA backend recomputes in their
        readers)."""
        x = self.pick(p, lambda v: v.dtype == "bf16" and v.shape and v.shape[-1] > 0
                      and v.mag <= 30)
        if x is None or self.rng.random() < 0.5:
            # Rows of 16 to 32: wide enough that a widened row (2 bytes an
            # element read, 4 written) is worth recomputing.
            x = self.of_shape(p, [self.dim(), self.rng.choice([16, 24, 32])], "bf16",
                              maxmag=30)
        shape, last = x.shape, len(x.shape) - 1
        rows = [d if i < last else 1 for i, d in enumerate(shape)]
        xf = self.add(p, {"op": "cast", "args": [x.id], "dtype": "f32"}, shape, "f32",
                      x.mag, x.exact)
        mx = self.add(p, {"op": "max", "args": [xf.id], "axes": [last], "keepdims": True},
                      rows, "f32", x.mag, x.exact)
        d = self.add(p, {"op": "sub", "args": [xf.id, mx.id]}, shape, "f32", 2 * x.mag)
        e = self.add(p, {"op": "exp", "args": [d.id]}, shape, "f32", 1.0)
        s = self.add(p, {"op": "sum", "args": [e.id], "axes": [last], "keepdims": True},
                     rows, "f32", shape[-1])
        ls = self.add(p, {"op": "log", "args": [s.id]}, rows, "f32",
                      math.log(max(shape[-1], 2)))
        return self.add(p, {"op": "sub", "args": [d.id, ls.id]}, shape, "f32",
                        2 * x.mag + math.log(max(shape[-1], 2)))

    def op_einsum(self, p):
        rng = self.rng
        t = self.dtype("float")
        letters = "abcdef"
        dims = {c: self.dim(0 if rng.random() < 0.2 else 1) for c in letters}
        ops, vals = [], []
        for _ in range(rng.randint(1, 3)):
            sub = "".join(rng.sample(letters, rng.randint(0, 3)))
            v = self.of_shape(p, [dims[c] for c in sub], t, maxmag=10)
            ops.append(sub)
            vals.append(v)
        used = sorted(set("".join(ops)))
        out = "".join(c for c in used if rng.random() < 0.5)
        out = "".join(rng.sample(out, len(out)))
        summed = numel([dims[c] for c in used if c not in out])
        mag = math.prod(v.mag for v in vals) * max(summed, 1)
        if mag > LIMIT[t]:
            return None
        return self.add(p, {"op": "einsum", "spec": ",".join(ops) + "->" + out,
                            "args": [v.id for v in vals]},
                        [dims[c] for c in out], t, mag)

    def op_shape(self, p):
        rng = self.rng
        x = self.pick(p)
        if x is None:
            return None
        r = rng.random()
        if r < 0.35 and len(x.shape) >= 2:
            perm = list(range(len(x.shape)))
            rng.shuffle(perm)
            return self.add(p, {"op": "transpose", "args": [x.id], "perm": perm},
                            [x.shape[i] for i in perm], x.dtype, x.mag, x.exact)
        if r < 0.7:
            target = self.shape()
            if numel(target) != numel(x.shape):
                n = numel(x.shape)
                target = factor(rng, n)
            return self.add(p, {"op": "reshape", "args": [x.id], "shape": target},
                            target, x.dtype, x.mag, x.exact)
        target = [self.dim()] * rng.randint(0, 1) + [d if d != 1 else self.dim() for d in x.shape]
        return self.add(p, {"op": "broadcast_to", "args": [x.id], "shape": target},
                        target, x.dtype, x.mag, x.exact)

    def op_slice(self, p):
        x = self.pick(p, lambda v: v.shape)
        if x is None:
            return None
        rng = self.rng
        begin, end, step, out = [], [], [], []
        for d in x.shape:
            b = rng.randint(0, d)
            e = rng.randint(b, d)
            if not self.zero_ok and e == b:
                b, e = 0, d
            s = rng.randint(1, 3)
            begin.append(b)
            end.append(e)
            step.append(s)
            out.append(len(range(b, e, s)))
        node = {"op": "slice", "args": [x.id], "begin": begin, "end": end}
        if any(s != 1 for s in step) or rng.random() < 0.5:
            node["step"] = step
        else:
            out = [e - b for b, e in zip(begin, end)]
        return self.add(p, node, out, x.dtype, x.mag, x.exact)

    def op_concat(self, p):
        x = self.pick(p, lambda v: v.shape)
        if x is None:
            return None
        rng = self.rng
        axis = rng.randrange(len(x.shape))
        parts = [x]
        for _ in range(rng.randint(1, 2)):
            s = list(x.shape)
            s[axis] = self.dim(0)
            parts.append(self.of_shape(p, s, x.dtype))
        out = list(x.shape)
        out[axis] = sum(v.shape[axis] for v in parts)
        rng.shuffle(parts)
        return self.add(p, {"op": "concat", "args": [v.id for v in parts], "axis": axis},
                        out, x.dtype, max(v.mag for v in parts), all(v.exact for v in parts))

    def indices(self, p, n, shape):
        """Indices in [0, n) of this shape: a constant, an iota or an input."""
        rng = self.rng
        t = rng.choice(INTS)
        r = rng.random()
        # (A nested list of no elements has shape [0]: an empty constant of
        # more axes, [0, 2], cannot be written as one.)
        if r < 0.3 and shape and (numel(shape) > 0 or len(shape) == 1):
            vals = [rng.randrange(n) for _ in range(numel(shape))]
            value = nest(vals, shape)
            return self.add(p, {"op": "constant", "value": value, "dtype": t}, shape, t, n, True)
        if r < 0.45 and shape and max(shape) <= n:
            axis = rng.choice([i for i, d in enumerate(shape) if d <= n])
            return self.add(p, {"op": "iota", "shape": shape, "dtype": t, "axis": axis},
                            shape, t, n, True)
        return self.leaf(p, shape, t, lo=0, hi=n - 1) if r < 0.9 or not shape else \
            self.add(p, {"op": "constant", "value": rng.randrange(n), "dtype": t,
                         "shape": shape}, shape, t, n, True)

    def op_take(self, p):
        x = self.pick(p, lambda v: v.shape and min(v.shape) > 0)
        if x is None:
            return None
        self.v2 = True
        axis = self.rng.randrange(len(x.shape))
        ishape = self.shape(self.rng.choice([0, 1, 1, 2]))
        idx = self.indices(p, x.shape[axis], ishape)
        out = x.shape[:axis] + ishape + x.shape[axis + 1:]
        return self.add(p, {"op": "take", "args": [x.id, idx.id], "axis": axis}, out,
                        x.dtype, x.mag, x.exact)

    def op_scatter_add(self, p):
        base = self.pick(p, lambda v: v.shape and min(v.shape) > 0 and v.dtype != "bool")
        if base is None:
            return None
        self.v2 = True
        axis = self.rng.randrange(len(base.shape))
        ishape = self.shape(self.rng.choice([0, 1, 1, 2]))
        idx = self.indices(p, base.shape[axis], ishape)
        ushape = base.shape[:axis] + ishape + base.shape[axis + 1:]
        upd = self.of_shape(p, ushape, base.dtype)
        mag = base.mag + upd.mag * max(numel(ishape), 1)
        if mag > LIMIT[base.dtype]:
            return None
        return self.add(p, {"op": "scatter_add", "args": [base.id, idx.id, upd.id],
                            "axis": axis}, base.shape, base.dtype, mag,
                        base.exact and upd.exact and base.dtype not in FLOATS)

    def op_conv(self, p):
        rng = self.rng
        self.v2 = True
        t = rng.choice(["f32", "f32", "f64", "f16", "bf16"])
        k = rng.choice([1, 2])
        g = rng.choice([1, 1, 2])
        n, c, o = self.dim(), g * rng.randint(1, 2), g * rng.randint(1, 2)
        sp = [rng.randint(1, 6) for _ in range(k)]
        ks = [rng.randint(1, 3) for _ in range(k)]
        node = {"op": "conv"}
        stride = [rng.randint(1, 2) for _ in range(k)]
        dil = [rng.randint(1, 2) for _ in range(k)]
        idil = [rng.choice([1, 1, 2]) for _ in range(k)]
        pad = [[rng.randint(0, 2), rng.randint(0, 2)] for _ in range(k)]
        out = []
        for d, kk, s, dl, idl, (lo, hi) in zip(sp, ks, stride, dil, idil, pad):
            e = ((d - 1) * idl + 1 + lo + hi - (kk - 1) * dl - 1) // s + 1
            out.append(e)
        if min(out) < 1:
            return None
        for name, v, dflt in (("stride", stride, 1), ("dilation", dil, 1),
                              ("input_dilation", idil, 1)):
            if any(x != dflt for x in v) or rng.random() < 0.3:
                node[name] = v
        if any(lo or hi for lo, hi in pad) or rng.random() < 0.3:
            node["padding"] = pad
        if g != 1 or rng.random() < 0.3:
            node["groups"] = g
        x = self.of_shape(p, [n, c] + sp, t, maxmag=4)
        w = self.of_shape(p, [o, c // g] + ks, t, maxmag=4)
        mag = x.mag * w.mag * (c // g) * numel(ks)
        if mag > LIMIT[t]:
            return None
        node["args"] = [x.id, w.id]
        return self.add(p, node, [n, o] + out, t, mag)

    def op_pool(self, p):
        rng = self.rng
        x = self.pick(p, lambda v: 3 <= len(v.shape) <= 4 and min(v.shape) > 0 and
                      v.dtype != "bool")
        if x is None:
            return None
        self.v2 = True
        red = rng.choice(["max", "sum", "mean", "argmax"])
        if red == "mean" and x.dtype not in FLOATS:
            red = "sum"
        sp = x.shape[2:]
        win = [rng.randint(1, min(d, 3)) for d in sp]
        stride = [rng.randint(1, 2) for _ in sp]
        pad = [[rng.randint(0, w // 2), rng.randint(0, w // 2)] for w in win]
        node = {"op": "pool", "args": [x.id], "reduce": red, "window": win}
        if rng.random() < 0.6:
            node["stride"] = stride
        else:
            stride = win
        if any(lo or hi for lo, hi in pad):
            node["padding"] = pad
        out = [(d + lo + hi - w) // s + 1 for d, (lo, hi), w, s in zip(sp, pad, win, stride)]
        if min(out) < 1:
            return None
        t = "i64" if red == "argmax" else x.dtype
        mag = x.mag * numel(win) if red == "sum" else x.mag
        if red == "argmax":
            mag = numel(sp)
            if not x.exact:
                return None  # ties decided by rounding
        if mag > LIMIT[t]:
            return None
        return self.add(p, node, x.shape[:2] + out, t, mag,
                        x.exact and (red in ("max", "argmax") or t not in FLOATS))

    # -- communication ---------------------------------------------------
    def fresh_tag(self):
        self.tag += 1
        return self.tag if self.rng.random() < 0.5 else f"t{self.tag}"

    def message(self):
        rng = self.rng
        if self.spmd:
            x = self.pick(0)
            if x is None:
                return
            tag = self.fresh_tag()
            if rng.random() < 0.4:
                return self.grid_message(x, tag)
            k = rng.randrange(self.ws)
            self.add(0, {"op": "send", "args": [x.id], "dest": {"offset": k}, "tag": tag})
            self.add(0, {"op": "recv", "src": {"offset": (self.ws - k) % self.ws}, "tag": tag,
                         "shape": x.shape, "dtype": x.dtype}, x.shape, x.dtype, x.mag, x.exact)
            return
        src, dst = rng.randrange(self.ws), rng.randrange(self.ws)
        x = self.pick(src)
        if x is None:
            return
        for _ in range(rng.choice([1, 1, 1, 2])):  # the same value twice, maybe
            tag = self.fresh_tag()
            dest = {"offset": (dst - src) % self.ws} if rng.random() < 0.3 else dst
            self.add(src, {"op": "send", "args": [x.id], "dest": dest, "tag": tag})
            self.add(dst, {"op": "recv", "src": src, "tag": tag, "shape": x.shape,
                           "dtype": x.dtype}, x.shape, x.dtype, x.mag, x.exact)
            dst = rng.randrange(self.ws)

    def grid_message(self, x, tag):
        """A shift on a process grid (v3): none past a non-periodic edge,
        where the receive is its fill."""
        rng = self.rng
        grid = rng.choice([[self.ws], [1, self.ws]] + ([[2, 2]] if self.ws == 4 else []))
        shift = [rng.choice([-1, 0, 1]) for _ in grid]
        periodic = [rng.random() < 0.5 for _ in grid]
        send = {"grid": grid, "shift": shift}
        if any(periodic) or rng.random() < 0.5:
            send["periodic"] = periodic
        recv = dict(send, shift=[-s for s in shift])
        self.add(0, {"op": "send", "args": [x.id], "dest": send, "tag": tag})
        node = {"op": "recv", "src": recv, "tag": tag, "shape": x.shape, "dtype": x.dtype}
        leaves = any(s and not q for s, q in zip(shift, periodic))
        fill = 0
        if leaves or rng.random() < 0.2:
            fill = (rng.random() < 0.5 if x.dtype == "bool" else
                    rng.randint(0, 3) if x.dtype in INTS else round(rng.uniform(-2, 2), 2))
            node["fill"] = fill
        self.add(0, node, x.shape, x.dtype, max(x.mag, abs(fill)), x.exact)

    def allreduce(self):
        rng = self.rng
        shape, t = self.shape(rng.choice([0, 1, 2])), self.dtype()
        if t == "bool":
            t = "f32"
        red = rng.choice(["sum", "prod", "max", "min"] + (["mean"] if t in FLOATS else []))
        tag = f"all{self.fresh_tag()}"
        mags = []
        args = []
        for p in range(len(self.progs)):
            x = self.of_shape(p, shape, t, maxmag=LIMIT[t] ** (1 / self.ws) / self.ws)
            args.append(x)
            mags.append(x.mag)
        mag = {"sum": sum(mags) * (self.ws if self.spmd else 1),
               "prod": max(max(mags), 1) ** min(self.ws, 64)}.get(red, max(mags))
        if mag > LIMIT[t]:
            return
        exact = all(x.exact for x in args) and (red in ("max", "min") or t not in FLOATS)
        for p, x in enumerate(args):
            self.add(p, {"op": "allreduce", "args": [x.id], "reduce": red, "tag": tag},
                     shape, t, mag, exact)

    # -- the document ----------------------------------------------------
    def document(self):
        rng = self.rng
        for p in range(len(self.progs)):
            self.leaf(p, self.shape(), self.dtype())
        for _ in range(rng.randint(4, 28)):
            r = rng.random()
            if r < 0.7 or self.ws == 1 and r < 0.9:
                self.compute(rng.randrange(len(self.progs)))
            elif r < 0.92:
                self.message()
            else:
                self.allreduce()
        if self.many_outputs:
            for p in range(len(self.progs)):
                for _ in range(rng.randint(12, 24)):
                    self.compute(p)
        programs = []
        for p, prog in enumerate(self.progs):
            outs = {}
            vals = prog.vals
            chosen = rng.sample(vals, min(len(vals), rng.randint(1, 4))) + vals[-1:]
            for v in vals if self.many_outputs else chosen:
                outs[f"o{len(outs)}"] = v.id
            if rng.random() < 0.2:
                outs[f"o{len(outs)}"] = vals[-1].id  # one node under two names
            nodes = list(prog.nodes)
            rng.shuffle(nodes)  # nodes may appear in any order
            ranks = "all" if self.spmd else [p]
            programs.append({"ranks": ranks, "nodes": nodes, "outputs": outs})
        dp = None
        if self.spmd and rng.random() < 0.7:
            g = self.pick(0, lambda v: v.dtype in ("f32", "f64") and v.mag < 1e3)
            if g is not None:
                dp = self.data_parallel(g, programs[0])
        doc = {"format": "rankc-dag",
               "version": 3 if self.v3 else 2 if self.v2 else rng.choice([1, 2, 3]),
               "world_size": self.ws, "programs": programs}
        if dp is not None:
            doc["data_parallel"] = dp
        return doc, self.ranges, {vid: v.eps for vid, v in self.vals.items()}

    def data_parallel(self, g, program):
        """Training on value g as the gradient of a new param of its shape
        (read by nothing else, so that its updates cannot reach a value
        whose exactness was promised): SGD (linear in the gradient: an
        error stays as small as the gradient's), with a random schedule or
        an lr input, clipping and accumulation (version 3)."""
        rng = self.rng
        self.count += 1
        w = f"n{self.count}"
        program["nodes"].append({"id": w, "op": "param", "shape": list(g.shape),
                                 "dtype": g.dtype})
        program["outputs"]["g"] = {"node": g.id, "grad_of": w}
        opt = {"kind": "sgd", "lr": rng.choice([0.01, 0.1]),
               "momentum": rng.choice([0, 0.9]), "weight_decay": rng.choice([0, 0.01])}
        if opt["momentum"] and rng.random() < 0.3:
            opt["nesterov"] = True
        r = rng.random()
        if r < 0.4:
            phases = []
            for _ in range(rng.randint(1, 3)):
                kind = rng.choice(["constant", "linear", "cosine", "step", "exponential"])
                ph = {"kind": kind, "steps": rng.randint(1, 3)}
                if kind == "linear":
                    ph.update(start_factor=rng.choice([0.1, 0.5]), end_factor=1.0)
                elif kind == "cosine":
                    ph["min_factor"] = rng.choice([0, 0.1])
                elif kind == "step":
                    ph.update(step_size=rng.randint(1, 2), gamma=0.5)
                elif kind == "exponential":
                    ph["gamma"] = 0.9
                phases.append(ph)
            if rng.random() < 0.5:
                del phases[-1]["steps"]
                if phases[-1]["kind"] in ("linear", "cosine"):
                    phases[-1]["steps"] = 2
            opt["lr_schedule"] = phases
        elif r < 0.6:
            self.count += 1
            lr = f"n{self.count}"
            program["nodes"].append({"id": lr, "op": "input", "shape": [],
                                     "dtype": rng.choice(["f32", "f64"])})
            opt["lr"] = {"input": lr}
        if rng.random() < 0.5:
            opt["clip_grad_norm"] = {"max_norm": rng.choice([0.1, 1.0, 100.0]),
                                     "norm_type": rng.choice([2, "inf"])}
            if rng.random() < 0.5:
                opt["clip_grad_norm"]["output"] = "gnorm"
        dp = {"bucket_cap_mb": rng.choice([1e-5, 25]), "first_bucket_cap_mb": 1e-5,
              "optimizer": opt}
        if rng.random() < 0.5:
            dp["accumulate"] = rng.randint(2, 3)
        self.v2 = True
        if "accumulate" in dp or "lr_schedule" in opt or "clip_grad_norm" in opt or \
                isinstance(opt["lr"], dict):
            self.v3 = True
        return dp


def broadcast(a, b):
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    return [x if y == 1 else y for x, y in zip(a, b)]


def broadcastable(src, dst):
    if len(src) > len(dst):
        return False
    return all(s in (1, d) for s, d in zip(src[::-1], dst[::-1]))


def factor(rng, n):
    """A random shape with n elements."""
    if n == 0:
        return [0, rng.randint(1, 3)] if rng.random() < 0.5 else [0]
    dims = []
    for f in itertools.chain(range(2, n + 1)):
        while n % f == 0 and n > 1 and len(dims) < 3:
            dims.append(f)
            n //= f
    if n > 1:
        dims.append(n)
    rng.shuffle(dims)
    if rng.random() < 0.3:
        dims.insert(rng.randrange(len(dims) + 1), 1)
    return dims


def nest(vals, shape):
    if not shape:
        return vals[0]
    step = numel(shape[1:])
    return [nest(vals[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


def make_program(seed):
    return Gen(seed).document()
