#!/usr/bin/env python3
"""DAGs of the GPU benchmark (bench/gpu/run.sh):
  chain.json   an elementwise chain over N float32 (8 ops: one fused kernel
               that reads x once and writes the result once);
  matmulM.json an MxM by MxM float32 matmul, for each M given.
    gen_dags.py OUTDIR N M..."""
import json
import os
import sys

out, n, sizes = sys.argv[1], int(sys.argv[2]), [int(m) for m in sys.argv[3:]]
os.makedirs(out, exist_ok=True)
nodes = [{"id": "x", "op": "input", "shape": [n], "dtype": "f32"},
         {"id": "two", "op": "constant", "value": 2.0, "dtype": "f32"},
         {"id": "half", "op": "constant", "value": 0.5, "dtype": "f32"}]
prev = "x"
for i, (op, other) in enumerate([("mul", "two"), ("add", "x"), ("maximum", "half"),
                                 ("mul", "half"), ("sub", "x"), ("tanh", None),
                                 ("add", "two"), ("mul", "x")]):
    nodes.append({"id": f"c{i}", "op": op, "args": [prev] + ([other] if other else [])})
    prev = f"c{i}"
json.dump({"world_size": 1, "programs": [{"ranks": [0], "nodes": nodes,
                                          "outputs": {"y": prev}}]},
          open(os.path.join(out, "chain.json"), "w"))
for m in sizes:
    json.dump({"world_size": 1, "programs": [{"ranks": [0], "nodes": [
        {"id": "a", "op": "input", "shape": [m, m], "dtype": "f32"},
        {"id": "b", "op": "input", "shape": [m, m], "dtype": "f32"},
        {"id": "c", "op": "matmul", "args": ["a", "b"]}], "outputs": {"c": "c"}}]},
        open(os.path.join(out, f"matmul{m}.json"), "w"))
