"""rankc checkpoints from Python, so that PyTorch and rankc hand runs over.

A checkpoint (launch --checkpoint-dir, prog.save) is a folder of
rank<r>/<value>.npy files and a rank<r>/manifest.json that names them with
their sizes and CRC-32s (cli.md, "Real runs"). Values are named as the
compiled program carries them: a parameter by its DAG id
(rankc.export.dag_id of its PyTorch name), the optimizer's state as
"<param>@exp_avg", "<param>@exp_avg_sq", "<param>@momentum_buffer" and
"optimizer@step" (the updates done), accumulated gradients as
"<output>@grad_sum" and "<output>@grad", the total norm of clipping as
"optimizer@grad_norm", a state input by its id.

    read_checkpoint(folder, rank)                -> (manifest, {name: array})
    load_checkpoint(folder, model, optimizer)    rankc -> PyTorch
    save_checkpoint(folder, dag, out, model, optimizer, steps)
                                                 PyTorch -> rankc (--resume)
"""
import json
import os
import zlib

import numpy as np


def read_checkpoint(folder, rank=0):
    """One rank's manifest and values, every file checked against it."""
    d = os.path.join(folder, f"rank{rank}")
    manifest = json.load(open(os.path.join(d, "manifest.json")))
    values = {}
    for v in manifest["values"]:
        path = os.path.join(d, v["file"])
        data = open(path, "rb").read()
        if len(data) != v["bytes"] or zlib.crc32(data) != v["crc32"]:
            raise ValueError(f"checkpoint '{folder}': file 'rank{rank}/{v['file']}' does not "
                             "match its manifest (size or CRC-32)")
        values[v["name"]] = np.load(path)
    return manifest, values


def _kind(optimizer):
    import torch
    for cls, kind in ((torch.optim.AdamW, "adamw"), (torch.optim.Adam, "adam"),
                      (torch.optim.SGD, "sgd")):
        if isinstance(optimizer, cls):
            return kind
    raise ValueError(f"optimizer {type(optimizer).__name__} is not SGD, Adam or AdamW")


def load_checkpoint(folder, model, optimizer=None, rank=0):
    """Fills `model` (parameters, and buffers carried as state) and
    `optimizer` (momentum buffers, Adam's moments and step count) from
    rank `rank` of a rankc checkpoint; returns the steps it holds."""
    import torch
    from rankc.export import dag_id
    manifest, values = read_checkpoint(folder, rank)
    with torch.no_grad():
        for name, p in list(model.named_parameters()) + list(model.named_buffers()):
            if dag_id(name) in values:
                p.copy_(torch.from_numpy(np.ascontiguousarray(values[dag_id(name)])))
    if optimizer is not None:
        kind = _kind(optimizer)
        updates = int(values.get("optimizer@step", 0))
        for name, p in model.named_parameters():
            key = dag_id(name)
            if not p.requires_grad or key + "@exp_avg" not in values and \
                    key + "@momentum_buffer" not in values:
                continue
            st = optimizer.state[p]
            if kind == "sgd":
                st["momentum_buffer"] = torch.from_numpy(values[key + "@momentum_buffer"].copy())
            else:
                st["step"] = torch.tensor(float(updates))
                st["exp_avg"] = torch.from_numpy(values[key + "@exp_avg"].copy())
                st["exp_avg_sq"] = torch.from_numpy(values[key + "@exp_avg_sq"].copy())
    return manifest["step"]


def save_checkpoint(folder, dag, out, model, optimizer, steps, updates=None):
    """Writes a checkpoint of the DAG `dag` (its path) compiled to `out`
    from a PyTorch model and optimizer after `steps` steps (`updates`
    optimizer steps: steps / accumulate by default), for `launch --resume
    folder` or prog.load(folder): every rank gets the same values, as DDP's
    replicas hold. Accumulators start empty (a checkpoint at an update)."""
    import torch
    from rankc.export import dag_id
    doc = json.load(open(dag))
    plan = json.load(open(os.path.join(out, "plan.json")))
    dp = doc.get("data_parallel") or {}
    opt = dp.get("optimizer")
    k = dp.get("accumulate", 1)
    updates = steps // k if updates is None else updates
    kind = _kind(optimizer) if opt else None
    tensors = {dag_id(n): p for n, p in model.named_parameters()}
    tensors.update({dag_id(n): b for n, b in model.named_buffers()})
    for prog in plan["programs"]:
        source = next(p for p in doc["programs"]
                      if p["ranks"] == "all" or sorted(p["ranks"]) == sorted(prog["ranks"]))
        dtypes = {n["id"]: n for n in source["nodes"] if n["op"] in ("input", "param")}
        grads = [(name, t["grad_of"]) for name, t in source.get("outputs", {}).items()
                 if isinstance(t, dict) and "grad_of" in t]
        values = {}
        as_np = lambda t: t.detach().cpu().numpy().copy()  # noqa: E731
        for i in source.get("state", {}):
            values[i] = as_np(tensors[i])
        if opt:
            seen = set()
            for _, w in grads:
                if w in seen:
                    continue
                seen.add(w)
                p = tensors[w]
                values[w] = as_np(p)
                st = optimizer.state.get(p, {})
                if kind == "sgd":
                    if opt.get("momentum", 0):
                        values[w + "@momentum_buffer"] = as_np(st["momentum_buffer"]) \
                            if "momentum_buffer" in st else np.zeros_like(as_np(p))
                else:
                    for s in ("exp_avg", "exp_avg_sq"):
                        values[f"{w}@{s}"] = as_np(st[s]) if s in st else np.zeros_like(as_np(p))
            values["optimizer@step"] = np.array(updates, dtype=np.int64)
            if opt.get("clip_grad_norm", {}).get("output") and k > 1:
                values["optimizer@grad_norm"] = np.array(0, dtype=np.float32)
        if k > 1:
            for name, w in grads:
                zero = np.zeros(dtypes[w]["shape"], dtype=as_np(tensors[w]).dtype)
                values[name + "@grad_sum"] = zero
                values[name + "@grad"] = zero
        for r in prog["ranks"]:
            d = os.path.join(folder, f"rank{r}")
            os.makedirs(d, exist_ok=True)
            entries = []
            for name, value in values.items():
                path = os.path.join(d, name + ".npy")
                np.save(path, value)
                data = open(path, "rb").read()
                entries.append({"name": name, "file": name + ".npy", "bytes": len(data),
                                "crc32": zlib.crc32(data)})
            head = {"format": "rankc-checkpoint", "fingerprint": plan["fingerprint"],
                    "world_size": plan["world_size"], "program": prog["executable"],
                    "rank": r, "step": steps}
            lines = [json.dumps(head)[:-1] + ',\n "values": [']
            lines.append(",\n".join("  " + json.dumps(e) for e in entries))
            lines.append("]}")
            open(os.path.join(d, "manifest.json"), "w").write("\n".join(lines) + "\n")
