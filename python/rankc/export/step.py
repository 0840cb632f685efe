"""export_step: one data-parallel training step of a torch.nn.Module as a
DAG (see rankc.export), traced with make_fx and translated node by node."""
import torch

from .builder import Exporter
from .registry import Unsupported
from .tracing import CapturedTensors, trace

try:
    from torch.func import functional_call
except ImportError:  # PyTorch 1.13
    from torch.nn.utils.stateless import functional_call


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
    # A scheduler changes the group's lr; the schedule starts from its
    # initial one.
    lr = g.get("initial_lr", g["lr"])
    out = {"kind": kind, "lr": float(lr), "weight_decay": float(g["weight_decay"])}
    if kind == "sgd":
        out.update(momentum=float(g["momentum"]), dampening=float(g["dampening"]),
                   nesterov=bool(g["nesterov"]))
    else:
        out.update(betas=[float(b) for b in g["betas"]], eps=float(g["eps"]))
    return out


def lr_schedule_phases(scheduler):
    """dag-format.md's `lr_schedule` (v3) from a torch.optim.lr_scheduler:
    LinearLR, CosineAnnealingLR, StepLR, ExponentialLR, or SequentialLR of
    those; a list of phase dicts is returned as it is."""
    if scheduler is None or isinstance(scheduler, list):
        return scheduler
    sched = torch.optim.lr_scheduler

    def one(s, length):
        """The phases of scheduler s running for `length` steps (None: to
        the end)."""
        if isinstance(s, sched.LinearLR):
            a, b, n = float(s.start_factor), float(s.end_factor), int(s.total_iters)
            if length is None or length == n:
                return [{"kind": "linear", "start_factor": a, "end_factor": b, "steps": n}]
            if length < n:  # cut short: the same line to where it stops
                return [{"kind": "linear", "start_factor": a,
                         "end_factor": a + (b - a) * length / n, "steps": length}]
            return [{"kind": "linear", "start_factor": a, "end_factor": b, "steps": n},
                    {"kind": "constant", "factor": b, "steps": length - n}]
        if isinstance(s, sched.CosineAnnealingLR):
            n = int(s.T_max)
            if length is not None and length != n:
                raise SystemExit("error: export_torch: a CosineAnnealingLR inside "
                                 f"SequentialLR must last its T_max ({n} steps), not {length}")
            base = float(s.base_lrs[0])
            return [{"kind": "cosine", "steps": n, "min_factor": float(s.eta_min) / base}]
        if isinstance(s, sched.StepLR):
            out = {"kind": "step", "step_size": int(s.step_size), "gamma": float(s.gamma)}
        elif isinstance(s, sched.ExponentialLR):
            out = {"kind": "exponential", "gamma": float(s.gamma)}
        else:
            raise SystemExit(f"error: export_torch: scheduler {type(s).__name__} is not "
                             "supported (LinearLR, CosineAnnealingLR, StepLR, ExponentialLR, "
                             "SequentialLR of those)")
        if length is not None:
            out["steps"] = length
        return [out]

    if isinstance(scheduler, sched.SequentialLR):
        inner, marks = scheduler._schedulers, list(scheduler._milestones)
        bounds = [0] + marks
        phases = []
        for i, s in enumerate(inner):
            length = bounds[i + 1] - bounds[i] if i + 1 < len(bounds) else None
            phases += one(s, length)
        return phases
    return one(scheduler, None)


def dag_id(name):
    """A parameter's or buffer's DAG id (and input file name): its PyTorch
    name where that is a valid id, else with a leading '_' (nn.Sequential's
    '0.weight' is '_0.weight')."""
    import re
    name = re.sub(r"[^A-Za-z0-9_.:-]", "_", name)
    return name if re.match(r"[A-Za-z_]", name) else "_" + name


# Buffers the step reads but does not write (and tensors a module holds as
# plain attributes) up to this many elements become `constant` nodes, larger
# ones inputs (save_inputs writes them). A tensor made inside forward()
# (a get_attr constant of the trace) larger than this is refused.
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


def export_step(model, *args, **kwargs):
    """The DAG of one training step of `model` on `inputs` (a tuple): the
    loss is loss_fn(model(*inputs), *targets), and `targets` (a tuple) are
    inputs of the step too (`target0`, ...). With `optimizer`, the step also
    updates the parameters (version 2). Buffers the step updates (batch
    norm's running statistics) are inputs carried as `state` (version 2);
    other buffers and tensors held as module attributes become `constant`
    nodes, or inputs above MAX_CONSTANT elements (save_inputs writes them).
    The step is traced with fake tensors (nothing computed), or for real
    where an operator has no fake kernel; fake=False forces the real trace.

    Version 3: `lr_schedule` (a torch.optim.lr_scheduler or a list of
    phases), `lr_input` (the learning rate is the input `lr`, set every
    step), `clip_grad_norm` (max_norm, or a dict with norm_type and output;
    a number reports the total norm as output `grad_norm`), `accumulate`
    (micro-steps per update), `global_loss` (output `global_loss`: the loss
    averaged over the ranks, for logging) and `input_dtypes` ({"input0":
    "u16"}: an integer input read in another dtype than it was traced with,
    cast on arrival).

    `autocast` ("bf16" or "f16"): the model and the loss run under
    torch.autocast for the device the inputs are on, as PyTorch's
    mixed-precision recipe runs them; the DAG holds the casts autocast
    inserts (version 3's accumulation rule makes its low-precision
    contractions accumulate in f32 as PyTorch's do). Parameters, gradients
    and the optimizer stay f32: the parameters are the master weights. The
    casts are those of the inputs' device (CPU and CUDA autocast cast
    different operators): export from CUDA tensors for a GPU job."""
    with CapturedTensors(model):
        return _export_step(model, *args, **kwargs)


def _autocast(precision, inputs):
    """A context for the model's forward: torch.autocast in `precision` on
    the device of the first tensor input, or nothing."""
    import contextlib
    if precision is None:
        return contextlib.nullcontext
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16}
    if precision not in dtypes:
        raise SystemExit(f"error: export_torch: autocast must be bf16 or f16, got "
                         f"'{precision}'")
    device = next((x.device.type for x in inputs if isinstance(x, torch.Tensor)), "cpu")
    if device == "cpu" and precision == "f16":
        raise SystemExit("error: export_torch: autocast f16 needs CUDA inputs (CPU "
                         "autocast casts to bf16 only)")
    return lambda: torch.autocast(device, dtype=dtypes[precision])


def _export_step(model, inputs, loss_fn, world_size=1, bucket_cap_mb=25,
                 first_bucket_cap_mb=1, order="ready", optimizer=None, targets=(),
                 lr_schedule=None, lr_input=False, clip_grad_norm=None,
                 accumulate=1, global_loss=False, input_dtypes=None, fake=True,
                 autocast=None):
    """export_step, with its tensor attributes made buffers."""
    targets = tuple(targets)
    mixed = _autocast(autocast, inputs)
    named = list(model.named_parameters())
    # Every name of each parameter and buffer (tied weights, a mask shared
    # by every block have several): all get its one placeholder.
    aliases = {}
    for path, mod in model.named_modules(remove_duplicate=False):
        for pname, p in list(mod._parameters.items()) + list(mod._buffers.items()):
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
        for (_, b), v in zip(buffers, bs):
            for alias in aliases[id(b)]:
                values[alias] = v
        with mixed():
            out = functional_call(model, values, tuple(xs))
            loss = loss_fn(out, *ts)
        # (The backward runs outside autocast, as loss.backward() does in
        # the recipe: it follows the dtypes the forward saved.)
        return (loss, *torch.autograd.grad(loss, ps))

    args = (*inputs, *targets, *params, *fixed, *bufs)
    with _ModulePaths(model), _RnnWeights(model), _LossDecompositions():
        gm, _ = trace(step, args, fake)
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
    input_dtypes = dict(input_dtypes or {})

    def data(nid, n):
        leaf("input", nid, n)
        want = input_dtypes.pop(nid, None)
        if want is not None and want != ex.nodes[-1]["dtype"]:
            traced = ex.nodes[-1]["dtype"]
            ex.nodes[-1]["dtype"] = want
            ex.ids[n] = ex.add("cast", [nid], dtype=traced)
    for i, n in enumerate(groups["input"]):
        data(f"input{i}", n)
    for i, n in enumerate(groups["target"]):
        data(f"target{i}", n)
    if input_dtypes:
        raise SystemExit("error: export_torch: input_dtypes names no input: " +
                         ", ".join(sorted(input_dtypes)))
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
        elif bufs[groups["buffer"].index(n)].numel() <= MAX_CONSTANT:
            node = next(x for x in ex.nodes if x["id"] == nid)
            value = bufs[groups["buffer"].index(n)]
            node.update(op="constant", value=value.tolist())
            node.pop("shape") if not value.shape else None
        # (else: an input, which save_inputs writes like a parameter)
    for node in ex.nodes:  # args: [] reads better omitted for leaves
        if not node.get("args"):
            node.pop("args", None)
    dp = {"bucket_cap_mb": bucket_cap_mb, "first_bucket_cap_mb": first_bucket_cap_mb,
          "order": order}
    settings = optimizer_settings(optimizer)
    v3 = bool(autocast or lr_schedule or lr_input or clip_grad_norm or accumulate != 1 or global_loss
              or any(n.get("dtype") in ("u8", "u16", "u32") for n in ex.nodes))
    if settings is None and (lr_schedule or lr_input or clip_grad_norm):
        raise SystemExit("error: export_torch: a learning-rate schedule, an lr input or "
                         "clipping needs an optimizer")
    if settings is not None:
        settings = dict(settings)  # (the caller's dict stays as it was)
        phases = lr_schedule_phases(lr_schedule)
        if phases:
            settings["lr_schedule"] = phases
        if lr_input:
            settings["lr"] = {"input": "lr"}
            ex.nodes.append({"id": "lr", "op": "input", "shape": [], "dtype": "f64"})
        if clip_grad_norm is not None:
            clip = clip_grad_norm if isinstance(clip_grad_norm, dict) else \
                {"max_norm": float(clip_grad_norm), "output": "grad_norm"}
            settings["clip_grad_norm"] = clip
        dp["optimizer"] = settings
    if accumulate != 1:
        dp["accumulate"] = int(accumulate)
    if global_loss:
        ex.nodes.append({"id": "global_loss", "op": "allreduce", "args": [outputs["loss"]],
                         "reduce": "mean", "tag": "global_loss"})
        outputs["global_loss"] = "global_loss"
    program = {"ranks": "all", "nodes": ex.nodes, "outputs": outputs}
    if state:
        program["state"] = state
    v2 = settings is not None or state or any(
        node["op"] in ("take", "scatter_add", "conv", "pool") for node in ex.nodes)
    return {"format": "rankc-dag", "version": 3 if v3 else 2 if v2 else 1,
            "world_size": world_size, "data_parallel": dp, "programs": [program]}
