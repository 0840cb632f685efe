#!/usr/bin/env python3
"""Steps a program compiled with `--emit lib` through its Python module.

    mpiexec -n WS python3 lib_runner.py OUT IN RES STEPS

Each rank loads its program (OUT/python/rankc_program.py), reads its inputs
from IN/rank<r>/<id>.npy, runs STEPS steps (the first with every input,
later ones leaving out the inputs that are carried, as a time-stepping or
training loop does) and writes the last step's outputs to
RES/rank<r>/<name>.npy, as OUT/launch would."""
import os
import sys

import numpy as np

out, inputs_dir, res, steps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
sys.path.insert(0, os.path.join(out, "python"))
import rankc_program  # noqa: E402

prog = rankc_program.load(out)
mine = os.path.join(inputs_dir, "rank%d" % prog.rank)
feed = {name: np.load(os.path.join(mine, name + ".npy")) for name, _, _ in prog.inputs}
carried = set(prog.carried)
result = prog.step(feed)
for _ in range(steps - 1):
    result = prog.step({n: v for n, v in feed.items() if n not in carried})
assert prog.steps_done == steps
os.makedirs(os.path.join(res, "rank%d" % prog.rank), exist_ok=True)
for name, value in result.items():
    if value.dtype.name == "bfloat16":  # as launch writes bf16: its bits
        value = value.view(np.uint16)
    np.save(os.path.join(res, "rank%d" % prog.rank, name + ".npy"), value)
prog.close()
