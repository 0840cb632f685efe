"""Losses and activations, each with its backward: log-softmax, NLL,
MSE, sign, sigmoid, SiLU, softplus, leaky ReLU."""
import math  # noqa: F401

import torch  # noqa: F401

from .builder import INF_SAFE, Unsupported, _meta  # noqa: F401
from .registry import aten


# ---- losses --------------------------------------------------------------
@aten("_log_softmax.default", opmath=True)
def _log_softmax_default(self, n, a, shape, dtype):
    x, d = self.ids[a[0]], a[1]
    mx = self.add("max", [x], axes=[d], keepdims=True)
    xc = self.add("sub", [x, mx])
    lse = self.add("log", [self.add("sum", [self.add("exp", [xc])], axes=[d], keepdims=True)])
    return self.add("sub", [xc, lse])

@aten("_log_softmax_backward_data.default", opmath=True)
def _log_softmax_backward_data_default(self, n, a, shape, dtype):
    # grad - exp(y) * sum(grad)
    g, y, d = self.ids[a[0]], self.ids[a[1]], a[2]
    if g in self.onehot_rows and d in (1, -1):
        # The gradient of an NLL loss: one non-zero a row, so its sum is that
        # value, exactly; made per row, not read from an [N, C] tensor (on the
        # GPU the one-hot then lives only in the kernel that reads it).
        keep, G = self.onehot_rows[g]
        s = self.add("neg", [self.add("mul", [keep, G])])
    else:
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

@aten("nll_loss_forward.default", opmath=True)
def nll_loss_forward_default(self, n, a, shapes, dtypes):
    x, target, weight, reduction, ignore = a[:5]
    if weight is not None:
        raise Unsupported("aten.nll_loss_forward with class weights")
    xs, dt = self.shape_of(x), self.dtype_of(x)
    if len(xs) > 2:
        raise Unsupported("aten.nll_loss_forward over spatial dimensions")
    X, T = self.ids[x], self.ids[target]
    tdt = self.dtype_of(target)
    hot = _onehot(self, T, xs[-1], xs, tdt, ignore)
    picked = self.add("sum", [self.add("where", [hot, X, self.number(0.0, dt)])],
                      axes=[len(xs) - 1])
    keep = self.add("cast", [self.add("ne", [T, self.number(ignore, tdt)])], dtype=dt)
    losses = self.add("neg", [self.add("mul", [picked, keep])])
    total = self.add("sum", [keep])
    if reduction == 0:
        return [losses, total]
    s = self.add("sum", [losses])
    return [self.add("div", [s, total]) if reduction == 1 else s, total]

@aten("nll_loss_backward.default", opmath=True)
def nll_loss_backward_default(self, n, a, shape, dtype):
    g, x, target, weight, reduction, ignore, total = a[:7]
    if weight is not None:
        raise Unsupported("aten.nll_loss_backward with class weights")
    xs = self.shape_of(x)
    X, T = self.ids[x], self.ids[target]
    tdt = self.dtype_of(target)
    hot = self.add("cast", [_onehot(self, T, xs[-1], xs, tdt, ignore)], dtype=dtype)
    keep = self.add("cast", [self.add("ne", [T, self.number(ignore, tdt)])], dtype=dtype)
    G = self.ids[g]
    if reduction == 1:
        G = self.add("div", [G, self.ids[total]])
    if len(xs) == 2:
        keep = self.reshape(keep, [xs[0], 1])
        if reduction == 0:
            G = self.reshape(G, [xs[0], 1])
    r = self.add("neg", [self.add("mul", [self.add("mul", [hot, keep]), G])])
    if len(xs) == 2:
        self.onehot_rows[r] = (keep, G)
    return r

@aten("mse_loss.default", opmath=True)
def mse_loss_default(self, n, a, shape, dtype):
    reduction = a[2] if len(a) > 2 else 1
    d = self.add("sub", [self.ids[a[0]], self.ids[a[1]]])
    sq = self.add("mul", [d, d])
    return sq if reduction == 0 else self.add("mean" if reduction == 1 else "sum", [sq])

@aten("mse_loss_backward.default", opmath=True)
def mse_loss_backward_default(self, n, a, shape, dtype):
    g, x, t, reduction = self.ids[a[0]], self.ids[a[1]], self.ids[a[2]], a[3]
    d = self.add("sub", [x, t])
    scale = 2.0 / (math.prod(shape) if reduction == 1 else 1)
    return self.add("mul", [self.add("mul", [d, self.number(scale, dtype)]), g])

@aten("sgn.default")
def sgn_default(self, n, a, shape, dtype):
    x = self.ids[a[0]]
    zero = self.number(0, dtype)
    pos = self.add("cast", [self.add("gt", [x, zero])], dtype=dtype)
    neg = self.add("cast", [self.add("lt", [x, zero])], dtype=dtype)
    return self.add("sub", [pos, neg])

aten("sign.default")(sgn_default)

# ---- activations ---------------------------------------------------------
@aten("sigmoid_backward.default", opmath=True)
def sigmoid_backward_default(self, n, a, shape, dtype):
    g, y = self.ids[a[0]], self.ids[a[1]]
    return self.add("mul", [g, self.add("mul", [y, self.add("sub", [self.number(1.0, dtype), y])])])

@aten("silu.default", opmath=True)
def silu_default(self, n, a, shape, dtype):
    x = self.ids[a[0]]
    return self.add("mul", [x, self.add("sigmoid", [x])])

@aten("silu_backward.default", opmath=True)
def silu_backward_default(self, n, a, shape, dtype):
    g, x = self.ids[a[0]], self.ids[a[1]]
    s = self.add("sigmoid", [x])
    one = self.number(1.0, dtype)
    inner = self.add("add", [one, self.add("mul", [x, self.add("sub", [one, s])])])
    return self.add("mul", [g, self.add("mul", [s, inner])])

def _softplus_args(self, a, i):
    beta = a[i] if len(a) > i else 1
    threshold = a[i + 1] if len(a) > i + 1 else 20
    return float(beta), float(threshold)

@aten("softplus.default", opmath=True)
def softplus_default(self, n, a, shape, dtype):
    x = self.ids[a[0]]
    beta, thr = _softplus_args(self, a, 1)
    bx = self.add("mul", [x, self.number(beta, dtype)])
    sp = self.add("div", [self.add("log", [self.add("add", [self.number(1.0, dtype),
                                                             self.add("exp", [bx])])]),
                          self.number(beta, dtype)])
    return self.add("where", [self.add("gt", [bx, self.number(thr, dtype)]), x, sp])

@aten("softplus_backward.default", opmath=True)
def softplus_backward_default(self, n, a, shape, dtype):
    g, x = self.ids[a[0]], self.ids[a[1]]
    beta, thr = _softplus_args(self, a, 2)
    bx = self.add("mul", [x, self.number(beta, dtype)])
    return self.add("where", [self.add("gt", [bx, self.number(thr, dtype)]), g,
                              self.add("mul", [g, self.add("sigmoid", [bx])])])

@aten("leaky_relu.default")
def leaky_relu_default(self, n, a, shape, dtype):
    x = self.ids[a[0]]
    slope = float(a[1]) if len(a) > 1 else 0.01
    return self.add("where", [self.add("gt", [x, self.number(0.0, dtype)]), x,
                              self.add("mul", [x, self.number(slope, dtype)])])

@aten("leaky_relu_backward.default")
def leaky_relu_backward_default(self, n, a, shape, dtype):
    g, x, slope = self.ids[a[0]], self.ids[a[1]], float(a[2])
    return self.add("where", [self.add("gt", [x, self.number(0.0, dtype)]), g,
                              self.add("mul", [g, self.number(slope, dtype)])])
