#!/usr/bin/env python3
"""Softmax attention's backward as the exporter writes it in f32: the row
sums sum_j(dP * P) of softmax's backward taken as sum_d(dO * O) (flash
attention's identity, O = P @ V), which read two [.., T, head] tensors
instead of two [.., T, T]; the gradients stay PyTorch's.

    attention_backward.py RANKC WORKDIR

Exports examples/nanogpt's GPT (2 layers, causal, context 16) and
rankc.models' TransformerBlock (no mask) in f32 and under bf16 autocast,
counts the `attention_row_dots` nodes (one a layer in f32; none under
autocast, whose O is rounded to bf16), and for the f32 steps compiles,
runs one step on one rank and compares every gradient with PyTorch's."""
import json
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "examples", "nanogpt"))
from export_torch import export_step, save_inputs  # noqa: E402


def gpt():
    from model import GPT, loss_fn
    m = GPT(64, block_size=16, layers=2, heads=2, d=32)
    return m, torch.randint(0, 64, (2, 16)), torch.randint(0, 64, (2, 16)), loss_fn


def block():
    from rankc.models import TransformerBlock
    return TransformerBlock(16, 32), torch.randn(2, 5, 16), None, lambda y: (y * y).mean()


def main():
    rankc, work = sys.argv[1], sys.argv[2]
    for name, make in (("gpt", gpt), ("block", block)):
        torch.manual_seed(0)
        m, x, t, loss = make()
        targets = (t,) if t is not None else ()
        for autocast in (None, "bf16"):
            doc = export_step(m, (x,), loss, targets=targets, autocast=autocast)
            dots = sum(n["id"].startswith("attention_row_dots")
                       for n in doc["programs"][0]["nodes"])
            line = f"{name} {autocast or 'f32'}: row dots {dots}"
            if autocast is None:
                d = os.path.join(work, name)
                os.makedirs(d, exist_ok=True)
                json.dump(doc, open(os.path.join(d, "step.json"), "w"))
                subprocess.run([rankc, "compile", os.path.join(d, "step.json"), "-o",
                                os.path.join(d, "exe")], check=True)
                save_inputs(os.path.join(d, "in"), m, [(x,)],
                            targets=[targets] if targets else None)
                subprocess.run([os.path.join(d, "exe", "launch"), "--inputs",
                                os.path.join(d, "in"), "--outputs", os.path.join(d, "res")],
                               check=True, stdout=subprocess.DEVNULL)
                m.zero_grad()
                (loss(m(x), t) if t is not None else loss(m(x))).backward()
                res = os.path.join(d, "res", "rank0")
                got = np.concatenate([np.load(os.path.join(res, f"grad.{n}.npy")).ravel()
                                      for n, _ in m.named_parameters()])
                want = torch.cat([p.grad.flatten() for p in m.parameters()]).numpy()
                err = float(np.linalg.norm(got - want) / np.linalg.norm(want))
                line += f", gradients match PyTorch: {err < 1e-6} ({err:.1e})"
            print(line)


if __name__ == "__main__":
    main()
