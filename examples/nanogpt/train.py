#!/usr/bin/env python3
"""nanoGPT's recipe, compiled by rankc: a small GPT trained data-parallel
from a uint16 token file, with AdamW, a linear warm-up then cosine decay,
gradient clipping at 1.0 and gradient accumulation.

    python3 examples/nanogpt/train.py WORK [--ranks 2] [--iters 120]
        [--accumulate 4] [--lib]

1. The corpus is this repository's documentation (character level): its
   tokens are written as nanoGPT writes train.bin (raw uint16) to
   WORK/train.bin, and each rank gets its own half of it.
2. Each rank's batches ([B, T] token windows and their next tokens, uint16)
   are written as feeds (rankc.datasets.save_feed): a new micro-batch every
   step, in a shuffled order per epoch.
3. One step of model.GPT (forward, backward, the mean loss over all ranks
   for logging) is exported for `--ranks` ranks with AdamW, the schedule
   (torch's SequentialLR of LinearLR and CosineAnnealingLR, exported as
   `lr_schedule`), clip_grad_norm and `accumulate`; the token inputs are
   u16, cast to indices inside the step.
4. rankc compiles it, and `launch` runs iters * accumulate micro-steps:

       WORK/exe/launch --inputs WORK/in --feed input0,target0 --shuffle 1 \\
           --steps 480 --log-every 40 --metrics WORK/metrics.jsonl

   (every 40 micro-steps, 10 optimizer steps, one line: the loss averaged
   over the ranks, the global loss and the gradient norm before clipping).
   With --lib the step is compiled with --emit lib instead and trained by
   loop.py, a Python loop under mpiexec that cuts its batches from
   train.bin itself, as nanoGPT's get_batch does.

plot.py draws the loss curve from WORK/metrics.jsonl."""
import json
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, HERE)
from model import GPT, loss_fn  # noqa: E402
from rankc.datasets import save_feed, save_inputs  # noqa: E402
from rankc.export import export_step  # noqa: E402

BLOCK, BATCH, ROWS = 32, 8, 64   # context, micro-batch, feed rows per rank
LR, WARMUP = 2e-3, 10            # peak learning rate, warm-up (optimizer steps)


def corpus():
    """The documentation's characters as uint16 tokens, and the vocabulary."""
    text = ""
    for folder in (ROOT, os.path.join(ROOT, "docs")):
        for name in sorted(os.listdir(folder)):
            if name.endswith(".md"):
                text += open(os.path.join(folder, name), encoding="utf-8").read()
    chars = sorted(set(text))
    index = {c: i for i, c in enumerate(chars)}
    return np.array([index[c] for c in text], dtype=np.uint16), chars


def batches(tokens, rows, seed):
    """`rows` random windows of the token stream: inputs and next tokens."""
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, len(tokens) - BLOCK - 1, size=(rows, BATCH))
    x = np.stack([[tokens[s:s + BLOCK] for s in row] for row in starts])
    y = np.stack([[tokens[s + 1:s + 1 + BLOCK] for s in row] for row in starts])
    return x.astype(np.uint16), y.astype(np.uint16)


def option(args, flag, default):
    return type(default)(args[args.index(flag) + 1]) if flag in args else default


def main():
    args = sys.argv[1:]
    work = args[0] if args and not args[0].startswith("-") else sys.exit(__doc__)
    ranks, iters = option(args, "--ranks", 2), option(args, "--iters", 120)
    k = option(args, "--accumulate", 4)
    lib = "--lib" in args
    import shutil
    rankc = os.environ.get("RANKC") or shutil.which("rankc") or \
        os.path.join(ROOT, "build", "bin", "rankc")
    mpiexec = os.environ.get("RANKC_MPIEXEC", "mpiexec.mpich")
    os.makedirs(work, exist_ok=True)

    tokens, chars = corpus()
    tokens.tofile(os.path.join(work, "train.bin"))  # nanoGPT's format
    json.dump({"vocab": chars, "ranks": ranks}, open(os.path.join(work, "meta.json"), "w"))
    shards = np.array_split(tokens, ranks)
    data = [batches(shard, ROWS, seed=r) for r, shard in enumerate(shards)]

    torch.manual_seed(0)
    model = GPT(len(chars), block_size=BLOCK)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, betas=(0.9, 0.95), weight_decay=0.1)
    sched = torch.optim.lr_scheduler
    warmup = max(1, min(WARMUP, iters // 5))  # (short runs warm up less)
    schedule = sched.SequentialLR(opt, [
        sched.LinearLR(opt, start_factor=1 / warmup, total_iters=warmup),
        sched.CosineAnnealingLR(opt, T_max=iters - warmup, eta_min=LR / 10)],
        milestones=[warmup])
    x0, y0 = (torch.from_numpy(data[0][i][0].astype(np.int64)) for i in (0, 1))
    doc = export_step(model, (x0,), loss_fn, targets=(y0,), world_size=ranks,
                      optimizer=opt, lr_schedule=schedule, clip_grad_norm=1.0,
                      accumulate=k, global_loss=True,
                      input_dtypes={"input0": "u16", "target0": "u16"})
    path = os.path.join(work, "step.json")
    json.dump(doc, open(path, "w"))
    inputs = os.path.join(work, "in")
    save_inputs(inputs, model, [(torch.from_numpy(x[0].astype(np.int64)),) for x, _ in data])
    save_feed(inputs, "input0", [x for x, _ in data])
    save_feed(inputs, "target0", [y for _, y in data])

    exe = os.path.join(work, "lib" if lib else "exe")
    emit = ["--emit", "lib"] if lib else []
    subprocess.run([rankc, "compile", path, "-o", exe] + emit, check=True)
    if lib:
        subprocess.run([mpiexec, "-n", str(ranks), sys.executable,
                        os.path.join(HERE, "loop.py"), work, str(iters * k), str(10 * k)],
                       check=True)
        return
    subprocess.run([os.path.join(exe, "launch"), "--inputs", inputs,
                    "--outputs", os.path.join(work, "res"),
                    "--feed", "input0,target0", "--shuffle", "1",
                    "--steps", str(iters * k), "--log-every", str(10 * k),
                    "--metrics", os.path.join(work, "metrics.jsonl")], check=True)


if __name__ == "__main__":
    main()
