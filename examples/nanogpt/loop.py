#!/usr/bin/env python3
"""nanoGPT's training loop over the compiled step (run by train.py --lib):

    mpiexec -n R python3 examples/nanogpt/loop.py WORK STEPS LOG_EVERY

Each rank loads its program from WORK/lib, its parameters from WORK/in, and
every micro-step cuts a batch of random windows from its half of
WORK/train.bin (a np.memmap of uint16 tokens, as nanoGPT's get_batch does);
the schedule, clipping and accumulation are in the compiled step. Rank 0
prints the loss averaged over the ranks (the step's `global_loss` output)."""
import json
import os
import sys

import numpy as np

work, steps, every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sys.path.insert(0, os.path.join(work, "lib", "python"))
import rankc_program  # noqa: E402

prog = rankc_program.load(os.path.join(work, "lib"))
ranks = json.load(open(os.path.join(work, "meta.json")))["ranks"]
tokens = np.memmap(os.path.join(work, "train.bin"), dtype=np.uint16, mode="r")
lo = len(tokens) * prog.rank // ranks
hi = len(tokens) * (prog.rank + 1) // ranks
shape = dict((name, shape) for name, shape, _ in prog.inputs)["input0"]
batch, block = shape
rng = np.random.default_rng(100 + prog.rank)
mine = os.path.join(work, "in", f"rank{prog.rank}")
params = {name: np.load(os.path.join(mine, name + ".npy"))
          for name, _, _ in prog.inputs if name not in ("input0", "target0")}
for step in range(steps):
    starts = rng.integers(lo, hi - block - 1, size=batch)
    x = np.stack([tokens[s:s + block] for s in starts])
    y = np.stack([tokens[s + 1:s + 1 + block] for s in starts])
    out = prog.step({**(params if step == 0 else {}), "input0": x, "target0": y})
    if prog.rank == 0 and (step + 1) % every == 0:
        print(f"step {step + 1}/{steps}  global_loss {float(out['global_loss']):.4f}  "
              f"grad_norm {float(out['grad_norm']):.4f}", flush=True)
prog.close()
