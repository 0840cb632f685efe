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
        small parts and many outputs.
  step  a data-parallel training step (one SPMD program for all ranks, a
        version 2 document): a deep narrow tanh network on an 8x16 batch,
        forward, backward with one allreduce (mean) per layer's weight
        gradient, the update, the weights carried in `state`: the shape
        of the exporter's steps, at any depth."""
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


def step(per, rank, ranks):
    """One program for every rank: 9 nodes a layer (2 forward, 7 back)."""
    nodes = [{"id": "x", "op": "input", "shape": [8, 16], "dtype": "f32"}]
    layers = max(1, (per - 1) // 10)
    for i in range(layers):
        nodes.append({"id": f"w{i}", "op": "input", "shape": [16, 16], "dtype": "f32"})
    h = ["x"]
    for i in range(layers):
        nodes += [{"id": f"a{i}", "op": "matmul", "args": [h[-1], f"w{i}"]},
                  {"id": f"h{i}", "op": "tanh", "args": [f"a{i}"]}]
        h.append(f"h{i}")
    g, outputs, state = h[-1], {}, {}
    for i in reversed(range(layers)):
        nodes += [{"id": f"d{i}", "op": "mul", "args": [g, h[i + 1]]},
                  {"id": f"t{i}", "op": "transpose", "args": [h[i]], "perm": [1, 0]},
                  {"id": f"gw{i}", "op": "matmul", "args": [f"t{i}", f"d{i}"]},
                  {"id": f"r{i}", "op": "allreduce", "args": [f"gw{i}"], "reduce": "mean",
                   "tag": i},
                  {"id": f"n{i}", "op": "sub", "args": [f"w{i}", f"r{i}"]}]
        if i > 0:
            nodes += [{"id": f"wt{i}", "op": "transpose", "args": [f"w{i}"], "perm": [1, 0]},
                      {"id": f"g{i}", "op": "matmul", "args": [f"d{i}", f"wt{i}"]}]
            g = f"g{i}"
        outputs[f"w{i}.next"] = f"n{i}"
        state[f"w{i}"] = f"w{i}.next"
    return nodes, outputs, state


def main():
    shape, n, ranks, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    if shape == "step":
        nodes, outputs, state = step(n // ranks, 0, ranks)
        programs = [{"ranks": list(range(ranks)), "nodes": nodes, "outputs": outputs,
                     "state": state}]
        doc = {"format": "rankc-dag", "version": 2, "world_size": ranks,
               "programs": programs}
        print(len(nodes) * ranks)  # (each rank runs them all)
    else:
        make = {"halo": halo, "wide": wide}[shape]
        programs = []
        for r in range(ranks):
            nodes, outputs = make(n // ranks, r, ranks)
            programs.append({"ranks": [r], "nodes": nodes, "outputs": outputs})
        doc = {"format": "rankc-dag", "version": 1, "world_size": ranks,
               "programs": programs}
        print(sum(len(p["nodes"]) for p in programs))
    json.dump(doc, open(out, "w"))


if __name__ == "__main__":
    main()
