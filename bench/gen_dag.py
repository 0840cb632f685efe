#!/usr/bin/env python3
"""Generates a large, valid, deadlock-free MPMD rankc-dag document.

usage: gen_dag.py NODES RANKS OUT.json [--seed S] [--bounded]

Each rank's program is a stream of small elementwise layers over a few live
values; every LAYER nodes, it sends one value to the next rank and receives
one from the previous rank (a ring), so messages and computation interleave
through the whole program, as in a pipelined stencil. --bounded leaves out
exp and mul, whose chains overflow to inf and NaN after a few hundred
nodes: the outputs stay finite, for tests that compare them with NumPy."""
import json
import random
import sys


def program(rank, ranks, count, rng, bounded=False):
    nodes = [{"id": "in0", "op": "input", "shape": [16], "dtype": "f32"},
             {"id": "in1", "op": "input", "shape": [16], "dtype": "f32"}]
    live = ["in0", "in1"]
    step = 0
    ops = ["add", "sub", "maximum"] if bounded else ["add", "mul", "sub", "maximum"]
    unary = ["neg", "tanh", "abs"] if bounded else ["neg", "exp", "tanh", "abs"]
    while len(nodes) < count:
        step += 1
        nid = f"n{step}"
        if ranks > 1 and step % 50 == 0:
            # A ring exchange: send to the next rank, receive from the previous.
            nodes.append({"id": f"s{step}", "op": "send", "args": [live[-1]],
                          "dest": (rank + 1) % ranks, "tag": step})
            nodes.append({"id": nid, "op": "recv", "src": (rank - 1) % ranks,
                          "tag": step, "shape": [16], "dtype": "f32"})
        elif rng.random() < 0.3:
            nodes.append({"id": nid, "op": rng.choice(unary), "args": [rng.choice(live)]})
        else:
            nodes.append({"id": nid, "op": rng.choice(ops),
                          "args": [rng.choice(live), rng.choice(live)]})
        live.append(nid)
        if len(live) > 8:
            live.pop(0)
    return {"ranks": [rank], "nodes": nodes, "outputs": {"out": live[-1]}}


def main():
    count, ranks, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rest = sys.argv[4:]
    seed = int(rest[rest.index("--seed") + 1]) if "--seed" in rest else 0
    bounded = "--bounded" in rest
    rng = random.Random(seed)
    per = max(3, count // ranks)
    doc = {"format": "rankc-dag", "version": 1, "world_size": ranks,
           "programs": [program(r, ranks, per, rng, bounded) for r in range(ranks)]}
    with open(out, "w") as f:
        json.dump(doc, f, separators=(",", ":"))


if __name__ == "__main__":
    main()
