#!/usr/bin/env python3
"""Exports one data-parallel training step of a torch.nn.Module to rankc's
DAG format: the forward pass and the backward pass (traced with make_fx into
ATen ops), parameters in registration order as `param` nodes, the batch as
`input` nodes, the loss as an output and every gradient as a `grad_of`
output. Works with Debian's python3-torch (1.13) and current PyTorch.

    from export_torch import export_step
    doc = export_step(model, example_inputs, loss_fn, world_size=2,
                      bucket_cap_mb=25, first_bucket_cap_mb=1,
                      optimizer={"kind": "sgd", "lr": 0.1, "momentum": 0.9})

    python3 scripts/export_torch.py MODEL OUT.json   (MODEL: see MODELS below)
        [--world-size N] [--bucket-cap-mb X] [--first-bucket-cap-mb Y]
        [--optimizer sgd|adam|adamw --lr X [--momentum M] [--dampening D]
         [--nesterov] [--weight-decay W] [--betas B1,B2] [--eps E]]
        [--freeze PARAM]...

    doc = export_step(model, (x,), lambda y, t: F.cross_entropy(y, t),
                      targets=(labels,), world_size=2)

The loss is loss_fn(model(*inputs), *targets); the inputs are `input0`,
... and the targets `target0`, ... (export_torch.save_inputs writes both,
with the parameters and carried buffers, per rank).

With an optimizer (a dict as dag-format.md's `optimizer`, or a
torch.optim.SGD/Adam/AdamW whose settings are copied) the document is
version 2 and trains under `launch --steps N`: every parameter is updated
after each step. Parameters with requires_grad=False (or --freeze) are not
parameters of the step: they become `input` nodes (values supplied like the
batch's) with no gradient, so DDP's averaging and the optimizer skip them.
A parameter shared by several modules (a head tied to its embedding) is one
`param` whose gradient sums every use. Buffers the step writes (batch
norm's running statistics, in training mode) are inputs carried as
`state` and written after the last step under their names; the other
buffers and the tensors the model or the loss captures become `constant`
nodes (at most MAX_CONSTANT elements each: larger ones must be inputs).
Parameter and buffer ids are their PyTorch names, with a leading '_' where
the name does not start with a letter (nn.Sequential's `0.weight` is
`_0.weight`: dag_id()).

The operators: export_torch.py's own (elementwise, matmuls, layer norm,
softmax, GELU) and export_torch_ops.py's (losses, shapes, embeddings,
convolution, pooling, batch and group norm, with their backward).
Operators without a translation stop the export with one message listing
every one of them and the module each comes from; dropout in training mode
is refused (the DAG has no random numbers).
"""
import argparse
import json
import sys

import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.shape_prop import ShapeProp, TensorMetadata

from export_torch_ops import Ops, Unsupported

try:
    from torch.func import functional_call
except ImportError:  # PyTorch 1.13
    from torch.nn.utils.stateless import functional_call

DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
          torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32",
          torch.int8: "i8", torch.bool: "bool"}


class Exporter(Ops):
    def __init__(self):
        self.nodes = []
        self.ids = {}  # fx node -> DAG node id (aliases map to their source)
        self.count = 0
        self.updates = {}  # buffer placeholder -> its new value (batch norm)

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

    def translate(self, n):
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
        if not isinstance(meta, TensorMetadata):  # several results
            # (Results of dtypes the DAG lacks, such as batch norm's uint8
            # workspace in PyTorch 1.13, are never read.)
            return self.translate_multi(name, a, [DTYPES.get(m.dtype) for m in meta
                                                  if isinstance(m, TensorMetadata)], n)
        shape, dtype = list(meta.shape), self.dtype_name(meta.dtype)
        A = lambda i: self.arg(a[i], dtype)
        if name == "_softmax.default":
            # exp(x - max) / sum(exp(x - max)) along the axis
            d = a[1]
            mx = self.add("max", [A(0)], axes=[d], keepdims=True)
            e = self.add("exp", [self.add("sub", [A(0), mx])])
            return self.add("div", [e, self.add("sum", [e], axes=[d], keepdims=True)])
        if name == "_softmax_backward_data.default":
            # y * (g - sum(g * y)) along the axis
            g, y, d = self.ids[a[0]], self.ids[a[1]], a[2]
            s_ = self.add("sum", [self.add("mul", [g, y])], axes=[d], keepdims=True)
            return self.add("mul", [y, self.add("sub", [g, s_])])
        if name == "gelu.default":
            if n.kwargs.get("approximate", "none") != "none":
                raise Unsupported("aten.gelu with approximate='tanh'")
            return self.add("mul", [self._gelu_cdf(A(0), dtype), A(0)])
        if name == "gelu_backward.default":
            if n.kwargs.get("approximate", "none") != "none":
                raise Unsupported("aten.gelu_backward with approximate='tanh'")
            g, x = self.ids[a[0]], self.ids[a[1]]
            # g * (Phi(x) + x * exp(-x^2 / 2) / sqrt(2 pi))
            x2 = self.add("mul", [x, x])
            pdf = self.add("mul", [self.add("exp", [self.add("mul", [x2, self.constant(-0.5, dtype)])]),
                                   self.constant(0.3989422804014327, dtype)])
            d = self.add("add", [self._gelu_cdf(x, dtype), self.add("mul", [x, pdf])])
            return self.add("mul", [g, d])
        if name in ("detach.default", "alias.default", "clone.default"):
            return self.ids[a[0]]
        if name in ("t.default",):
            return self.add("transpose", [A(0)], perm=[1, 0])
        if name == "transpose.int":
            rank = len(shape)
            perm = list(range(rank))
            d0, d1 = a[1] % rank, a[2] % rank
            perm[d0], perm[d1] = perm[d1], perm[d0]
            return self.add("transpose", [A(0)], perm=perm)
        if name == "permute.default":
            return self.add("transpose", [A(0)], perm=list(a[1]))
        if name in ("mm.default", "bmm.default"):
            return self.add("matmul", [A(0), A(1)])
        if name == "addmm.default":
            mm = self.add("matmul", [A(1), A(2)])
            return self.add("add", [A(0), mm])
        if name in ("view.default", "_unsafe_view.default", "reshape.default",
                    "_reshape_alias.default"):
            return self.add("reshape", [A(0)], shape=shape)
        if name == "expand.default":
            return self.add("broadcast_to", [A(0)], shape=shape)
        binary = {"add.Tensor": "add", "sub.Tensor": "sub", "mul.Tensor": "mul",
                  "div.Tensor": "div", "div.Scalar": "div", "mul.Scalar": "mul",
                  "add.Scalar": "add", "sub.Scalar": "sub", "pow.Tensor_Scalar": "pow",
                  "maximum.default": "maximum", "minimum.default": "minimum"}
        if name in binary:
            if name in ("add.Tensor", "sub.Tensor") and len(a) > 2 or n.kwargs.get("alpha", 1) != 1:
                raise Unsupported(f"aten.{name} with alpha")
            return self.add(binary[name], [A(0), A(1)])
        if name == "rsub.Scalar":
            return self.add("sub", [A(1), A(0)])
        unary = {"relu.default": "relu", "tanh.default": "tanh", "exp.default": "exp",
                 "neg.default": "neg", "sigmoid.default": "sigmoid", "sqrt.default": "sqrt",
                 "rsqrt.default": "rsqrt", "log.default": "log", "erf.default": "erf",
                 "abs.default": "abs"}
        if name in unary:
            return self.add(unary[name], [A(0)])
        if name in ("ones_like.default", "zeros_like.default"):
            return self.add("constant", value=1.0 if name.startswith("ones") else 0.0,
                            shape=shape, dtype=dtype)
        if name == "sum.dim_IntList":
            keep = bool(a[2]) if len(a) > 2 else False
            return self.add("sum", [A(0)], axes=list(a[1]), keepdims=keep)
        if name == "sum.default":
            return self.add("sum", [A(0)])
        if name == "mean.default":
            return self.add("mean", [A(0)])
        if name == "mean.dim":
            keep = bool(a[2]) if len(a) > 2 else False
            return self.add("mean", [A(0)], axes=list(a[1]), keepdims=keep)
        if name == "threshold_backward.default":
            # grad where input > threshold, else 0
            thr = self.constant(float(a[2]), dtype)
            cond = self.add("gt", [self.ids[a[1]], thr])
            zero = self.constant(0.0, dtype)
            return self.add("where", [cond, self.ids[a[0]], zero])
        more = self.translate_more(name, n, a, shape, dtype)
        if more is not None:
            return more
        if name == "tanh_backward.default":
            # grad * (1 - y^2)
            one = self.constant(1.0, dtype)
            y2 = self.add("mul", [self.ids[a[1]], self.ids[a[1]]])
            d = self.add("sub", [one, y2])
            return self.add("mul", [self.ids[a[0]], d])
        raise Unsupported(f"aten.{name}")

    def _gelu_cdf(self, x, dtype):
        """0.5 * (1 + erf(x / sqrt(2)))"""
        e = self.add("erf", [self.add("mul", [x, self.constant(0.7071067811865476, dtype)])])
        return self.add("mul", [self.add("add", [e, self.constant(1.0, dtype)]),
                                self.constant(0.5, dtype)])

    def translate_multi(self, name, a, dtypes, n=None):
        """Ops with several results: a list of DAG ids, read by getitem."""
        more = self.translate_more(name, n, a, None, dtypes)
        if more is not None:
            return more
        dtype = dtypes[0]
        c = lambda v: self.constant(v, dtype)
        if name == "native_layer_norm.default":
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
        if name == "native_layer_norm_backward.default":
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
        raise Unsupported(f"aten.{name}")

def optimizer_settings(optimizer):
    """dag-format.md's `optimizer` from a dict or a torch.optim optimizer
    (its first parameter group's settings; the DAG has one group)."""
    if optimizer is None or isinstance(optimizer, dict):
        return optimizer
    kinds = {torch.optim.SGD: "sgd", torch.optim.Adam: "adam", torch.optim.AdamW: "adamw"}
    kind = kinds.get(type(optimizer))
    if kind is None:
        raise SystemExit(f"error: export_torch: optimizer {type(optimizer).__name__} "
                         "is not supported (SGD, Adam, AdamW)")
    g = optimizer.param_groups[0]
    for flag in ("maximize", "amsgrad"):
        if g.get(flag):
            raise SystemExit(f"error: export_torch: '{flag}' is not supported")
    out = {"kind": kind, "lr": float(g["lr"]), "weight_decay": float(g["weight_decay"])}
    if kind == "sgd":
        out.update(momentum=float(g["momentum"]), dampening=float(g["dampening"]),
                   nesterov=bool(g["nesterov"]))
    else:
        out.update(betas=[float(b) for b in g["betas"]], eps=float(g["eps"]))
    return out


def dag_id(name):
    """A parameter's or buffer's DAG id (and input file name): its PyTorch
    name where that is a valid id, else with a leading '_' (nn.Sequential's
    '0.weight' is '_0.weight')."""
    import re
    name = re.sub(r"[^A-Za-z0-9_.:-]", "_", name)
    return name if re.match(r"[A-Za-z_]", name) else "_" + name


# Captured tensors (get_attr constants of the traced step) up to this many
# elements become `constant` nodes; larger ones are refused (pass them as
# inputs of the model instead).
MAX_CONSTANT = 1 << 16


class _ModulePaths:
    """Labels every fx node made while a submodule's forward runs with that
    module's path (PyTorch 1.13's make_fx records none), for messages."""

    def __init__(self, model):
        self.model, self.stack, self.hooks = model, [], []
        # (functional_call swaps in subclasses: keep the classes' own names)
        self.kinds = {path: type(m).__name__ for path, m in model.named_modules()}

    def __enter__(self):
        for path, mod in self.model.named_modules():
            self.hooks.append(mod.register_forward_pre_hook(self.enter(path)))
            self.hooks.append(mod.register_forward_hook(self.leave))
        self.create = torch.fx.Graph.create_node
        paths = self

        def create_node(graph, *args, **kwargs):
            node = paths.create(graph, *args, **kwargs)
            node.meta["rankc_module"] = paths.stack[-1] if paths.stack else None
            return node
        torch.fx.Graph.create_node = create_node
        return self

    def enter(self, path):
        def hook(module, inputs):
            kind = self.kinds.get(path, type(module).__name__)
            self.stack.append(f"module '{path}' ({kind})" if path
                              else f"the model's forward ({kind})")
        return hook

    def leave(self, module, inputs, output):
        self.stack.pop()

    def __exit__(self, *exc):
        torch.fx.Graph.create_node = self.create
        for h in self.hooks:
            h.remove()


class _RnnWeights:
    """PyTorch 1.13's LSTM and GRU read their weights from a list made at
    construction (`_flat_weights`), which functional_call does not update:
    traced, they would use the module's own tensors, not the step's
    parameters. While tracing, each rebuilds the list from its attributes
    before it runs."""

    def __init__(self, model):
        self.rnns = [m for m in model.modules() if isinstance(m, torch.nn.RNNBase)]
        self.hooks = []

    @staticmethod
    def refresh(module, inputs):
        if hasattr(module, "_flat_weights_names"):
            module._flat_weights = [getattr(module, n) for n in module._flat_weights_names]

    def __enter__(self):
        self.hooks = [m.register_forward_pre_hook(self.refresh) for m in self.rnns]
        return self

    def __exit__(self, *exc):
        for h in self.hooks:
            h.remove()
        for m in self.rnns:  # back to the module's own parameters
            self.refresh(m, ())


class _LossDecompositions:
    """Cross-entropy with label smoothing, which PyTorch 1.13 traces into
    data-dependent shapes (masked_select), written with the ops the
    exporter knows, as torch computes it: (1 - e) * NLL + e / C * the sum
    of -log p over the classes, ignored targets left out of both and of
    the mean's count."""

    def __enter__(self):
        import torch.nn.functional as F
        self.F, self.original = F, F.cross_entropy
        original = self.original

        def cross_entropy(input, target, weight=None, size_average=None,
                          ignore_index=-100, reduce=None, reduction="mean",
                          label_smoothing=0.0):
            if not label_smoothing or weight is not None or \
                    size_average is not None or reduce is not None or \
                    target.dtype.is_floating_point:
                return original(input, target, weight, size_average, ignore_index,
                                reduce, reduction, label_smoothing)
            logp = F.log_softmax(input, 1)
            nll = F.nll_loss(logp, target, ignore_index=ignore_index, reduction="none")
            keep = (target != ignore_index).to(logp.dtype)
            smooth = -logp.sum(1) * keep
            per = nll * (1 - label_smoothing) + smooth * (label_smoothing / input.shape[1])
            if reduction == "none":
                return per
            return per.sum() if reduction == "sum" else per.sum() / keep.sum()
        F.cross_entropy = cross_entropy
        return self

    def __exit__(self, *exc):
        self.F.cross_entropy = self.original


def export_step(model, inputs, loss_fn, world_size=1, bucket_cap_mb=25,
                first_bucket_cap_mb=1, order="ready", optimizer=None, targets=()):
    """The DAG of one training step of `model` on `inputs` (a tuple): the
    loss is loss_fn(model(*inputs), *targets), and `targets` (a tuple) are
    inputs of the step too (`target0`, ...). With `optimizer`, the step also
    updates the parameters (version 2). Buffers the step updates (batch
    norm's running statistics) are inputs carried as `state` (version 2);
    other buffers and captured tensors become `constant` nodes."""
    targets = tuple(targets)
    named = list(model.named_parameters())
    # Every name of each parameter (tied weights have several): all get the
    # parameter's one placeholder.
    aliases = {}
    for path, mod in model.named_modules(remove_duplicate=False):
        for pname, p in mod._parameters.items():
            if p is not None:
                alias = f"{path}.{pname}" if path else pname
                if alias not in aliases.setdefault(id(p), []):
                    aliases[id(p)].append(alias)
    names = [n for n, p in named if p.requires_grad]
    frozen = [n for n, p in named if not p.requires_grad]
    params = [p.detach().clone().requires_grad_() for _, p in named if p.requires_grad]
    fixed = [p.detach().clone() for _, p in named if not p.requires_grad]
    buffers = list(model.named_buffers())
    bufs = [b.detach().clone() for _, b in buffers]
    by_name = dict(named)
    ni, nt, np_, nf = len(inputs), len(targets), len(params), len(fixed)

    def step(*args):
        xs, ts = args[:ni], args[ni:ni + nt]
        ps = args[ni + nt:ni + nt + np_]
        fs = args[ni + nt + np_:ni + nt + np_ + nf]
        bs = args[ni + nt + np_ + nf:]
        values = {}
        for name, v in list(zip(names, ps)) + list(zip(frozen, fs)):
            for alias in aliases[id(by_name[name])]:
                values[alias] = v
        values.update(zip([b for b, _ in buffers], bs))
        out = functional_call(model, values, tuple(xs))
        loss = loss_fn(out, *ts)
        return (loss, *torch.autograd.grad(loss, ps))

    args = (*inputs, *targets, *params, *fixed, *bufs)
    with _ModulePaths(model), _RnnWeights(model), _LossDecompositions():
        gm = make_fx(step)(*args)
    ShapeProp(gm).propagate(*args)
    ex = Exporter()
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    groups = {"input": placeholders[:ni], "target": placeholders[ni:ni + nt],
              "param": placeholders[ni + nt:ni + nt + np_],
              "frozen": placeholders[ni + nt + np_:ni + nt + np_ + nf],
              "buffer": placeholders[ni + nt + np_ + nf:]}
    unsupported = {}

    def refuse(what, node):
        where = node.meta.get("rankc_module") if node is not None else None
        unsupported.setdefault(what, set()).add(where or "the backward pass or the loss")

    def leaf(op, nid, n):
        meta = n.meta["tensor_meta"]
        try:
            dt = ex.dtype_name(meta.dtype)
        except Unsupported as e:
            refuse(f"{nid}: {e}", None)
            dt = "f32"
        ex.nodes.append({"id": nid, "op": op, "shape": list(meta.shape), "dtype": dt})
        ex.ids[n] = nid

    # Parameters first, in registration order, then the inputs, the targets,
    # the frozen parameters (inputs named after them) and the buffers.
    for i, n in enumerate(groups["param"]):
        leaf("param", dag_id(names[i]), n)
    for i, n in enumerate(groups["input"]):
        leaf("input", f"input{i}", n)
    for i, n in enumerate(groups["target"]):
        leaf("input", f"target{i}", n)
    for i, n in enumerate(groups["frozen"]):
        leaf("input", dag_id(frozen[i]), n)
    for i, n in enumerate(groups["buffer"]):
        leaf("input", dag_id(buffers[i][0]), n)
    buffer_of = {n: dag_id(buffers[i][0]) for i, n in enumerate(groups["buffer"])}
    # Only what the results need: a traced step also holds dead values (the
    # uint8 workspace PyTorch 1.13 allocates for batch norm).
    # In-place writes of buffers (num_batches_tracked += 1) are results too.
    writes = [n for n in gm.graph.nodes if n.op == "call_function" and n.args and
              n.args[0] in groups["buffer"] and
              getattr(n.target, "__name__", "").split(".")[0].endswith("_")]
    live, todo = set(), [n for n in gm.graph.nodes if n.op == "output"] + writes
    while todo:
        n = todo.pop()
        if n not in live:
            live.add(n)
            todo.extend(n.all_input_nodes)
    outputs = {}
    for n in gm.graph.nodes:
        if n not in live:
            continue
        if n.op == "get_attr":
            value = getattr(gm, n.target)
            if value.numel() > MAX_CONSTANT:
                refuse(f"a captured tensor of {value.numel()} elements (at most "
                       f"{MAX_CONSTANT} become constants: make it an input)", n)
                continue
            try:
                dt = ex.dtype_name(value.dtype)
            except Unsupported as e:
                refuse(str(e), n)
                continue
            ex.ids[n] = ex.add("constant", value=value.tolist(), dtype=dt,
                               shape=list(value.shape))
            if not value.shape:
                ex.nodes[-1].pop("shape")
        elif n.op == "call_function":
            # Past an unsupported operator, its users cannot be translated
            # either: go on only to collect every unsupported name.
            missing = []
            torch.fx.node.map_arg((n.args, n.kwargs),
                                  lambda x: missing.append(x) if x not in ex.ids else x)
            if missing:
                continue
            try:
                ex.ids[n] = ex.translate(n)
            except Unsupported as e:
                refuse(str(e), n)
                # A stand-in result, so that the operators after it are
                # still checked: every unsupported one is reported at once.
                meta = n.meta.get("tensor_meta")
                ex.ids[n] = ["?"] * len(meta) if isinstance(meta, (list, tuple)) else "?"
                continue
            name = getattr(n.target, "__name__", "")
            if name.split(".")[0].endswith("_") and n.args and \
                    isinstance(n.args[0], torch.fx.Node):
                # In place: later reads of the operand see the new value.
                ex.ids[n.args[0]] = ex.ids[n]
                if n.args[0] in buffer_of:
                    ex.updates[n.args[0]] = ex.ids[n]
        elif n.op == "output":
            results = n.args[0]
            if unsupported:
                lines = [f"  {what} (in {'; '.join(sorted(w))})"
                         for what, w in sorted(unsupported.items())]
                raise SystemExit("error: export_torch: unsupported operators:\n" +
                                 "\n".join(lines))
            outputs["loss"] = ex.ids[results[0]]
            for name, g in zip(names, results[1:]):
                outputs["grad." + name] = {"node": ex.ids[g], "grad_of": dag_id(name)}
    # Buffers the step wrote (running statistics) are carried to the next
    # step; the others are constants of the step.
    state = {}
    for n, nid in buffer_of.items():
        if n in ex.updates:
            outputs[nid] = ex.updates[n]
            state[nid] = nid
        else:
            node = next(x for x in ex.nodes if x["id"] == nid)
            value = bufs[groups["buffer"].index(n)]
            node.update(op="constant", value=value.tolist())
            node.pop("shape") if not value.shape else None
    for node in ex.nodes:  # args: [] reads better omitted for leaves
        if not node.get("args"):
            node.pop("args", None)
    dp = {"bucket_cap_mb": bucket_cap_mb, "first_bucket_cap_mb": first_bucket_cap_mb,
          "order": order}
    settings = optimizer_settings(optimizer)
    if settings is not None:
        dp["optimizer"] = settings
    program = {"ranks": "all", "nodes": ex.nodes, "outputs": outputs}
    if state:
        program["state"] = state
    v2 = settings is not None or state or any(
        node["op"] in ("take", "scatter_add", "conv", "pool") for node in ex.nodes)
    return {"format": "rankc-dag", "version": 2 if v2 else 1,
            "world_size": world_size, "data_parallel": dp, "programs": [program]}


def save_inputs(folder, model, batches, targets=None):
    """Writes what `launch --inputs FOLDER` reads for a document of
    export_step: on every rank r, each parameter (frozen ones too: they are
    inputs) and each buffer the step carries as FOLDER/rank<r>/<name>.npy,
    batches[r] as input0.npy (a tuple: input0, input1, ...) and targets[r]
    (a tuple) as target0.npy, ..."""
    import numpy as np
    import os
    for r, batch in enumerate(batches):
        d = os.path.join(folder, f"rank{r}")
        os.makedirs(d, exist_ok=True)
        for name, p in list(model.named_parameters()) + list(model.named_buffers()):
            np.save(os.path.join(d, dag_id(name) + ".npy"), p.detach().numpy())
        for i, x in enumerate(batch if isinstance(batch, tuple) else (batch,)):
            np.save(os.path.join(d, f"input{i}.npy"), x.numpy())
        for i, t in enumerate(targets[r] if targets else ()):
            np.save(os.path.join(d, f"target{i}.npy"), t.numpy())


class MLP(torch.nn.Module):
    def __init__(self, sizes=(16, 32, 32, 4)):
        super().__init__()
        self.layers = torch.nn.ModuleList(
            torch.nn.Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:]))

    def forward(self, x):
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i + 1 < len(self.layers):
                x = torch.relu(x)
        return x


class TransformerBlock(torch.nn.Module):
    """Pre-norm attention and GELU MLP with residuals, written with the ops
    a transformer block is made of (layer norm, attention, softmax, GELU)."""

    def __init__(self, d=16, hidden=32):
        super().__init__()
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (torch.nn.Linear(d, d) for _ in range(4))
        self.fc1, self.fc2 = torch.nn.Linear(d, hidden), torch.nn.Linear(hidden, d)
        self.scale = d ** -0.5

    def forward(self, x):
        h = self.ln1(x)
        scores = torch.matmul(self.q(h), self.k(h).transpose(-2, -1)) * self.scale
        x = x + self.o(torch.matmul(torch.softmax(scores, dim=-1), self.v(h)))
        return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.ln2(x))))


MODELS = {
    "mlp": lambda: (MLP(), torch.randn(8, 16)),
    "mlp-large": lambda: (MLP((512, 1024, 1024, 1024, 1024, 16)), torch.randn(64, 512)),
    "transformer": lambda: (TransformerBlock(), torch.randn(2, 5, 16)),
    "transformer-large": lambda: (TransformerBlock(256, 1024), torch.randn(4, 64, 256)),
    "transformer-xl": lambda: (TransformerBlock(1024, 4096), torch.randn(8, 256, 1024)),
    "mlp-wide": lambda: (MLP((1024, 4096, 4096, 1024)), torch.randn(512, 1024)),
}


def main():
    ap = argparse.ArgumentParser(description="Export a training step as a rankc DAG.")
    ap.add_argument("model", help=", ".join(MODELS))
    ap.add_argument("out")
    ap.add_argument("--world-size", type=int, default=2)
    ap.add_argument("--bucket-cap-mb", type=float, default=0.002)
    ap.add_argument("--first-bucket-cap-mb", type=float, default=0.001)
    ap.add_argument("--optimizer", choices=["sgd", "adam", "adamw"])
    ap.add_argument("--lr", type=float)
    ap.add_argument("--momentum", type=float)
    ap.add_argument("--dampening", type=float)
    ap.add_argument("--nesterov", action="store_true")
    ap.add_argument("--weight-decay", type=float)
    ap.add_argument("--betas", type=lambda s: [float(b) for b in s.split(",")])
    ap.add_argument("--eps", type=float)
    ap.add_argument("--freeze", action="append", default=[], metavar="PARAM",
                    help="a parameter to export with requires_grad=False")
    a = ap.parse_args()
    torch.manual_seed(0)
    if a.model not in MODELS:
        raise SystemExit(f"error: export_torch: unknown model '{a.model}' "
                         f"(known: {', '.join(MODELS)})")
    model, batch = MODELS[a.model]()
    known = dict(model.named_parameters())
    for name in a.freeze:
        if name not in known:
            raise SystemExit(f"error: export_torch: --freeze '{name}' is not a parameter "
                             f"(known: {', '.join(known)})")
        known[name].requires_grad_(False)
    optimizer = None
    if a.optimizer:
        if a.lr is None:
            raise SystemExit("error: export_torch: --optimizer needs --lr")
        optimizer = {"kind": a.optimizer, "lr": a.lr}
        fields = {"momentum": a.momentum, "dampening": a.dampening,
                  "weight_decay": a.weight_decay, "betas": a.betas, "eps": a.eps}
        optimizer.update({k: v for k, v in fields.items() if v is not None})
        if a.nesterov:
            optimizer["nesterov"] = True
    doc = export_step(model, (batch,), lambda y: (y * y).mean(),
                      world_size=a.world_size, bucket_cap_mb=a.bucket_cap_mb,
                      first_bucket_cap_mb=a.first_bucket_cap_mb, optimizer=optimizer)
    json.dump(doc, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
