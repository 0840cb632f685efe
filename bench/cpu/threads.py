#!/usr/bin/env python3
"""rankc compile --threads N against PyTorch on N threads: the exported
training steps of bench/cpu/models.py (one rank), measured the same way
(warm steps: the median `compute` of the last S of 2S steps; PyTorch the
median of S steps after 2S, torch.set_num_threads(N)), for each N.

    /usr/bin/python3 bench/cpu/threads.py prepare RANKC WORK N...
        here: exports each step once, compiles it with --threads N for
        each N, writes its inputs, and copies the OpenMP runtime and BLIS
        that the programs open into WORK/lib (the GPU machine has neither).
    python3 bench/cpu/threads.py run WORK [STEPS]
        where it is to run (MPICH from scripts/device-env.sh on the GPU
        machine): prints a table per step, speedups against 1 thread.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402  (its MODELS, export_torch and torch_step)


def prepare(rankc, work, counts):
    os.makedirs(os.path.join(work, "lib"), exist_ok=True)
    for lib in ("/usr/lib/x86_64-linux-gnu/libomp.so.5",
                "/usr/lib/x86_64-linux-gnu/libblis.so.4"):
        shutil.copy(os.path.realpath(lib), os.path.join(work, "lib", os.path.basename(lib)))
    for name, (kind, opt, _) in models.MODELS.items():
        torch.manual_seed(0)
        model, batch = models.export_torch.MODELS[kind]()
        doc = models.export_torch.export_step(model, (batch,), lambda y: (y * y).mean(),
                                              world_size=1, optimizer=opt)
        dag = os.path.join(work, name + ".json")
        json.dump(doc, open(dag, "w"))
        # torch_step reads the weights from WORK/NAME/inputs.
        models.export_torch.save_inputs(os.path.join(work, name, "inputs"), model, [batch])
        for n in counts:
            subprocess.run([rankc, "compile", dag, "-o", os.path.join(work, f"{name}-t{n}"),
                            "--threads", str(n)], check=True)
    json.dump({"threads": counts}, open(os.path.join(work, "threads.json"), "w"))


def run(work, steps):
    counts = json.load(open(os.path.join(work, "threads.json")))["threads"]
    lib = os.path.join(work, "lib")
    env = dict(os.environ, LD_LIBRARY_PATH=lib + ":" + os.environ.get("LD_LIBRARY_PATH", ""))
    print(f"cores: {os.cpu_count()}, torch {torch.__version__}")
    for name, (_, _, title) in models.MODELS.items():
        print(f"\n{title}\n")
        print("| threads | rankc step ms | rankc speedup | torch step ms | torch speedup "
              "| rankc/torch | loss rankc vs torch |")
        print("|---|---|---|---|---|---|---|")
        base = {}
        for n in counts:
            out = os.path.join(work, f"{name}-t{n}")
            stats = os.path.join(out, "stats.json")
            subprocess.run([os.path.join(out, "launch"), "--inputs",
                            os.path.join(work, name, "inputs"), "--outputs",
                            os.path.join(out, "res"), "--steps", str(2 * steps),
                            "--stats", stats], check=True, stdout=subprocess.DEVNULL, env=env)
            per_step = json.load(open(stats))["ranks"][0]["per_step"][steps:]
            r = statistics.median(s["compute"] for s in per_step)
            loss = float(np.load(os.path.join(out, "res", "rank0", "loss.npy")))
            torch.set_num_threads(n)
            t = models.torch_step(work, name, steps)
            base.setdefault("r", r)
            base.setdefault("t", t["step_s"])
            print(f"| {n} | {r * 1e3:.2f} | {base['r'] / r:.2f} | {t['step_s'] * 1e3:.2f} "
                  f"| {base['t'] / t['step_s']:.2f} | {r / t['step_s']:.2f} "
                  f"| {loss:.6g} vs {t['loss']:.6g} |", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3], [int(n) for n in sys.argv[4:]])
    else:
        run(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 5)
