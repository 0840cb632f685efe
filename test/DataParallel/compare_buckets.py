#!/usr/bin/env python3
"""rankc's gradient buckets against PyTorch DDP's own assignment.

    compare_buckets.py RANKC WORKDIR

For the models of PyTorch's DDPOptimizer tests, writes a data-parallel DAG
(parameters in registration order, gradients produced in backward order),
compiles it with `--emit plan` in both bucket orders, and compares plan.json's
buckets with torch.distributed._compute_bucket_assignment_by_size:
  ddp-initial: registration order, sorted by lowest index, reversed (DDP's
               first iteration);
  ready:       the gradients' production order as tensor_indices (DDP's
               rebuilt buckets).
Prints one line per case and "N passed, M failed"."""
import json
import os
import subprocess
import sys

import torch
import torch.distributed as dist

MIB = 1024 * 1024


def linear(name, i, o, dtype="f32"):
    return [(f"{name}.weight", [o, i], dtype), (f"{name}.bias", [o], dtype)]


MODELS = {
    # DDPOptimizer's ToyModel at DDP's default 25 MiB cap.
    "toy": (linear("net1", 10, 5000) + linear("net2", 5000, 5000) +
            linear("net3", 5000, 5000) + linear("net4", 5000, 5),
            25, 1, []),
    # 512x512 custom layers at 1 MiB.
    "layers512": (sum((linear(f"l{i}", 512, 512) for i in range(6)), []), 1, 1, []),
    # Ignored parameters are left out.
    "ignored": (sum((linear(f"l{i}", 512, 512) for i in range(4)), []), 1, 1,
                ["l1.weight", "l2.bias"]),
    # Mixed f32/f64 parameters: one list of limits per dtype.
    "mixed": (linear("a", 300, 300) + linear("b", 300, 300, "f64") +
              linear("c", 400, 300) + linear("d", 300, 200, "f64") +
              linear("e", 200, 100), 0.5, 0.25, []),
}
TORCH_DTYPE = {"f32": torch.float32, "f64": torch.float64}


def document(params, cap, first, ignore, order):
    nodes = [{"id": n, "op": "param", "shape": s, "dtype": d} for n, s, d in params]
    # Backward produces gradients in reverse registration order.
    for n, s, d in reversed(params):
        nodes.append({"id": "grad." + n, "op": "neg", "args": [n]})
    outputs = {"g." + n: {"node": "grad." + n, "grad_of": n} for n, _, _ in params}
    return {"format": "rankc-dag", "version": 1, "world_size": 2,
            "data_parallel": {"bucket_cap_mb": cap, "first_bucket_cap_mb": first,
                              "order": order, "ignore": ignore},
            "programs": [{"ranks": "all", "nodes": nodes, "outputs": outputs}]}


def torch_buckets(params, cap, first, ignore, order):
    kept = [(i, p) for i, p in enumerate(params) if p[0] not in ignore]
    limits = [int(first * MIB), int(cap * MIB)]
    if order == "ddp-initial":
        tensors = [torch.empty(0, dtype=TORCH_DTYPE[d]).new_empty(s) for _, (n, s, d) in kept]
        buckets, _ = dist._compute_bucket_assignment_by_size(tensors, limits, [False] * len(tensors))
        buckets = list(reversed(buckets))
        return [[kept[j][1][0] for j in b] for b in buckets]
    # DDP never registers ignored parameters: indices are positions among
    # the kept ones.
    ready = list(reversed(range(len(kept))))
    tensors = [torch.empty(0, dtype=TORCH_DTYPE[kept[j][1][2]]).new_empty(kept[j][1][1]) for j in ready]
    buckets, _ = dist._compute_bucket_assignment_by_size(tensors, limits, [False] * len(kept), ready)
    return [[kept[j][1][0] for j in b] for b in buckets]


def main():
    rankc, work = sys.argv[1], sys.argv[2]
    os.makedirs(work, exist_ok=True)
    passed = failed = 0
    for name, (params, cap, first, ignore) in MODELS.items():
        for order in ("ddp-initial", "ready"):
            path = os.path.join(work, f"{name}-{order}.json")
            json.dump(document(params, cap, first, ignore, order), open(path, "w"))
            p = subprocess.run([rankc, "compile", path, "--emit", "plan", "-o", "-"],
                               capture_output=True, text=True)
            if p.returncode != 0:
                print(f"FAIL: {name} {order}: {p.stderr.strip()}")
                failed += 1
                continue
            ours = [b["params"] for b in json.loads(p.stdout)["buckets"]]
            want = torch_buckets(params, cap, first, ignore, order)
            if ours == want:
                print(f"PASS: {name} {order}: {len(ours)} buckets")
                passed += 1
            else:
                print(f"FAIL: {name} {order}:\n  rankc {ours}\n  torch {want}")
                failed += 1
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
