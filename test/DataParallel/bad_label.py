#!/usr/bin/env python3
"""A class-index target outside [0, C) fails the run, as PyTorch raises.

    bad_label.py RANKC WORKDIR

Exports a linear classifier's step with F.cross_entropy (and one with
F.nll_loss over log_softmax, ignore_index=-1) on 2 ranks, compiles each,
and runs it three times: valid labels (and ignore_index, which PyTorch
skips) must run and give PyTorch's loss; a label of C on rank 1 and a
label of -3 on rank 0 must each fail with exit 1 and an error naming the
rank, the node and the label. Prints one line per case."""
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

rankc, work = sys.argv[1], sys.argv[2]
torch.manual_seed(0)
C = 5
model = torch.nn.Linear(3, C)
x = [torch.randn(4, 3) for _ in range(2)]
losses = {
    "ce": lambda y, t: F.cross_entropy(y, t),
    "nll": lambda y, t: F.nll_loss(F.log_softmax(y, dim=1), t, ignore_index=-1),
}
for name, loss in losses.items():
    doc = export_step(model, (x[0],), loss, targets=(torch.tensor([0, 1, 2, 3]),),
                      world_size=2)
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    out = os.path.join(work, name)
    subprocess.run([rankc, "compile", path, "-o", out], check=True)
    cases = {"valid": [[0, 4, 2, 1], [3, 3, -1 if name == "nll" else 0, 2]],
             "too-large": [[0, 1, 2, 3], [1, C, 0, 0]],
             "negative": [[0, -3, 2, 3], [1, 2, 0, 0]]}
    for case, labels in cases.items():
        folder = os.path.join(work, f"{name}-{case}-in")
        targets = [(torch.tensor(t),) for t in labels]
        save_inputs(folder, model, x, targets)
        res = os.path.join(work, f"{name}-{case}-out")
        p = subprocess.run([os.path.join(out, "launch"), "--inputs", folder, "--outputs", res],
                           capture_output=True, text=True)
        errors = [l for l in p.stderr.splitlines() if l.startswith("error:")]
        if case == "valid":
            names = [k for k, v in doc["programs"][0]["outputs"].items()
                     if not isinstance(v, dict)]
            got = float(np.load(os.path.join(res, "rank0", names[0] + ".npy")))
            # The loss output is rank 0's own (not averaged): compare that.
            want0 = loss(model(x[0]), torch.tensor(labels[0])).item()
            print(f"{name} {case}: exit {p.returncode}, loss matches PyTorch: "
                  f"{abs(got - want0) < 1e-5}")
        else:
            print(f"{name} {case}: exit {p.returncode}")
            for line in errors[:1]:
                print("  " + line)
