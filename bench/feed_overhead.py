#!/usr/bin/env python3
"""A fed training step against the same step on fixed inputs (issue 36).

    feed_overhead.py RANKC WORK [--target cpu|cuda] [--steps N] [--ranks R]
                     [--model NAME] [--rows S] [--prepare-only] [--run-only]

Exports the model's data-parallel step with SGD (scripts/export_torch.py's
models), writes each rank S batches (default 64) as a feed, compiles it and runs
`launch --steps N --metrics` twice in one call: on fixed inputs, and with
`--feed input0 --shuffle 1` (a new memory-mapped batch every step). Prints
each run's median step time (--metrics' step_s, rank 0) and their ratio.
--prepare-only stops before the runs (for a GPU machine without the
compiler: carry WORK there and run with --run-only)."""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
sys.path.insert(0, os.path.join(HERE, "..", "python"))


def prepare(rankc, work, target, ranks, model_kind, rows):
    import torch
    import export_torch
    from rankc.datasets import save_feed
    torch.manual_seed(0)
    model, example = export_torch.MODELS[model_kind]()
    gen = torch.Generator().manual_seed(1)
    feeds = [torch.randn((rows,) + tuple(example.shape), generator=gen) for _ in range(ranks)]
    doc = export_torch.export_step(model, (feeds[0][0],), lambda y: (y * y).mean(),
                                   world_size=ranks,
                                   optimizer={"kind": "sgd", "lr": 0.01, "momentum": 0.9})
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "step.json")
    json.dump(doc, open(path, "w"))
    # in/: the fixed inputs; in-fed/: the same with input0 a feed of S rows.
    for folder in ("in", "in-fed"):
        export_torch.save_inputs(os.path.join(work, folder), model, [f[0] for f in feeds])
    save_feed(os.path.join(work, "in-fed"), "input0", [f.numpy() for f in feeds])
    subprocess.run([rankc, "compile", path, "-o", os.path.join(work, "exe"),
                    "--target", target], check=True)


def median_step(work, steps, extra, tag, inputs="in"):
    """Rank 0's median step time from --metrics (a step's time there
    includes taking its fed rows; --stats' does not)."""
    metrics = os.path.join(work, f"metrics-{tag}.jsonl")
    subprocess.run([os.path.join(work, "exe", "launch"), "--inputs", os.path.join(work, inputs),
                    "--outputs", os.path.join(work, f"res-{tag}"), "--steps", str(steps),
                    "--metrics", metrics] + extra, check=True, stdout=subprocess.DEVNULL)
    walls = [json.loads(line)["step_s"] for line in open(metrics)]
    return float(np.median(walls[1:]))


def main():
    args = sys.argv[1:]
    opt = lambda f, d: args[args.index(f) + 1] if f in args else d
    rankc, work = args[0], args[1]
    target, steps = opt("--target", "cpu"), int(opt("--steps", "200"))
    ranks, model = int(opt("--ranks", "2")), opt("--model", "transformer")
    if "--run-only" not in args:
        prepare(rankc, work, target, ranks, model, int(opt("--rows", "64")))
    if "--prepare-only" in args:
        return
    rows = []
    for rep in range(2):  # fixed, fed, fixed, fed: the order's drift shows
        fixed = median_step(work, steps, [], f"fixed{rep}")
        fed = median_step(work, steps, ["--feed", "input0", "--shuffle", "1"], f"fed{rep}",
                          "in-fed")
        rows.append((fixed, fed))
        print(f"{model} {target} {ranks} ranks, {steps} steps, run {rep}: fixed "
              f"{fixed * 1e3:.3f} ms/step, fed {fed * 1e3:.3f} ms/step, fed/fixed "
              f"{fed / fixed:.3f}")


if __name__ == "__main__":
    main()
