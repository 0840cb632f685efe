#!/usr/bin/env python3
"""The learning-rate schedule alone, against PyTorch's schedulers.

    lr_schedule.py RANKC WORK STEPS

For each scheduler below, a step whose only parameter p (f64) has the
gradient 1 is exported with SGD (lr 0.5) and the scheduler as
`lr_schedule`, compiled with --emit lib and run STEPS steps through the
Python module: p_k - p_{k+1} is the learning rate rankc used at step k,
compared with optimizer.param_groups[0]["lr"] of the same scheduler in
PyTorch (f64 both; to 1e-11 of the base rate, the rounding of p's sum).
Prints one line per scheduler and "N passed, M failed"."""
import json
import os
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from rankc.export import lr_schedule_phases  # noqa: E402

BASE = 0.5
S = torch.optim.lr_scheduler
SCHEDULERS = {
    "linear": lambda o: S.LinearLR(o, start_factor=0.25, end_factor=0.75, total_iters=300),
    "cosine": lambda o: S.CosineAnnealingLR(o, T_max=1000, eta_min=0.01),
    "step": lambda o: S.StepLR(o, step_size=70, gamma=0.7),
    "exponential": lambda o: S.ExponentialLR(o, gamma=0.995),
    "warmup-cosine": lambda o: S.SequentialLR(o, [S.LinearLR(o, 0.01, total_iters=100),
                                                  S.CosineAnnealingLR(o, T_max=900, eta_min=1e-3)],
                                              milestones=[100]),
    "short-warmup-step-exp": lambda o: S.SequentialLR(
        o, [S.LinearLR(o, 0.1, total_iters=30), S.StepLR(o, 40, 0.5), S.ExponentialLR(o, 0.99)],
        milestones=[50, 450]),
}


def document(phases):
    return {"format": "rankc-dag", "version": 3, "world_size": 1,
            "data_parallel": {"optimizer": {"kind": "sgd", "lr": BASE, "lr_schedule": phases}},
            "programs": [{"ranks": "all", "nodes": [
                {"id": "p", "op": "param", "shape": [1], "dtype": "f64"},
                {"id": "one", "op": "constant", "value": [1.0], "dtype": "f64"}],
                "outputs": {"g": {"node": "one", "grad_of": "p"}}}]}


def run(out, steps):
    """The parameter before and after each of `steps` steps, as JSON."""
    sys.path.insert(0, os.path.join(out, "python"))
    import rankc_program
    prog = rankc_program.load(out)
    ps = [0.0, float(prog.step({"p": np.zeros(1)})["p"][0])]
    for _ in range(steps - 1):
        ps.append(float(prog.step({})["p"][0]))
    prog.close()
    print(json.dumps(ps))


def main():
    if sys.argv[1] == "--run":
        return run(sys.argv[2], int(sys.argv[3]))
    rankc, work, steps = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.makedirs(work, exist_ok=True)
    passed = failed = 0
    for name, make in SCHEDULERS.items():
        opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=BASE)
        sched = make(opt)
        want = []
        for _ in range(steps):
            want.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        fresh = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=BASE)
        path = os.path.join(work, name + ".json")
        json.dump(document(lr_schedule_phases(make(fresh))), open(path, "w"))
        out = os.path.join(work, name)
        subprocess.run([rankc, "compile", path, "-o", out, "--emit", "lib"], check=True)
        # A process of its own per program (MPI starts once per process).
        child = subprocess.run([sys.executable, __file__, "--run", out, str(steps)],
                             check=True, capture_output=True, text=True)
        ps = json.loads(child.stdout)
        got = -np.diff(ps)
        err = np.abs(got - np.array(want)).max()
        ok = err <= 1e-11 * BASE
        print(f"{'PASS' if ok else 'FAIL'}: {name}: max |lr - torch's| {err:.3g}")
        passed, failed = passed + ok, failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
