#!/usr/bin/env python3
"""The heat equation on a non-periodic process grid: one SPMD program.

    make_heat.py OUT.json [--grid 2,2] [--block 16,16] [--inputs IN]

Every rank holds a block of the field (`u`, carried from step to step as
`state`) and trades its edges with the ranks beside it on the process grid
through grid peers (dag-format.md v3): a rank at the domain's edge has no
neighbour there, and its receive is the `fill` value 0 (a cold,
Dirichlet boundary). A source at the domain's centre pulses with the step
number (the `step` leaf): amplitude * max(sin(omega * step), 0). `total`
is the heat in the whole domain (an allreduce), a 0-d output that
`launch --log-every` prints. Any number of axes: --grid 2,2,2 --block 8,8,8
is the 3-D equation.

With --inputs IN it also writes the initial field (zeros) and each rank's
source mask to IN/rank<r>/, so that

    rankc compile heat.json -o heat && heat/launch --inputs IN --steps 400 \\
        --save-every 20 --outputs res

runs the example; plot.py draws res/step<k>/ as pictures."""
import itertools
import json
import os
import sys

import numpy as np


def generate(grid, block, kappa=0.1, amplitude=1.0, omega=0.05):
    nodes = []
    d = len(grid)

    def node(**kw):
        nodes.append(kw)
        return kw["id"]

    u = node(id="u0", op="input", shape=block, dtype="f64")
    mask = node(id="source_mask", op="input", shape=block, dtype="f64")
    # The edge slabs each neighbour needs, and the halos that come back.
    neighbours = []
    for axis in range(d):
        for side, shift in (("lo", -1), ("hi", 1)):
            begin = [0] * d
            end = list(block)
            if shift < 0:
                end[axis] = 1
            else:
                begin[axis] = block[axis] - 1
            edge = node(id=f"edge_{axis}_{side}", op="slice", args=[u], begin=begin,
                        end=end, step=[1] * d)
            to = [0] * d
            to[axis] = shift
            node(id=f"send_{axis}_{side}", op="send", args=[edge],
                 dest={"grid": grid, "shift": to}, tag=f"{axis}{side}")
            halo_shape = list(block)
            halo_shape[axis] = 1
            # The halo on this side comes from the neighbour there, which
            # sent its opposite edge (tag of the other side).
            other = "hi" if side == "lo" else "lo"
            halo = node(id=f"halo_{axis}_{side}", op="recv",
                        src={"grid": grid, "shift": to}, tag=f"{axis}{other}",
                        shape=halo_shape, dtype="f64", fill=0.0)
            neighbours.append((axis, shift, halo))
    # Laplacian: each neighbour field is the block shifted by one, the halo
    # filling the slot that leaves it.
    terms = []
    for axis, shift, halo in neighbours:
        begin, end = [0] * d, list(block)
        if shift < 0:
            end[axis] = block[axis] - 1
            inner = node(id=f"inner_{axis}_lo", op="slice", args=[u], begin=begin,
                         end=end, step=[1] * d)
            parts = [halo, inner]
        else:
            begin[axis] = 1
            inner = node(id=f"inner_{axis}_hi", op="slice", args=[u], begin=begin,
                         end=end, step=[1] * d)
            parts = [inner, halo]
        terms.append(node(id=f"near_{axis}_{'lo' if shift < 0 else 'hi'}",
                          op="concat", args=parts, axis=axis))
    total = terms[0]
    for i, t in enumerate(terms[1:]):
        total = node(id=f"nsum{i}", op="add", args=[total, t])
    k = node(id="kappa", op="constant", value=kappa, dtype="f64")
    two_d = node(id="two_d", op="constant", value=2.0 * d, dtype="f64")
    centre = node(id="centre", op="mul", args=[two_d, u])
    lap = node(id="laplacian", op="sub", args=[total, centre])
    flux = node(id="flux", op="mul", args=[k, lap])
    t = node(id="t", op="step", dtype="f64")
    w = node(id="omega", op="constant", value=omega, dtype="f64")
    phase = node(id="phase", op="sin", args=[node(id="wt", op="mul", args=[w, t])])
    zero = node(id="zero", op="constant", value=0.0, dtype="f64")
    amp = node(id="amplitude", op="constant", value=amplitude, dtype="f64")
    pulse = node(id="pulse", op="mul", args=[amp, node(id="on", op="maximum", args=[phase, zero])])
    source = node(id="source", op="mul", args=[pulse, mask])
    new = node(id="u_new", op="add", args=[node(id="u_flux", op="add", args=[u, flux]), source])
    local = node(id="local_heat", op="sum", args=[new])
    node(id="total_heat", op="allreduce", args=[local], reduce="sum", tag="total")
    world = int(np.prod(grid))
    return {"format": "rankc-dag", "version": 3, "world_size": world,
            "programs": [{"ranks": "all", "nodes": nodes,
                          "outputs": {"u": "u_new", "total": "total_heat"},
                          "state": {"u0": "u"}}]}


def write_inputs(folder, grid, block):
    """u0 = 0 everywhere; the source mask is 1 at the domain's centre."""
    shape = [g * b for g, b in zip(grid, block)]
    centre = [s // 2 for s in shape]
    for rank, coords in enumerate(itertools.product(*[range(g) for g in grid])):
        mask = np.zeros(block)
        local = [c - q * b for c, q, b in zip(centre, coords, block)]
        if all(0 <= x < b for x, b in zip(local, block)):
            mask[tuple(local)] = 1.0
        os.makedirs(os.path.join(folder, f"rank{rank}"), exist_ok=True)
        np.save(os.path.join(folder, f"rank{rank}", "u0.npy"), np.zeros(block))
        np.save(os.path.join(folder, f"rank{rank}", "source_mask.npy"), mask)


def main(argv):
    out, grid, block, inputs = None, [2, 2], [16, 16], None
    args = iter(argv)
    for a in args:
        if a == "--grid":
            grid = [int(x) for x in next(args).split(",")]
        elif a == "--block":
            block = [int(x) for x in next(args).split(",")]
        elif a == "--inputs":
            inputs = next(args)
        else:
            out = a
    if out is None or len(grid) != len(block):
        sys.exit(__doc__)
    with open(out, "w") as f:
        json.dump(generate(grid, block), f, indent=1)
    if inputs:
        write_inputs(inputs, grid, block)


if __name__ == "__main__":
    main(sys.argv[1:])
