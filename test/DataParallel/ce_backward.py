#!/usr/bin/env python3
"""Cross-entropy's backward as the exporter writes it: the sum over each
row of NLL's gradient (one non-zero a row) is that value, made per row, so
no node of the step sums an [N, C] one-hot tensor; the gradients are
PyTorch's.

    ce_backward.py RANKC WORKDIR

For F.cross_entropy (mean, sum, ignore_index with an ignored label) and
F.nll_loss over log_softmax (reduction="none", summed), exports a linear
classifier's step on one rank, says whether a `sum` node reads the
one-hot gradient (through neg, mul and cast, down to the eq of the class
index), compiles and runs it, and compares its gradients with PyTorch's.
Prints one line per loss."""
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
from export_torch import export_step, save_inputs  # noqa: E402

LOSSES = {
    "ce-mean": lambda y, t: F.cross_entropy(y, t),
    "ce-sum": lambda y, t: F.cross_entropy(y, t, reduction="sum"),
    "ce-ignore": lambda y, t: F.cross_entropy(y, t, ignore_index=-1),
    "nll-none": lambda y, t: F.nll_loss(F.log_softmax(y, dim=1), t, reduction="none").sum(),
}


def sums_onehot(nodes):
    """Whether a `sum` reads, through neg, mul and cast only, an `eq`."""
    by = {n["id"]: n for n in nodes}

    def reaches_eq(nid, depth):
        n = by.get(nid)
        if n is None or depth > 6:
            return False
        if n["op"] == "eq":
            return True
        return n["op"] in ("neg", "mul", "cast") and \
            any(reaches_eq(a, depth + 1) for a in n["args"] if isinstance(a, str))
    return any(n["op"] == "sum" and reaches_eq(n["args"][0], 0) for n in nodes)


def main():
    rankc, work = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    model = torch.nn.Linear(8, 11)
    x = torch.randn(6, 8)
    for name, loss in LOSSES.items():
        t = torch.tensor([3, 0, 10, -1 if name == "ce-ignore" else 7, 5, 5])
        doc = export_step(model, (x,), loss, targets=(t,))
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        json.dump(doc, open(os.path.join(d, "step.json"), "w"))
        subprocess.run([rankc, "compile", os.path.join(d, "step.json"), "-o",
                        os.path.join(d, "exe")], check=True)
        save_inputs(os.path.join(d, "in"), model, [(x,)], targets=[(t,)])
        subprocess.run([os.path.join(d, "exe", "launch"), "--inputs", os.path.join(d, "in"),
                        "--outputs", os.path.join(d, "res")], check=True,
                       stdout=subprocess.DEVNULL)
        model.zero_grad()
        loss(model(x), t).backward()
        res = os.path.join(d, "res", "rank0")
        err = max(float(np.abs(np.load(os.path.join(res, f"grad.{n}.npy")) -
                               p.grad.numpy()).max() / p.grad.abs().max())
                  for n, p in model.named_parameters())
        print(f"{name}: sums the one-hot: {sums_onehot(doc['programs'][0]['nodes'])}, "
              f"gradients match PyTorch: {err < 1e-6} ({err:.1e})")


if __name__ == "__main__":
    main()
