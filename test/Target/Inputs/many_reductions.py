#!/usr/bin/env python3
"""usage: many_reductions.py N OUT.json

One program of N reductions sum(tanh(x * c_i), axis i % 2) over x of
128x256: N loop nests of real size, each optimized, and no two of which
merge (reductions), so that LLVM gets one module of a lot of optimized
code: rankc compile splits it into pieces (lib/Target/ObjectFile.cpp)."""
import json
import sys


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    nodes = [{"id": "x", "op": "input", "shape": [128, 256], "dtype": "f32"}]
    for i in range(n):
        nodes += [
            {"id": f"c{i}", "op": "constant", "value": 0.01 * (i + 1), "dtype": "f32"},
            {"id": f"m{i}", "op": "mul", "args": ["x", f"c{i}"]},
            {"id": f"t{i}", "op": "tanh", "args": [f"m{i}"]},
            {"id": f"s{i}", "op": "sum", "args": [f"t{i}"], "axes": [i % 2]},
        ]
    doc = {"format": "rankc-dag", "version": 1, "world_size": 1,
           "programs": [{"ranks": [0], "nodes": nodes,
                         "outputs": {f"s{i}": f"s{i}" for i in range(n)}}]}
    with open(out, "w") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    main()
