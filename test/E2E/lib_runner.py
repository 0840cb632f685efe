#!/usr/bin/env python3
"""Steps a program compiled with `--emit lib` through its Python module.

    mpiexec -n WS python3 lib_runner.py OUT IN RES STEPS [--feed ID,...]
        [--load DIR] [--save DIR]

Each rank loads its program (OUT/python/rankc_program.py), reads its inputs
from IN/rank<r>/<id>.npy, runs STEPS steps (the first with every input,
later ones leaving out the inputs that are carried, as a time-stepping or
training loop does) and writes the last step's outputs to
RES/rank<r>/<name>.npy, as OUT/launch would. With --feed, each named input's
file holds rows [S, ...] and step k takes row k mod S (launch --feed's
order without --shuffle): a training loop handing the step a new batch, or
the learning rate of the step from a schedule computed in Python. --load DIR
starts from a checkpoint (prog.load: the steps it holds count towards
STEPS); --save DIR writes one after the last step (prog.save)."""
import os
import sys

import numpy as np

args = sys.argv[1:]
fed = []
if "--feed" in args:
    i = args.index("--feed")
    fed = args[i + 1].split(",")
    del args[i:i + 2]
flags = {}
for flag in ("--load", "--save"):
    if flag in args:
        i = args.index(flag)
        flags[flag] = args[i + 1]
        del args[i:i + 2]
out, inputs_dir, res, steps = args[0], args[1], args[2], int(args[3])
sys.path.insert(0, os.path.join(out, "python"))
import rankc_program  # noqa: E402

prog = rankc_program.load(out)
mine = os.path.join(inputs_dir, "rank%d" % prog.rank)
feed = {name: np.load(os.path.join(mine, name + ".npy")) for name, _, _ in prog.inputs}
carried = set(prog.carried)
rows = {n: feed[n] for n in fed}


def inputs(k):
    given = dict(feed) if k == 0 or prog.steps_done == 0 else \
        {n: v for n, v in feed.items() if n not in carried}
    for n, r in rows.items():
        given[n] = r[k % len(r)]
    return given


first = 0
if "--load" in flags:
    prog.load(flags["--load"])
    first = prog.step_count
result = prog.step(inputs(first))
for k in range(first + 1, steps):
    result = prog.step(inputs(k))
assert prog.steps_done == steps
if "--save" in flags:
    prog.save(flags["--save"])
os.makedirs(os.path.join(res, "rank%d" % prog.rank), exist_ok=True)
for name, value in result.items():
    if value.dtype.name == "bfloat16":  # as launch writes bf16: its bits
        value = value.view(np.uint16)
    np.save(os.path.join(res, "rank%d" % prog.rank, name + ".npy"), value)
prog.close()
