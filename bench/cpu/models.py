#!/usr/bin/env python3
"""Training steps on one CPU core: rankc's compiled step (--target cpu, one
rank) against the same step in PyTorch on one thread, same model, inputs
and optimizer, same machine, same run (issue 17's benchmark).

    /usr/bin/python3 bench/cpu/models.py RANKC WORK [STEPS] [NAME...]

A step is forward, backward and the optimizer's update of every parameter
(the exported DAG's version 2 step). Both sides are measured warm: rankc
runs `launch --steps 2S --stats` and its figure is the median `compute`
(the step's own work; I/O and MPI excluded) of the last S steps (the first
ones fault in the step arenas' pages); PyTorch's is the median of S steps
(zero_grad, loss, backward, opt.step) after S warm-up steps,
torch.set_num_threads(1). The losses after S steps are printed
as a check that both trained the same thing.

    /usr/bin/python3 bench/cpu/models.py RANKC WORK STEPS --threads N [NAME...]

compiles with `rankc compile --threads N` and gives PyTorch N threads
(torch.set_num_threads(N)): one rank using N cores, both sides."""
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
import export_torch  # noqa: E402

# name: (export_torch model, optimizer, title)
MODELS = {
    "block": ("transformer-large", {"kind": "adam", "lr": 1e-3},
              "TransformerBlock(256, 1024) [4, 64, 256] Adam"),
    "mlp": ("mlp-large", {"kind": "sgd", "lr": 0.01, "momentum": 0.9},
            "MLP 512-1024x4-16 batch 64 SGD+momentum"),
}


THREADS = 1


def rankc_step(rankc, work, name, steps):
    kind, opt, _ = MODELS[name]
    torch.manual_seed(0)
    model, batch = export_torch.MODELS[kind]()
    doc = export_torch.export_step(model, (batch,), lambda y: (y * y).mean(),
                                   world_size=1, optimizer=opt)
    dag, out = os.path.join(work, name + ".json"), os.path.join(work, name)
    json.dump(doc, open(dag, "w"))
    t = time.perf_counter()
    subprocess.run([rankc, "compile", dag, "-o", out, "--threads", str(THREADS)],
                   check=True)
    compile_s = time.perf_counter() - t
    export_torch.save_inputs(os.path.join(out, "inputs"), model, [batch])
    stats = os.path.join(out, "stats.json")
    subprocess.run([os.path.join(out, "launch"), "--inputs", os.path.join(out, "inputs"),
                    "--outputs", os.path.join(out, "res"), "--steps", str(2 * steps),
                    "--stats", stats], check=True, stdout=subprocess.DEVNULL)
    per_step = json.load(open(stats))["ranks"][0]["per_step"][steps:]
    loss = float(np.load(os.path.join(out, "res", "rank0", "loss.npy")))
    return {"step_s": statistics.median(s["compute"] for s in per_step), "loss": loss, "compile_s": compile_s,
            "nodes": len(doc["programs"][0]["nodes"])}


def torch_step(work, name, steps):
    kind, opt, _ = MODELS[name]
    model, _ = export_torch.MODELS[kind]()
    inputs = os.path.join(work, name, "inputs", "rank0")
    with torch.no_grad():
        for pname, p in model.named_parameters():
            p.copy_(torch.from_numpy(np.load(os.path.join(inputs, pname + ".npy"))))
    x = torch.from_numpy(np.load(os.path.join(inputs, "input0.npy")))
    settings = {k: v for k, v in opt.items() if k != "kind"}
    optimizer = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}[opt["kind"]](
        model.parameters(), **settings)

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = (model(x) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss

    # The loss check: as many steps from the same start as rankc's run.
    for _ in range(2 * steps):
        loss = step()
    final = float(loss.detach())
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    # (Timed steps after the loss's: their figure is the same warm step.)
    return {"step_s": statistics.median(times), "loss": final}


def main():
    global THREADS
    args = sys.argv[1:]
    if "--threads" in args:
        i = args.index("--threads")
        THREADS = int(args[i + 1])
        del args[i:i + 2]
    rankc, work = args[0], args[1]
    steps = int(args[2]) if len(args) > 2 else 5
    only = args[3:]
    torch.set_num_threads(THREADS)
    os.makedirs(work, exist_ok=True)
    each = "1 thread" if THREADS == 1 else f"{THREADS} threads"
    print(f"| step (CPU, 1 rank / {each}) | nodes | rankc compile s | rankc step ms "
          "| torch step ms | rankc/torch | loss rankc vs torch |")
    print("|---|---|---|---|---|---|---|")
    for name, (_, _, title) in MODELS.items():
        if only and name not in only:
            continue
        r = rankc_step(rankc, work, name, steps)
        t = torch_step(work, name, steps)
        print(f"| {title} | {r['nodes']} | {r['compile_s']:.1f} | {r['step_s'] * 1e3:.2f} "
              f"| {t['step_s'] * 1e3:.2f} | {r['step_s'] / t['step_s']:.2f} "
              f"| {r['loss']:.6g} vs {t['loss']:.6g} |", flush=True)


if __name__ == "__main__":
    main()
