"""The Exporter: builds the DAG's nodes (`add`, `constant`, `arg`) and
translates each fx node of the traced step through the registry of ATen
translations (registry.py). The helpers here are what translations share."""
import math

import torch
from torch.fx.passes.shape_prop import TensorMetadata

from .registry import OPMATH, TRANSLATIONS, Unsupported

INF_SAFE = ("f16", "bf16", "f32", "f64")
LOW = ("f16", "bf16")

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
          torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
          torch.int8: "i8", torch.bool: "bool"}


def _meta(node):
    return node.meta["tensor_meta"]


class Ops:
    """What translations build with, besides `add`, `arg` and `constant`."""

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
        if node in self.widened:
            return "f32"
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


    def _gelu_cdf(self, x, dtype):
        """0.5 * (1 + erf(x / sqrt(2)))"""
        e = self.add("erf", [self.add("mul", [x, self.constant(0.7071067811865476, dtype)])])
        return self.add("mul", [self.add("add", [e, self.constant(1.0, dtype)]),
                                self.constant(0.5, dtype)])


class Exporter(Ops):
    def __init__(self):
        self.nodes = []
        self.ids = {}  # fx node -> DAG node id (aliases map to their source)
        self.count = 0
        self.updates = {}  # buffer placeholder -> its new value (batch norm)
        self.widened = {}  # fx node -> its f32 cast, while an opmath op translates
        # nll_loss_backward's [N, C] result -> (keep, G): its rows' sums, each
        # row's one non-zero -(keep * G), for log_softmax's backward.
        self.onehot_rows = {}

    @staticmethod
    def dtype_name(dt):
        if dt not in DTYPES:
            raise Unsupported(f"tensors of {dt}")
        return DTYPES[dt]

    def add(self, op, args=(), name=None, **attrs):
        self.count += 1
        nid = f"{name or op}.{self.count}"
        node = {"id": nid, "op": op, "args": list(args)}
        node.update(attrs)
        self.nodes.append(node)
        return nid

    def constant(self, value, dtype):
        return self.add("constant", value=value, dtype=dtype)

    def arg(self, a, dtype):
        """A DAG id for an fx argument: a node or a Python number."""
        if isinstance(a, torch.fx.Node):
            return self.ids[a]
        return self.constant(float(a) if dtype.startswith(("f", "b")) and dtype != "bool" else a, dtype)

    def promoted(self, a, dtype):
        """arg(a, dtype), cast to `dtype` when it is a tensor of another
        dtype (PyTorch's type promotion, which the DAG writes out)."""
        x = self.arg(a, dtype)
        if isinstance(a, torch.fx.Node) and self.dtype_of(a) != dtype:
            return self.add("cast", [x], dtype=dtype)
        return x

    def translate(self, n):
        """The DAG id of fx node `n` (a list of ids for several results)."""
        t = n.target
        name = getattr(t, "__name__", str(t))
        a = n.args
        if name == "getitem":  # one result of a multi-result op
            return self.ids[a[0]][a[1]]
        op, _, overload = name.partition(".")
        if op.endswith("_") and op not in ("fill_", "copy_"):
            # In place (add_, mul_, ...): the value is the out-of-place op's;
            # export_step makes later reads of the operand see it.
            name = op[:-1] + "." + overload
        meta = n.meta["tensor_meta"]
        if isinstance(meta, TensorMetadata):
            shape, dtype = list(meta.shape), self.dtype_name(meta.dtype)
        else:  # several results: `dtype` is the list of their dtypes
            # (Results of dtypes the DAG lacks, such as batch norm's uint8
            # workspace in PyTorch 1.13, are never read.)
            shape, dtype = None, [DTYPES.get(m.dtype) for m in meta
                                  if isinstance(m, TensorMetadata)]
        translation = TRANSLATIONS.get(name)
        if translation is None:
            raise Unsupported(f"aten.{name}")
        if name in OPMATH:
            return self._in_f32(translation, n, a, shape, dtype)
        return translation(self, n, a, shape, dtype)

    def _in_f32(self, translation, n, a, shape, dtype):
        """translation(...) with its f16/bf16 tensor operands cast to f32
        and its f16/bf16 results cast back: one rounding, as ATen's."""
        low = []
        torch.fx.node.map_arg((n.args, n.kwargs), lambda x: low.append(x)
                              if self.dtype_name(_meta(x).dtype) in LOW else None)
        dtypes = dtype if isinstance(dtype, list) else [dtype]
        if not low and not any(d in LOW for d in dtypes):
            return translation(self, n, a, shape, dtype)
        saved = {x: self.ids[x] for x in low}
        for x in low:
            self.ids[x] = self.widened[x] = self.add("cast", [saved[x]], dtype="f32")
        try:
            wide = [("f32" if d in LOW else d) for d in dtypes]
            out = translation(self, n, a, shape, wide if isinstance(dtype, list) else wide[0])
        finally:
            self.ids.update(saved)
            for x in low:
                del self.widened[x]
        narrow = lambda v, d: self.add("cast", [v], dtype=d) if d in LOW and v is not None else v
        if isinstance(dtype, list):
            return [narrow(v, d) for v, d in zip(out, dtype)]
        return narrow(out, dtype)
