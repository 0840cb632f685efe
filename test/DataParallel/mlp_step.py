#!/usr/bin/env python3
"""A PyTorch model's training step (mlp or transformer), exported with
scripts/export_torch.py, compiled by rankc and run under mpiexec on N ranks
(one batch per rank): every rank's averaged gradients must equal torch's
gradients averaged over the N batches in a single process, and the loss its
own batch's loss.

    mlp_step.py RANKC WORKDIR RANKS [MODEL] [--doc EXPORTED.json]

--doc uses a document exported elsewhere (e.g. by current PyTorch on
another machine) instead of exporting with the local torch."""
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import export_torch  # noqa: E402


def main():
    rankc, work, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
    kind = sys.argv[4] if len(sys.argv) > 4 and not sys.argv[4].startswith("--") else "mlp"
    given = sys.argv[sys.argv.index("--doc") + 1] if "--doc" in sys.argv else None
    os.makedirs(work, exist_ok=True)
    torch.manual_seed(1)
    model, example = export_torch.MODELS[kind]()
    loss_fn = lambda y: (y * y).mean()
    batches = [torch.randn(example.shape) for _ in range(ranks)]
    import json
    if given:
        doc = json.load(open(given))
        doc["world_size"] = ranks
    else:
        doc = export_torch.export_step(model, (batches[0],), loss_fn, world_size=ranks,
                                       bucket_cap_mb=0.002, first_bucket_cap_mb=0.001)
    path = os.path.join(work, "mlp.json")
    json.dump(doc, open(path, "w"))
    out = os.path.join(work, "exe")
    subprocess.run([rankc, "compile", path, "-o", out], check=True)
    export_torch.save_inputs(os.path.join(work, "in"), model, batches)
    subprocess.run([os.path.join(out, "launch"), "--inputs", os.path.join(work, "in"),
                    "--outputs", os.path.join(work, "res")], check=True)
    # The single-process reference.
    grads = {n: torch.zeros_like(p) for n, p in model.named_parameters()}
    losses = []
    for b in batches:
        model.zero_grad()
        loss = loss_fn(model(b))
        loss.backward()
        losses.append(loss.item())
        for n, p in model.named_parameters():
            grads[n] += p.grad / ranks
    failed = 0
    for r in range(ranks):
        res = os.path.join(work, "res", f"rank{r}")
        got = float(np.load(os.path.join(res, "loss.npy")))
        if not np.isclose(got, losses[r], rtol=1e-5):
            print(f"FAIL: rank {r} loss {got} != {losses[r]}")
            failed += 1
        for n, g in grads.items():
            got = np.load(os.path.join(res, f"grad.{n}.npy"))
            if not np.allclose(got, g.numpy(), rtol=1e-4, atol=1e-6):
                print(f"FAIL: rank {r} grad {n}: max error {np.abs(got - g.numpy()).max()}")
                failed += 1
    checks = ranks * (1 + len(grads))
    print(f"{checks - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
