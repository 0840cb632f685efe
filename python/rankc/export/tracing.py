"""How export_step traces a step: with fake tensors where PyTorch can (no
real computation and no intermediate kept, so that a GPT-2-sized step
exports in seconds and little memory), really where it cannot; and the
tensors a module holds as plain attributes, made buffers while it traces."""
import torch
from torch.fx.experimental.proxy_tensor import make_fx
from torch.fx.passes.shape_prop import ShapeProp

try:
    from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
except ImportError:  # (a PyTorch without fake tensors traces for real)
    FakeTensor = FakeTensorMode = None


class CapturedTensors:
    """A tensor a module holds as a plain attribute (a causal mask made in
    __init__) is read by the step like a buffer: while the step is exported
    it is one (non-persistent, so the model's state_dict is unchanged), so
    that it reaches the DAG as buffers do (a constant, or an input when
    large) and fake tracing sees it as an argument, not a real tensor."""

    def __init__(self, model):
        self.model, self.added = model, []

    def __enter__(self):
        for mod in self.model.modules():
            for name, value in list(vars(mod).items()):
                if isinstance(value, torch.Tensor) and \
                        not isinstance(value, torch.nn.Parameter):
                    del mod.__dict__[name]
                    mod.register_buffer(name, value, persistent=False)
                    self.added.append((mod, name, value))
        return self

    def __exit__(self, *exc):
        for mod, name, value in self.added:
            del mod._buffers[name]
            mod.__dict__[name] = value
        self.added = []


def _fake_shapes(gm, args):
    """tensor_meta of every node from fake values (ShapeProp without real
    computation); the graph's captured constants made fake for the while."""
    mode = FakeTensorMode(allow_fallback_kernels=True)
    fake = [mode.from_tensor(a) if isinstance(a, torch.Tensor) else a for a in args]
    saved = {}
    for n in gm.graph.nodes:
        if n.op == "get_attr" and n.target not in saved:
            saved[n.target] = getattr(gm, n.target)
            setattr(gm, n.target, mode.from_tensor(saved[n.target]))
    try:
        with mode:
            ShapeProp(gm).propagate(*fake)
    finally:
        for target, value in saved.items():
            setattr(gm, target, value)


def trace(step, args, fake=True):
    """make_fx of step(*args), every node with its tensor_meta. Fake
    tensors first; an operator without a fake kernel in this PyTorch (or a
    constant made from fake values) falls back to tracing for real.
    Returns (graph module, "fake" or "real")."""
    # Without oneDNN: PyTorch 2.x's CPU LSTM would otherwise trace as
    # aten.mkldnn_rnn_layer (one opaque op and its backward); without it,
    # as in 1.13, as the matmuls and gates of its reference implementation.
    # (Convolutions trace as aten.convolution either way.)
    with torch.backends.mkldnn.flags(enabled=False):
        return _trace(step, args, fake)


def _trace(step, args, fake):
    if fake and FakeTensorMode is not None:
        try:
            gm = make_fx(step, tracing_mode="fake")(*args)
            constants = [getattr(gm, n.target) for n in gm.graph.nodes if n.op == "get_attr"]
            if not any(isinstance(c, FakeTensor) for c in constants):
                _fake_shapes(gm, args)
                return gm, "fake"
        except Exception:  # noqa: BLE001 (any failure: the real trace decides)
            pass
    gm = make_fx(step)(*args)
    ShapeProp(gm).propagate(*args)
    return gm, "real"
