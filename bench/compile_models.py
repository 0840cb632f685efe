#!/usr/bin/env python3
"""Compile time of exported models (issue 15): every model of the zoo
(test/DataParallel/zoo.py, as its tests export them: 2 ranks, small
buckets, SGD), torchvision's resnet18 at 32x32 batch 32 (bench/zoo_cpu.py's),
and the transformer step at d=256 and d=1024 (bench/gpu/models.py's, Adam),
each compiled to executables for both targets. The issue asks for no model
above 10 s, and for the d=1024 step no slower to compile than the d=256 one
(compile time independent of tensor sizes).

    /usr/bin/python3 bench/compile_models.py RANKC WORK [NAME...]"""
import json
import os
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
sys.path.insert(0, os.path.join(HERE, "..", "test", "DataParallel"))
import export_torch  # noqa: E402
import zoo  # noqa: E402


def zoo_doc(name):
    model, batches, targets, loss_fn, _ = zoo.setup(name, 2)
    return export_torch.export_step(model, batches[0], loss_fn, targets=targets[0],
                                    world_size=2, bucket_cap_mb=0.0005,
                                    first_bucket_cap_mb=0.0002,
                                    optimizer={"kind": "sgd", "lr": 0.01})


def resnet18_doc():
    torch.manual_seed(0)
    model = zoo.resnet18()
    model.train()
    return export_torch.export_step(model, (torch.randn(32, 3, 32, 32),),
                                    lambda y, t: F.cross_entropy(y, t),
                                    targets=(torch.randint(0, 10, (32,)),), world_size=1)


def block_doc(kind):
    torch.manual_seed(0)
    model, batch = export_torch.MODELS[kind]()
    return export_torch.export_step(model, (batch,), lambda y: (y * y).mean(),
                                    world_size=1, optimizer={"kind": "adam", "lr": 1e-4})


CASES = {name: (lambda n=name: zoo_doc(n)) for name in zoo.ZOO}
CASES["resnet18 32x32 batch 32"] = resnet18_doc
CASES["TransformerBlock(256, 1024) [4, 64, 256] Adam"] = lambda: block_doc("transformer-large")
CASES["TransformerBlock(1024, 4096) [8, 256, 1024] Adam"] = lambda: block_doc("transformer-xl")


def main():
    rankc, work = sys.argv[1], sys.argv[2]
    only = sys.argv[3:]
    os.makedirs(work, exist_ok=True)
    print("| model | nodes | cpu s | cuda s |")
    print("|---|---|---|---|")
    for title, make in CASES.items():
        if only and title.split()[0] not in only:
            continue
        doc = make()
        name = title.split()[0].replace("(", "-").replace(",", "").replace(")", "")
        dag = os.path.join(work, name + ".json")
        json.dump(doc, open(dag, "w"))
        secs = []
        for target in ("cpu", "cuda"):
            t = time.perf_counter()
            subprocess.run([rankc, "compile", dag, "--target", target,
                            "-o", os.path.join(work, f"{name}.{target}")], check=True)
            secs.append(time.perf_counter() - t)
        nodes = sum(len(p["nodes"]) for p in doc["programs"])
        print(f"| {title} | {nodes} | {secs[0]:.2f} | {secs[1]:.2f} |", flush=True)


if __name__ == "__main__":
    main()
