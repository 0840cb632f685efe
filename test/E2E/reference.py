#!/usr/bin/env python3
"""A NumPy interpreter of rankc-dag documents: the reference that the
end-to-end tests compare compiled programs against.

    evaluate(doc, inputs) -> {rank: {output name: array}}

`inputs[rank][id]` holds each input and param. Every rank's program runs
as a dataflow: a node runs when its arguments exist; a recv when its
matching send ran; an allreduce when every rank's input exists. bf16 values
are kept as float32 numbers rounded to bf16 after every op."""
import math


import numpy as np

np.seterr(all="ignore")  # NaN and inf are values like any other here

DT = {"bool": np.bool_, "i8": np.int8, "i32": np.int32, "i64": np.int64,
      "f16": np.float16, "bf16": np.float32, "f32": np.float32, "f64": np.float64,
      "u8": np.uint8, "u16": np.uint16, "u32": np.uint32}
INTS = ("i8", "i32", "i64", "u8", "u16", "u32")
FLOATS = ("f16", "bf16", "f32", "f64")


class RemByZero(ValueError):
    """An integer `rem` by 0: a run-time error of the program (dag-format.md)."""


def round_bf16(a):
    a = np.asarray(a, dtype=np.float32)
    bits = a.view(np.uint32).astype(np.uint64)
    s16, one = np.uint64(16), np.uint64(1)  # 0-d values are scalars: no int mixing
    rounded = ((bits + np.uint64(0x7FFF) + ((bits >> s16) & one)) >> s16) << s16
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(a), a, out)


def to_bf16_bits(a):
    return (round_bf16(a).view(np.uint32) >> 16).astype(np.uint16)


def from_bf16_bits(u):
    return (u.astype(np.uint32) << 16).view(np.float32)


def fix(value, dtype):
    """Casts a result to the node's dtype (bf16: rounded float32)."""
    if dtype == "bf16":
        return round_bf16(value)
    return np.asarray(value).astype(DT[dtype])


def wide(x, dtype):
    return x.astype(np.float32) if dtype in ("f16", "bf16") else x


UNARY = {
    "neg": np.negative, "abs": np.abs, "exp": np.exp, "log": np.log,
    "sqrt": np.sqrt, "rsqrt": lambda x: 1 / np.sqrt(x), "sin": np.sin,
    "cos": np.cos, "tanh": np.tanh,
    "erf": np.vectorize(math.erf, otypes=[np.float64]),
    "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "relu": lambda x: np.maximum(x, 0), "floor": np.floor, "ceil": np.ceil,
    "not": np.logical_not,
}
BINARY = {
    "add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
    "pow": np.power, "maximum": np.maximum, "minimum": np.minimum,
    "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
    "gt": np.greater, "ge": np.greater_equal, "and": np.logical_and,
    "or": np.logical_or, "rem": np.remainder,
}
REDUCE = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
          "mean": np.mean}


def dtype_of(node, args, types):
    op = node["op"]
    if op == "step":
        return node.get("dtype", "i64")
    if "dtype" in node and op not in ("reshape", "broadcast_to"):
        return node["dtype"]
    if op in ("eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not"):
        return "bool"
    if op == "where":
        return types[args[1]]
    t = types[args[0]]
    if op in ("sum", "prod") and t in ("bool", "i8", "i32", "u8", "u16", "u32"):
        return "i64"
    if op == "pool" and node["reduce"] == "argmax":
        return "i64"
    return t


def conv(x, w, node):
    """dag-format.md's conv, by its definition: dilate and pad x, then for
    each kernel offset add the strided window times the kernel's element."""
    k = x.ndim - 2
    stride = node.get("stride", [1] * k)
    dil = node.get("dilation", [1] * k)
    idil = node.get("input_dilation", [1] * k)
    pad = node.get("padding", [[0, 0]] * k)
    g = node.get("groups", 1)
    n, c = x.shape[:2]
    o = w.shape[0]
    size = [((d - 1) * s + 1 if d else 0) + lo + hi
            for d, s, (lo, hi) in zip(x.shape[2:], idil, pad)]
    xp = np.zeros((n, c, *size), dtype=np.float64)
    xp[(slice(None), slice(None)) + tuple(
        slice(lo, lo + (d - 1) * s + 1, s) for d, s, (lo, _) in zip(x.shape[2:], idil, pad))] = x
    out_sp = [(p - (kk - 1) * dl - 1) // st + 1 for p, kk, dl, st in zip(size, w.shape[2:], dil, stride)]
    out = np.zeros((n, o, *out_sp), dtype=np.float64)
    cg, og = c // g, o // g
    for off in np.ndindex(*w.shape[2:]):
        win = xp[(slice(None), slice(None)) + tuple(
            slice(kk * dl, kk * dl + (e - 1) * st + 1, st) if e > 0 else slice(0, 0)
            for kk, dl, e, st in zip(off, dil, out_sp, stride))]
        for gi in range(g):
            xs = win[:, gi * cg:(gi + 1) * cg]
            ws = w[(slice(gi * og, (gi + 1) * og), slice(None)) + off]
            out[:, gi * og:(gi + 1) * og] += np.einsum("nc...,oc->no...", xs, ws)
    return out


def pool(x, node):
    """dag-format.md's pool: windows over the spatial axes; max and argmax
    see only x's elements (NaN wins, the first maximum wins), sum and mean
    count padding as zero (mean divides by the window's size)."""
    k = x.ndim - 2
    win = node["window"]
    stride = node.get("stride", win)
    pad = node.get("padding", [[0, 0]] * k)
    red = node["reduce"]
    sp = x.shape[2:]
    out_sp = [(d + lo + hi - wn) // st + 1 for d, (lo, hi), wn, st in zip(sp, pad, win, stride)]
    n, c = x.shape[:2]
    val = np.zeros((n, c, *out_sp), dtype=np.float64 if red in ("sum", "mean") and x.dtype.kind == "f" else x.dtype)
    idx = np.full((n, c, *out_sp), -1, dtype=np.int64)
    for e in np.ndindex(*out_sp):
        best = idx_best = None
        total = 0
        for off in np.ndindex(*win):
            at = [ei * st + o - lo for ei, st, o, (lo, _) in zip(e, stride, off, pad)]
            if not all(0 <= a < d for a, d in zip(at, sp)):
                continue
            v = x[(slice(None), slice(None)) + tuple(at)]
            flat = int(np.ravel_multi_index(at, sp))
            if red in ("sum", "mean"):
                total = total + v.astype(val.dtype)
                continue
            if best is None:
                best, idx_best = v.copy(), np.full(v.shape, flat, dtype=np.int64)
                continue
            if x.dtype.kind == "f":
                take = (v > best) | (np.isnan(v) & ~np.isnan(best))
            else:
                take = v > best
            best = np.where(take, v, best)
            idx_best = np.where(take, flat, idx_best)
        sl = (slice(None), slice(None)) + e
        if red in ("sum", "mean"):
            val[sl] = total / (np.prod(win) if red == "mean" else 1)
        else:
            val[sl], idx[sl] = best, idx_best
    return idx if red == "argmax" else val


def compute(node, vals, types, dtype, step=0):
    op = node["op"]
    if op == "step":
        return fix(np.array(step), dtype)
    a = [vals[x] for x in node.get("args", [])]
    at = [types[x] for x in node.get("args", [])]
    if op == "constant":
        v = np.array(node["value"], dtype=np.float64 if dtype in ("f16", "bf16", "f32", "f64") else None)
        if "shape" in node:
            v = np.broadcast_to(v, node["shape"])
        return fix(v, dtype)
    if op == "iota":
        shape, axis = node["shape"], node["axis"] % max(len(node["shape"]), 1)
        idx = np.arange(shape[axis]).reshape([-1 if i == axis else 1 for i in range(len(shape))])
        return fix(np.broadcast_to(idx, shape), dtype)
    if op == "cast":
        x = a[0]
        if dtype == "bool":
            return x != 0
        if dtype in INTS and at[0] in FLOATS:
            return np.trunc(x).astype(DT[dtype])
        return fix(x, dtype)
    if op in UNARY:
        t = at[0]
        if op in ("floor", "ceil") and t not in FLOATS:
            return a[0]
        if op in ("abs", "relu") and t in ("bool", "u8", "u16", "u32"):
            return a[0]
        return fix(UNARY[op](wide(a[0], t)), dtype)
    if op in BINARY:
        t = at[0]
        x, y = a
        if t == "bool" and op in ("add", "maximum"):
            return np.logical_or(x, y)
        if t == "bool" and op in ("mul", "minimum"):
            return np.logical_and(x, y)
        if op == "rem" and t in INTS and np.any(np.asarray(y) == 0):
            raise RemByZero(f"node '{node['id']}': integer remainder by zero")
        r = BINARY[op](wide(x, t), wide(y, t))
        return r if dtype == "bool" else fix(r, dtype)
    if op == "where":
        return fix(np.where(a[0], a[1], a[2]), dtype)
    if op == "einsum":
        return fix(np.einsum(node["spec"], *[wide(x, t) for x, t in zip(a, at)]), dtype)
    if op == "matmul":
        return fix(np.matmul(wide(a[0], at[0]), wide(a[1], at[1])), dtype)
    if op in REDUCE:
        x, t = a[0], at[0]
        axes = tuple(ax % x.ndim for ax in node["axes"]) if "axes" in node else None
        if t in ("f16", "bf16"):
            x = x.astype(np.float32)
        return fix(REDUCE[op](x, axis=axes, keepdims=node.get("keepdims", False)), dtype)
    if op == "reshape":
        return a[0].reshape(node["shape"])
    if op == "transpose":
        return np.transpose(a[0], node["perm"])
    if op == "broadcast_to":
        return np.broadcast_to(a[0], node["shape"]).copy()
    if op == "slice":
        step = node.get("step", [1] * a[0].ndim)
        return a[0][tuple(slice(b, e, s) for b, e, s in zip(node["begin"], node["end"], step))]
    if op == "concat":
        return np.concatenate(a, axis=node["axis"])
    if op == "take":
        return np.take(a[0], a[1], axis=node["axis"])
    if op == "conv":
        return fix(conv(wide(a[0], at[0]).astype(np.float64), wide(a[1], at[1]).astype(np.float64),
                        node), dtype)
    if op == "pool":
        x = wide(a[0], at[0])
        r = pool(x, node)
        return r if node["reduce"] == "argmax" else fix(r, dtype)
    if op == "scatter_add":
        axis = node["axis"] % a[0].ndim
        r = wide(a[0], at[0]).copy()
        np.add.at(r, (slice(None),) * axis + (a[1],), wide(a[2], at[2]))
        return fix(r, dtype)
    raise ValueError(f"reference: unknown op {op}")


def peer(p, rank, ws):
    """The peer's rank, or None past a non-periodic edge of a grid."""
    if isinstance(p, dict) and "grid" in p:
        grid, shift = p["grid"], p["shift"]
        periodic = p.get("periodic", [False] * len(grid))
        coords = list(np.unravel_index(rank, grid))
        for i, (c, s, n) in enumerate(zip(coords, shift, grid)):
            c += s
            if not 0 <= c < n:
                if not periodic[i]:
                    return None
                c %= n
            coords[i] = c
        return int(np.ravel_multi_index(coords, grid))
    return (rank + p["offset"]) % ws if isinstance(p, dict) else p


def evaluate(doc, inputs, step=0):
    ws = doc["world_size"]
    prog_of = {}
    for p in doc["programs"]:
        for r in (range(ws) if p["ranks"] == "all" else p["ranks"]):
            prog_of[r] = p
    vals = {r: {} for r in range(ws)}
    types = {r: {} for r in range(ws)}
    sent = {}  # (src, dst, tag) -> value
    pending_allreduce = {}  # tag -> {rank: value}
    done = {r: set() for r in range(ws)}
    progress = True
    while progress:
        progress = False
        for r in range(ws):
            for node in prog_of[r]["nodes"]:
                nid, op = node["id"], node["op"]
                if nid in done[r]:
                    continue
                args = node.get("args", [])
                if any(x not in vals[r] for x in args):
                    continue
                if op in ("input", "param"):
                    vals[r][nid] = inputs[r][nid]
                    types[r][nid] = node["dtype"]
                elif op == "send":
                    dst = peer(node["dest"], r, ws)
                    if dst is not None:
                        sent[(r, dst, str(node["tag"]))] = vals[r][args[0]]
                elif op == "recv":
                    src = peer(node["src"], r, ws)
                    types[r][nid] = node["dtype"]
                    if src is None:  # no peer: the fill, everywhere
                        vals[r][nid] = fix(np.full(node["shape"], node["fill"]), node["dtype"])
                    else:
                        key = (src, r, str(node["tag"]))
                        if key not in sent:
                            continue
                        vals[r][nid] = sent[key]
                elif op == "allreduce":
                    tag = str(node["tag"])
                    got = pending_allreduce.setdefault(tag, {})
                    got[r] = (vals[r][args[0]], types[r][args[0]])
                    if len(got) < ws:
                        done[r].add(nid + "#started")
                        continue
                    if nid in done[r]:
                        continue
                    # Floats in f64; integers in their own dtype (wrapping).
                    xs = [v if t in ("bool",) + INTS else wide(v, t).astype(np.float64)
                          for v, t in (got[k] for k in range(ws))]
                    t = got[r][1]
                    red = node["reduce"]
                    if t == "bool":
                        res = np.logical_or.reduce(xs) if red == "max" else np.logical_and.reduce(xs)
                    elif t in INTS and red in ("sum", "prod"):
                        res = (np.sum if red == "sum" else np.prod)(np.stack(xs), axis=0, dtype=DT[t])
                    elif red in ("sum", "mean"):
                        res = np.sum(xs, axis=0)
                        if red == "mean":
                            res = res / ws
                    elif red == "prod":
                        res = np.prod(xs, axis=0)
                    elif red == "max":
                        res = np.max(xs, axis=0)
                    else:
                        res = np.min(xs, axis=0)
                    for k in range(ws):
                        for n2 in prog_of[k]["nodes"]:
                            if n2["op"] == "allreduce" and str(n2["tag"]) == tag:
                                vals[k][n2["id"]] = fix(res, t)
                                types[k][n2["id"]] = t
                                done[k].add(n2["id"])
                    progress = True
                    continue
                else:
                    t = dtype_of(node, args, types[r])
                    vals[r][nid] = compute(node, vals[r], types[r], t, step)
                    types[r][nid] = t
                done[r].add(nid)
                progress = True
    results = {}
    for r in range(ws):
        results[r] = {}
        for name, target in prog_of[r].get("outputs", {}).items():
            nid = target["node"] if isinstance(target, dict) else target
            results[r][name] = (vals[r][nid], types[r][nid])
    # Data-parallel training: every gradient (but ignored ones) becomes its
    # mean over all ranks.
    dp = doc.get("data_parallel")
    if dp is not None:
        ignore = set(dp.get("ignore", []))
        for name, target in prog_of[0].get("outputs", {}).items():
            if isinstance(target, dict) and "grad_of" in target and target["grad_of"] not in ignore:
                t = results[0][name][1]
                mean = sum(wide(results[r][name][0], t).astype(np.float64) for r in range(ws)) / ws
                for r in range(ws):
                    results[r][name] = (fix(mean, t), t)
    return results


def lr_factor(phases, t):
    """dag-format.md's lr_schedule factor of optimizer step t (from 0)."""
    start = 0
    for i, ph in enumerate(phases):
        steps = ph.get("steps")
        last = i == len(phases) - 1
        if not last and t >= start + steps:
            start += steps
            continue
        u = t - start
        if last and steps is not None:
            u = min(u, steps)
        kind = ph["kind"]
        if kind == "constant":
            return ph.get("factor", 1.0)
        if kind == "linear":
            a, b = ph.get("start_factor", 1.0 / 3), ph.get("end_factor", 1.0)
            return a + (b - a) * min(u, steps) / steps
        if kind == "cosine":
            m = ph.get("min_factor", 0.0)
            return m + (1 - m) * (1 + math.cos(math.pi * min(u, steps) / steps)) / 2
        if kind == "step":
            return ph.get("gamma", 0.1) ** (u // ph["step_size"])
        return ph["gamma"] ** u


def clip_grads(grads, max_norm, inf):
    """clip_grad_norm_ over the list of gradients: (clipped, total norm)."""
    if inf:
        total = max((float(np.max(np.abs(g.astype(np.float64)))) if g.size else 0.0
                     for g in grads), default=0.0)
        if any(np.isnan(g).any() for g in grads):
            total = float("nan")
    else:
        total = math.sqrt(sum(float(np.sum(np.square(g.astype(np.float64)))) for g in grads))
    coef = np.minimum(max_norm / (total + 1e-6), 1.0)
    return [(g * g.dtype.type(coef)).astype(g.dtype) for g in grads], total


def optimizer_step(opt, p, g, st, t, lr=None):
    """torch.optim's single-tensor update of parameter p (float32/64) with
    gradient g; st is the parameter's state dict, t the step number (1...),
    lr the step's learning rate (the optimizer's lr if None)."""
    dt = p.dtype.type
    c = lambda x: dt(x)
    kind, wd = opt["kind"], opt.get("weight_decay", 0.01 if opt["kind"] == "adamw" else 0)
    lr = opt["lr"] if lr is None else lr
    if kind == "sgd":
        m, damp, nest = opt.get("momentum", 0), opt.get("dampening", 0), opt.get("nesterov", False)
        if wd:
            g = g + c(wd) * p
        if m:
            buf = g.copy() if t == 1 else st["momentum_buffer"] * c(m) + c(1 - damp) * g
            st["momentum_buffer"] = buf
            g = g + c(m) * buf if nest else buf
        return p + c(-lr) * g
    b1, b2 = opt.get("betas", [0.9, 0.999])
    eps = opt.get("eps", 1e-8)
    if kind == "adamw":
        p = p * c(1 - lr * wd)
    elif wd:
        g = g + c(wd) * p
    m = st.get("exp_avg", np.zeros_like(p)) * c(b1) + c(1 - b1) * g
    v = st.get("exp_avg_sq", np.zeros_like(p)) * c(b2) + c(1 - b2) * g * g
    st["exp_avg"], st["exp_avg_sq"] = m, v
    step_size = lr / (1 - b1 ** t)
    bc2_sqrt = math.sqrt(1 - b2 ** t)
    denom = np.sqrt(v) / c(bc2_sqrt) + c(eps)
    return p + (c(-step_size) * m) / denom


def evaluate_steps(doc, inputs, steps):
    """`steps` steps of the document: `state` carried, parameters updated by
    the optimizer (and written as outputs named after them), with v3's
    learning-rate input or schedule, clipping and accumulation, as
    dag-format.md's "Steps and state" and "Data-parallel training" say.
    Returns the last step's outputs."""
    ws = doc["world_size"]
    prog_of = {}
    for p in doc["programs"]:
        for r in (range(ws) if p["ranks"] == "all" else p["ranks"]):
            prog_of[r] = p
    inputs = {r: dict(v) for r, v in inputs.items()}
    dp = doc.get("data_parallel") or {}
    opt = dp.get("optimizer")
    k_acc = dp.get("accumulate", 1)
    opt_state = {r: {} for r in range(ws)}
    sums = {r: {} for r in range(ws)}   # accumulated gradients by output
    last = {r: {} for r in range(ws)}   # the last update's gradient outputs
    updates = 0
    # Each rank's own gradients (averaged below, after accumulating).
    local = {k: v for k, v in doc.items() if k != "data_parallel"}
    ignore = set(dp.get("ignore", []))
    for k in range(steps):
        results = evaluate(local if dp else doc, inputs, step=k)
        update = (k + 1) % k_acc == 0
        grad_outs = {r: [(name, t["grad_of"]) for name, t in prog_of[r].get("outputs", {}).items()
                         if isinstance(t, dict) and "grad_of" in t] for r in range(ws)}
        for r in range(ws):
            for name, _ in grad_outs[r]:
                g = np.asarray(results[r][name][0])
                # Summed in the gradient's dtype, as the rank accumulates it.
                if update:
                    total = sums[r].pop(name, 0) + g
                    last[r][name] = (total / g.dtype.type(k_acc)).astype(g.dtype) \
                        if k_acc > 1 else total
                else:
                    sums[r][name] = sums[r].get(name, 0) + g
        if update and dp:
            for name, w in grad_outs[0]:
                if w in ignore:
                    continue
                t = results[0][name][1]
                mean = sum(wide(last[r][name], t).astype(np.float64) for r in range(ws)) / ws
                for r in range(ws):
                    last[r][name] = fix(mean, t)
        for r in range(ws):
            for name, _ in grad_outs[r]:
                if name in last[r]:
                    results[r][name] = (last[r][name], results[r][name][1])
        if update:
            updates += 1
        for r in range(ws):
            prog = prog_of[r]
            if opt and update and grad_outs[r]:
                firsts, seen = [], set()
                for name, w in grad_outs[r]:
                    if w not in seen:
                        seen.add(w)
                        firsts.append((name, w))
                lr = opt["lr"]
                if isinstance(lr, dict):
                    lr = float(np.asarray(inputs[r][lr["input"]]))
                elif "lr_schedule" in opt:
                    lr = lr * lr_factor(opt["lr_schedule"], updates - 1)
                grads = [np.asarray(last[r][name]).astype(inputs[r][w].dtype) for name, w in firsts]
                clip = opt.get("clip_grad_norm")
                if clip:
                    grads, total = clip_grads(grads, clip["max_norm"], clip.get("norm_type") == "inf")
                    for (name, _), g in zip(firsts, grads):
                        last[r][name] = g
                        results[r][name] = (g, results[r][name][1])
                    if "output" in clip:
                        last[r][clip["output"]] = np.float32(total)
                for (name, w), g in zip(firsts, grads):
                    st = opt_state[r].setdefault(w, {})
                    inputs[r][w] = optimizer_step(opt, inputs[r][w], g, st, updates, lr)
            if opt and opt.get("clip_grad_norm", {}).get("output") and grad_outs[r]:
                out = opt["clip_grad_norm"]["output"]
                results[r][out] = (last[r].get(out, np.float32(0)), "f32")
            for in_id, out_name in prog.get("state", {}).items():
                inputs[r][in_id] = np.asarray(results[r][out_name][0])
        if opt:
            for r in range(ws):
                for w in opt_state[r]:
                    dt = next(n["dtype"] for n in prog_of[r]["nodes"] if n["id"] == w)
                    results[r][w] = (inputs[r][w], dt)
    return results
