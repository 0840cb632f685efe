#!/usr/bin/env python3
"""Data-parallel training on a new batch every step, from a per-rank feed.

    python3 examples/train-fed/train.py WORK [--ranks 2] [--steps 200]

A small PyTorch regression model (y = sin(x . a) from 16 features) is
exported as one training step with Adam (rankc.export.export_step), each
rank gets its own 64 batches as a feed ([64, batch, 16] inputs and [64,
batch, 1] targets: rankc.datasets.save_feed), and the compiled step runs
`--steps` times, reading a new batch every step in a shuffled order per
epoch and printing the loss averaged over the ranks every 20 steps:

    WORK/exe/launch --inputs WORK/in --feed input0,target0 --shuffle 1 \\
        --steps 200 --log-every 20 --metrics WORK/metrics.jsonl

rankc.datasets.feed_row(step, 64, seed) says which batch a step read, for
anyone who wants to reproduce the run elsewhere."""
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
from rankc.datasets import save_feed, save_inputs  # noqa: E402
from rankc.export import export_step  # noqa: E402

FEATURES, BATCH, BATCHES = 16, 32, 64


def dataset(rank, gen):
    """BATCHES batches of (x, y) for one rank: y = sin(x . a)."""
    a = torch.linspace(-1, 1, FEATURES)
    x = torch.randn(BATCHES, BATCH, FEATURES, generator=gen)
    return x, torch.sin(x @ a).unsqueeze(-1)


def main():
    args = sys.argv[1:]
    work = args[0] if args and not args[0].startswith("-") else sys.exit(__doc__)
    ranks = int(args[args.index("--ranks") + 1]) if "--ranks" in args else 2
    steps = int(args[args.index("--steps") + 1]) if "--steps" in args else 200
    rankc = os.environ.get("RANKC", os.path.join(ROOT, "build", "bin", "rankc"))
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 64), torch.nn.Tanh(),
                                torch.nn.Linear(64, 1))
    gen = torch.Generator().manual_seed(1)
    data = [dataset(r, gen) for r in range(ranks)]
    doc = export_step(model, (data[0][0][0],), torch.nn.functional.mse_loss,
                      targets=(data[0][1][0],), world_size=ranks,
                      optimizer={"kind": "adam", "lr": 0.01})
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "step.json")
    with open(path, "w") as f:
        import json
        json.dump(doc, f)
    inputs = os.path.join(work, "in")
    # The parameters (and a first batch, which the feeds replace).
    save_inputs(inputs, model, [(x[0],) for x, _ in data],
                targets=[(y[0],) for _, y in data])
    save_feed(inputs, "input0", [x.numpy() for x, _ in data])
    save_feed(inputs, "target0", [y.numpy() for _, y in data])
    exe = os.path.join(work, "exe")
    subprocess.run([rankc, "compile", path, "-o", exe], check=True)
    subprocess.run([os.path.join(exe, "launch"), "--inputs", inputs,
                    "--outputs", os.path.join(work, "res"),
                    "--feed", "input0,target0", "--shuffle", "1",
                    "--steps", str(steps), "--log-every", "20",
                    "--metrics", os.path.join(work, "metrics.jsonl")], check=True)


if __name__ == "__main__":
    main()
