#!/usr/bin/env python3
"""A large grid-peer document for `rankc check` timing (issue 36).

    gen_grid_peers.py OUT.json GRID ROUNDS      e.g. 2048,2048 25000

ROUNDS steps of examples/heat2d's heat equation unrolled into one SPMD
program on the process grid GRID (43 nodes and 4 halo exchanges with grid
peers and fill a round): 25,000 rounds are 10^6 nodes."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                "examples", "heat2d"))
import make_heat  # noqa: E402


def main(out, grid, rounds):
    grid = [int(x) for x in grid.split(",")]
    one = make_heat.generate(grid, [4] * len(grid))
    prog = one["programs"][0]
    nodes = []
    for k in range(int(rounds)):
        rename = lambda i: i if (k == 0 and i in ("u0", "source_mask")) else (
            "source_mask" if i == "source_mask" else
            f"u_new.{k - 1}" if i == "u0" else f"{i}.{k}")
        for n in prog["nodes"]:
            if k > 0 and n["id"] in ("u0", "source_mask"):
                continue
            m = dict(n, id=rename(n["id"]))
            if "args" in m:
                m["args"] = [rename(a) for a in m["args"]]
            if "tag" in m:
                m["tag"] = f"{m['tag']}.{k}"
            nodes.append(m)
    last = int(rounds) - 1
    doc = dict(one, programs=[{"ranks": "all", "nodes": nodes,
                               "outputs": {"u": f"u_new.{last}",
                                           "total": f"total_heat.{last}"}}])
    with open(out, "w") as f:
        json.dump(doc, f)
    print(f"{out}: {len(nodes)} nodes, world {doc['world_size']}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
