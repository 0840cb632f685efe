#!/usr/bin/env python3
"""Many steps in one process against a process per step (issue 10).

For each DAG: `launch --steps N` for N = 1, 10, 100, 1000 (wall clock of the
whole launch: MPI start-up, inputs read once, outputs written once), the
median step inside the process and the first step (launch --stats), and
the buffer and GPU memory after N steps. Process-per-step is what a loop of
N launches costs: N times the median wall clock of 5 one-step launches
(measured, then multiplied: 1000 real launches would take minutes). On
the CPU the training steps run up to 100 steps (they are slow there).

    bench/steps.py prepare RANKC WORK [--target cpu|cuda]   compiles (here)
    bench/steps.py run WORK [--steps 1,10,100,1000]          runs (anywhere)

The DAGs: the time-stepping stencil (bench/gen_overlap.py heat) on 2 ranks
and the exported MLP 512-1024x4-16 (batch 64) trained with SGD and
momentum on 1 rank. Prints a Markdown table."""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DAGS = {"heat": "heat 2x[1024,1024] f32, 2 ranks",
        "mlp": "MLP 512-1024x4-16 SGD step, 1 rank",
        "block": "TransformerBlock(256, 1024) Adam step, 1 rank"}


def prepare(rankc, work, target):
    sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
    import export_torch
    import torch
    os.makedirs(work, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(HERE, "gen_overlap.py"), "heat", "2", "1024",
                    "1024", "0", "f32", os.path.join(work, "heat.json")], check=True)
    for name, kind, opt in [("mlp", "mlp-large", {"kind": "sgd", "lr": 0.01, "momentum": 0.9}),
                            ("block", "transformer-large", {"kind": "adam", "lr": 1e-3})]:
        torch.manual_seed(0)
        model, batch = export_torch.MODELS[kind]()
        doc = export_torch.export_step(model, (batch,), lambda y: (y * y).mean(),
                                       world_size=1, optimizer=opt)
        json.dump(doc, open(os.path.join(work, name + ".json"), "w"))
    for name in DAGS:
        subprocess.run([rankc, "compile", os.path.join(work, name + ".json"), "-o",
                        os.path.join(work, name), "--target", target], check=True)
        os.remove(os.path.join(work, name + ".json"))
    open(os.path.join(work, "target"), "w").write(target)


def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def run(work, counts):
    target = open(os.path.join(work, "target")).read()
    print(f"| DAG ({target}) | steps | launch --steps N, s | first step, ms | median step, ms "
          "| N launches of 1 step, s | ratio | buffers, MB | GPU in use, MB |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, title in DAGS.items():
        if not os.path.isdir(os.path.join(work, name)):
            continue  # not prepared (or removed to save a run's time)
        launch = [os.path.join(work, name, "launch"), "--outputs", os.path.join(work, "res")]
        one = statistics.median(timed(launch) for _ in range(5))
        for n in counts:
            if target == "cpu" and name != "heat" and n > 100:
                continue  # scalar CPU code: ~0.1-0.5 s a step, 1000 steps take minutes
            stats = os.path.join(work, "stats.json")
            wall = timed(launch + ["--steps", str(n), "--stats", stats])
            ranks = json.load(open(stats))["ranks"]
            med = max(r["median"]["wall"] for r in ranks)
            first = max(r["per_step"][0]["wall"] for r in ranks)
            buffers = max(r["buffer_bytes"] for r in ranks) / 2**20
            device = max(r["device_used_bytes"] for r in ranks) / 2**20
            print(f"| {title} | {n} | {wall:.3f} | {first * 1e3:.2f} | {med * 1e3:.3f} | "
                  f"{one * n:.1f} | {one * n / wall:.1f}x | {buffers:.0f} | {device:.0f} |",
                  flush=True)


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "prepare":
        args = sys.argv[4:]
        prepare(sys.argv[2], sys.argv[3],
                args[args.index("--target") + 1] if "--target" in args else "cpu")
    elif len(sys.argv) >= 3 and sys.argv[1] == "run":
        args = sys.argv[3:]
        counts = args[args.index("--steps") + 1] if "--steps" in args else "1,10,100,1000"
        run(sys.argv[2], [int(x) for x in counts.split(",")])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
