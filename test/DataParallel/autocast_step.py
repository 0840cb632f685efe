#!/usr/bin/env python3
"""A training step exported under bf16 autocast (export_step's
`autocast`), compiled by rankc and run under mpiexec on RANKS ranks, one
batch per rank, against PyTorch's CPU autocast of the same model and
batches in one process.

    autocast_step.py RANKC WORKDIR RANKS [MODEL...]   (mlp transformer gpt conv)

Three references, each gradient averaged over the ranks' batches and all
gradients compared as one vector (normwise relative error):
- `rule`: PyTorch autocast with bf16 matmuls accumulating in f32 and
  rounding once (f32_accumulate.py: version 3's rule, cuBLAS's): rankc must
  be within RULE_TOL of it (it differs only where PyTorch's fused softmax or
  layer norm sums in another order);
- `torch`: plain CPU autocast (PyTorch 1.13's CPU bf16 GEMMs round every
  partial sum to bf16): within bf16's tolerance, TORCH_TOL, or where this
  CPU's PyTorch is itself further than that from `rule`, no further than
  it is (plus RULE_TOL);
- `f32`: the step without autocast: rankc must be at least F32_GAP times
  further from it than from `rule`, or autocast did not happen.
The parameters and gradients are f32 (master weights), the loss f32."""
import contextlib
import json
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
for p in ("python", os.path.join("examples", "nanogpt")):
    sys.path.insert(0, os.path.join(HERE, "..", "..", p))
from rankc.datasets import save_inputs  # noqa: E402
from rankc.export import export_step  # noqa: E402
from rankc.models import MODELS  # noqa: E402
from f32_accumulate import F32Accumulate  # noqa: E402

RULE_TOL, TORCH_TOL, F32_GAP = 2e-3, 3e-2, 4.0
SQUARE = lambda y: (y.float() * y.float()).mean()  # noqa: E731


def make(kind, gen):
    """(model, [per-rank (inputs, targets)] maker, loss)."""
    if kind in ("mlp", "transformer"):
        model, x = MODELS[kind]()
        return model, lambda: ((torch.randn(x.shape, generator=gen),), ()), SQUARE
    if kind == "gpt":
        from model import GPT, loss_fn
        model = GPT(61, block_size=12, layers=2, heads=2, d=32)
        tok = lambda: torch.randint(0, 61, (3, 12), generator=gen)  # noqa: E731
        return model, lambda: ((tok(),), (tok(),)), loss_fn
    if kind == "conv":
        model = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.Conv2d(8, 8, 3, stride=2), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 5))
        return model, lambda: ((torch.randn(4, 3, 9, 9, generator=gen),),
                               (torch.randint(0, 5, (4,), generator=gen),)), \
            torch.nn.functional.cross_entropy
    raise SystemExit(f"autocast_step: unknown model {kind}")


def reference(model, batches, loss_fn, mode, autocast):
    """Loss per batch and gradients averaged over the batches."""
    state = {k: v.clone() for k, v in model.state_dict().items()}
    grads, losses = None, []
    for xs, ts in batches:
        model.load_state_dict(state)  # (batch norm's running stats: each rank's own)
        model.zero_grad()
        with mode:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
                loss = loss_fn(model(*xs), *ts)
            loss.backward()
        g = torch.cat([p.grad.flatten() for p in model.parameters()])
        grads = g if grads is None else grads + g
        losses.append(loss.item())
    model.load_state_dict(state)
    return losses, grads / len(batches)


def check(rankc, work, ranks, kind):
    gen = torch.Generator().manual_seed(3)
    torch.manual_seed(3)
    model, batch, loss_fn = make(kind, gen)
    batches = [batch() for _ in range(ranks)]
    xs, ts = batches[0]
    doc = export_step(model, xs, loss_fn, targets=ts, world_size=ranks,
                      bucket_cap_mb=0.002, first_bucket_cap_mb=0.001, autocast="bf16")
    nodes = doc["programs"][0]["nodes"]
    assert doc["version"] == 3
    assert all(n["dtype"] == "f32" for n in nodes if n["op"] == "param"), "master weights"
    assert any(n["op"] == "cast" and n["dtype"] == "bf16" for n in nodes)
    d = os.path.join(work, kind)
    os.makedirs(d, exist_ok=True)
    json.dump(doc, open(os.path.join(d, "step.json"), "w"))
    subprocess.run([rankc, "compile", os.path.join(d, "step.json"), "-o",
                    os.path.join(d, "exe")], check=True)
    save_inputs(os.path.join(d, "in"), model, [b[0] for b in batches],
                targets=[b[1] for b in batches] if ts else None)
    subprocess.run([os.path.join(d, "exe", "launch"), "--inputs", os.path.join(d, "in"),
                    "--outputs", os.path.join(d, "res")], check=True, stdout=subprocess.DEVNULL)
    refs = {"rule": reference(model, batches, loss_fn, F32Accumulate(), True),
            "torch": reference(model, batches, loss_fn, contextlib.nullcontext(), True),
            "f32": reference(model, batches, loss_fn, contextlib.nullcontext(), False)}
    ok = True
    for r in range(ranks):
        res = os.path.join(d, "res", f"rank{r}")
        loss = np.load(os.path.join(res, "loss.npy"))
        assert loss.dtype == np.float32, loss.dtype
        got = torch.cat([torch.from_numpy(np.load(os.path.join(res, f"grad.{n}.npy"))).flatten()
                         for n, _ in model.named_parameters()])
        err = {k: float((got - g).norm() / g.norm()) for k, (_, g) in refs.items()}
        lerr = abs(float(loss) - refs["rule"][0][r]) / abs(refs["rule"][0][r])
        # Plain CPU autocast is bf16's noise away from the rule, more on a
        # CPU whose ATen kernels round inside (an AVX2 build's bf16 conv sums
        # in bf16: 5.5e-2 from the rule). rankc must be within TORCH_TOL of
        # it, or, where PyTorch itself is further than that from the rule,
        # no further from it than PyTorch is from the rule (plus RULE_TOL).
        torch_noise = float((refs["torch"][1] - refs["rule"][1]).norm() /
                            refs["rule"][1].norm())
        torch_tol = max(TORCH_TOL, torch_noise + RULE_TOL)
        good = err["rule"] <= RULE_TOL and err["torch"] <= torch_tol and \
            err["f32"] >= F32_GAP * err["rule"] and lerr <= RULE_TOL
        ok &= good
        print(f"{'PASS' if good else 'FAIL'}: {kind} rank {r}: gradients vs rule "
              f"{err['rule']:.1e} (<= {RULE_TOL:g}), vs torch {err['torch']:.1e} "
              f"(<= {torch_tol:.2g}; torch vs rule {torch_noise:.1e}), vs f32 "
              f"{err['f32']:.1e} (>= {F32_GAP:g}x rule); "
              f"loss vs rule {lerr:.1e}")
    return ok


def main():
    rankc, work, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
    kinds = sys.argv[4:] or ["mlp", "transformer", "gpt", "conv"]
    results = [check(rankc, work, ranks, k) for k in kinds]
    print(f"{sum(results)} passed, {len(results) - sum(results)} failed")
    sys.exit(0 if all(results) else 1)


if __name__ == "__main__":
    main()
