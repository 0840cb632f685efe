#!/usr/bin/env python3
"""One document, as differential.py checks its random programs: compiled
for the CPU, run under mpiexec (one step) on inputs drawn here, every
rank's outputs compared with the NumPy reference (each dtype's tolerance
from programs.py, scaled by the output's magnitude).

    differential_doc.py RANKC DOC.json WORKDIR

For documents of repeated work (bench/gen_shapes.py's halo, wide and
step), whose equal parts are compiled once (rankc-fold-equal-functions).
Prints "ok" or what differs; exits 1 on a difference."""
import json
import os
import shutil
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import differential  # noqa: E402
import programs  # noqa: E402


def main():
    rankc, path, work = sys.argv[1:4]
    doc = json.load(open(path))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = os.path.join(work, "exe")
    p = differential.run([rankc, "compile", path, "-o", out], timeout=600)
    if p.returncode != 0:
        sys.exit(f"compile failed: {p.stderr.strip()[-400:]}")
    inputs = differential.make_inputs(doc, {}, 0)
    differential.save_inputs(inputs, doc, os.path.join(work, "in"))
    res = os.path.join(work, "res")
    p = differential.run([os.path.join(out, "launch"), "--inputs", os.path.join(work, "in"),
                          "--outputs", res, "--timeout", "120"], timeout=300)
    if p.returncode != 0:
        sys.exit(f"run failed: {p.stderr.strip()[-400:]}")
    expected = differential.reference.evaluate(doc, inputs)
    count = 0
    for r, outs in expected.items():
        for name, (want, dt) in outs.items():
            got = np.load(os.path.join(res, f"rank{r}", name + ".npy"))
            why = differential.compare(got, want, dt, programs.EPS.get(dt, 0.0))
            if why:
                sys.exit(f"rank {r}, output {name} ({dt}): {why}")
            count += 1
    print(f"ok: {count} outputs equal to the reference")


if __name__ == "__main__":
    main()
