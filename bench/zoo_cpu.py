#!/usr/bin/env python3
"""Real models on the CPU (issue 13's benchmark): torchvision's resnet18 at
32x32 (batch 32) and the zoo's GPT block, exported by scripts/export_torch.py,
compiled by rankc (--target cpu, one rank), against the same step in
PyTorch on one thread, same weights, batch and targets, same machine, same
run. Prints export and compile times, and rankc's step beside torch's,
both warm: rankc's the median `compute` of the last S steps of `launch
--steps 2S --stats` (the first steps fault in the step arenas' pages),
torch's the median of S forward+backward steps after S warm-up steps.

    /usr/bin/python3 bench/zoo_cpu.py RANKC WORKDIR [STEPS]"""
import json
import os
import statistics
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

CASES = {
    "resnet18 32x32 batch 32": (zoo.resnet18, lambda: (torch.randn(32, 3, 32, 32),),
                                lambda: (torch.randint(0, 10, (32,)),),
                                lambda y, t: F.cross_entropy(y, t)),
    "GPT block (vocab 23, T 6, d 8) batch 2": zoo.ZOO["gpt-tied-ce"],
}


def main():
    rankc, work = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 3
    torch.set_num_threads(1)
    rows = []
    for title, (make, batch, target, loss_fn) in CASES.items():
        torch.manual_seed(0)
        model = make()
        model.train()
        x, t = batch(), target()
        start = {k: v.clone() for k, v in model.state_dict().items()}
        d = os.path.join(work, title.split()[0])
        os.makedirs(d, exist_ok=True)
        t0 = time.perf_counter()
        doc = export_torch.export_step(model, x, loss_fn, targets=t, world_size=1)
        export_s = time.perf_counter() - t0
        model.load_state_dict(start)
        json.dump(doc, open(os.path.join(d, "step.json"), "w"))
        t0 = time.perf_counter()
        subprocess.run([rankc, "compile", os.path.join(d, "step.json"), "-o",
                        os.path.join(d, "exe")], check=True)
        compile_s = time.perf_counter() - t0
        export_torch.save_inputs(os.path.join(d, "in"), model, [x], [t])
        stats = os.path.join(d, "stats.json")
        subprocess.run([os.path.join(d, "exe", "launch"), "--inputs", os.path.join(d, "in"),
                        "--outputs", os.path.join(d, "res"), "--steps", str(2 * steps),
                        "--stats", stats], check=True, stdout=subprocess.DEVNULL)
        per_step = json.load(open(stats))["ranks"][0]["per_step"][steps:]
        rankc_s = statistics.median(s["compute"] for s in per_step)
        times = []
        for i in range(2 * steps):
            model.zero_grad()
            t0 = time.perf_counter()
            loss_fn(model(*x), *t).backward()
            times.append(time.perf_counter() - t0)
        torch_s = statistics.median(times[steps:])
        rows.append((title, len(doc["programs"][0]["nodes"]), export_s, compile_s, rankc_s, torch_s))
        print(f"{title}: done", file=sys.stderr, flush=True)
    print("| model (CPU, 1 rank / 1 thread) | nodes | export s | rankc compile s "
          "| rankc step ms | torch step ms | rankc/torch |")
    print("|---|---|---|---|---|---|---|")
    for title, nodes, e, c, r, t in rows:
        print(f"| {title} | {nodes} | {e:.1f} | {c:.1f} | {r * 1e3:.2f} | {t * 1e3:.2f} "
              f"| {r / t:.2f} |")


if __name__ == "__main__":
    main()
