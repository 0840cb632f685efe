#!/usr/bin/env python3
"""Bad calls of the Python module (test/E2E/lib.test): each raises, names
what is wrong, and leaves the program usable. Run under mpiexec on the
2-rank heat stencil (one input u0 f64 [8, 16], carried; outputs u, total).

    mpiexec -n 2 python3 lib_errors.py OUT"""
import sys

import numpy as np

sys.path.insert(0, sys.argv[1] + "/python")
import rankc_program  # noqa: E402

prog = rankc_program.load(sys.argv[1])
say = print if prog.rank == 0 else (lambda *a: None)
say("rank", prog.rank, "of", prog.world_size, "inputs", prog.inputs, "outputs", prog.outputs)
good = np.zeros((8, 16))


def expect(what, call, error=ValueError):
    try:
        call()
    except error as e:
        say(what + ":", e)
        return
    raise SystemExit("no error for " + what)


expect("missing", lambda: prog.step({}))
expect("unknown", lambda: prog.step({"u0": good, "v": good}))
expect("shape", lambda: prog.step({"u0": np.zeros((16, 8))}))
expect("dtype", lambda: prog.step({"u0": good.astype(np.float32)}))
expect("not a dict", lambda: prog.step([good]))
assert prog.steps_done == 0
res = prog.step({"u0": good + prog.rank})
say("after errors, a step:", sorted(res), res["u"].shape, res["u"].dtype)
res = prog.step({})  # u0 is carried: it may be left out now
say("carried:", prog.steps_done, "steps")
prog.close()
prog.close()  # closing twice is harmless
expect("closed", lambda: prog.step({"u0": good}), RuntimeError)
