#!/usr/bin/env python3
"""Two builds of the same prepared steps, timed alternately on one GPU: the
A/B of a compiler change (before and after) in one run.

    bench/gpu/ab_steps.py ROUNDS WORK_A WORK_B NAME...   on the GPU machine
                                                        (. scripts/device-env.sh)

WORK_A and WORK_B are two `autocast_speed.py prepare` outputs (one per
rankc build; AUTOCAST=0 for f32 steps). Each round runs A then B: `launch
--steps 40 --stats`, median step of the last 20 (host wall time of the
whole step, CUDA graphs as the build makes them). Prints per name each
round's two medians and the median of B / A over the rounds."""
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import memory  # noqa: E402
from autocast_speed import rankc_step_s  # noqa: E402


def step_ms(d):
    return rankc_step_s(d) * 1e3


def main(rounds, a, b, names):
    from rankc.datasets import save_inputs
    for name in names:
        m, x, t, _, _ = memory.setup(name)
        for work in (a, b):
            save_inputs(os.path.join(work, name, "in"), m, [(x,)],
                        targets=[(t,)] if t is not None else None)
        ratios = []
        for i in range(rounds):
            ta, tb = step_ms(os.path.join(a, name)), step_ms(os.path.join(b, name))
            ratios.append(tb / ta)
            print(f"{name} round {i + 1}: A {ta:.3f} ms, B {tb:.3f} ms, B/A {tb / ta:.3f}",
                  flush=True)
        print(f"{name}: median B/A over {rounds} rounds {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:])
