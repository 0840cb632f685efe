#!/usr/bin/env python3
"""Documents of other shapes than gen_dag.py's, for compile-time scaling
(issue 42).

    gen_shapes.py SHAPE NODES RANKS OUT.json

SHAPE:
  halo  an MPMD ring of one long chain per rank of elementwise work on
        f64[16] (mul and add with the input), a halo message to the next
        rank and from the previous one every 20 nodes, the received value
        added in: the shape pytato's users build.
  wide  many short independent chains per rank (8 nodes each on f32[64],
        each ending in a send to the next rank and a receive from the
        previous one, the two summed into an output): a program of many
        small parts and many outputs."""
import json
import sys


def halo(per, rank, ranks):
    nodes = [{"id": "x", "op": "input", "shape": [16], "dtype": "f64"}]
    last, i = "x", 0
    while len(nodes) < per:
        if i % 20 == 19:
            nodes += [{"id": f"s{i}", "op": "send", "args": [last], "dest": (rank + 1) % ranks,
                       "tag": i},
                      {"id": f"r{i}", "op": "recv", "src": (rank - 1) % ranks, "tag": i,
                       "shape": [16], "dtype": "f64"},
                      {"id": f"h{i}", "op": "add", "args": [last, f"r{i}"]}]
            last = f"h{i}"
        else:
            nodes.append({"id": f"n{i}", "op": "add" if i % 3 == 0 else "mul",
                          "args": [last, "x"]})
            last = f"n{i}"
        i += 1
    return nodes, {"out": last}


def wide(per, rank, ranks):
    nodes = [{"id": "x", "op": "input", "shape": [64], "dtype": "f32"}]
    outputs, c = {}, 0
    while len(nodes) < per:
        last = "x"
        for k in range(5):
            nodes.append({"id": f"c{c}_{k}", "op": "mul" if k % 2 else "add",
                          "args": [last, "x"]})
            last = f"c{c}_{k}"
        nodes += [{"id": f"s{c}", "op": "send", "args": [last], "dest": (rank + 1) % ranks,
                   "tag": c},
                  {"id": f"r{c}", "op": "recv", "src": (rank - 1) % ranks, "tag": c,
                   "shape": [64], "dtype": "f32"},
                  {"id": f"o{c}", "op": "add", "args": [last, f"r{c}"]}]
        outputs[f"o{c}"] = f"o{c}"
        c += 1
    return nodes, outputs


def main():
    shape, n, ranks, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    make = {"halo": halo, "wide": wide}[shape]
    programs = []
    for r in range(ranks):
        nodes, outputs = make(n // ranks, r, ranks)
        programs.append({"ranks": [r], "nodes": nodes, "outputs": outputs})
    json.dump({"format": "rankc-dag", "version": 1, "world_size": ranks,
               "programs": programs}, open(out, "w"))
    print(sum(len(p["nodes"]) for p in programs))


if __name__ == "__main__":
    main()
