#!/usr/bin/env python3
"""Training step time: rankc's compiled step (launch --steps, one process
per rank, the optimizer in the program) against PyTorch DDP over gloo on
the same model, batches, optimizer and machine, in the same run.

Both train STEPS steps on 2 ranks. rankc's step time is the slowest rank's
median step (launch --stats); DDP's is the median over steps of the
slowest rank's time for zero_grad + forward + backward + optimizer step.
torch runs one thread per process (2 processes on 2 cores), as each rankc
rank does.

    bench/train_vs_ddp.py RANKC WORKDIR [--steps 100] [--models mlp,transformer]

Prints a Markdown table."""
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import export_torch  # noqa: E402

LOSS = lambda y: (y * y).mean()  # noqa: E731
OPT = {"kind": "sgd", "lr": 0.01, "momentum": 0.9}


def ddp_worker(r, ranks, init, kind, steps, batches, out):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=init, rank=r, world_size=ranks)
    torch.manual_seed(0)
    model, _ = export_torch.MODELS[kind]()
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = torch.optim.SGD(model.parameters(), lr=OPT["lr"], momentum=OPT["momentum"])
    times = []
    for _ in range(steps):
        dist.barrier()
        t = time.perf_counter()
        opt.zero_grad()
        LOSS(ddp(batches[r])).backward()
        opt.step()
        times.append(time.perf_counter() - t)
    np.save(os.path.join(out, f"ddp{r}.npy"), np.array(times))
    dist.destroy_process_group()


def main():
    rankc, work = sys.argv[1], sys.argv[2]
    args = sys.argv[3:]
    steps = int(args[args.index("--steps") + 1]) if "--steps" in args else 100
    models = (args[args.index("--models") + 1] if "--models" in args
              else "mlp-large,transformer-large").split(",")
    ranks = 2
    os.makedirs(work, exist_ok=True)
    print(f"| model ({steps} steps, {ranks} ranks, SGD momentum) | rankc step, ms "
          "| DDP gloo step, ms | DDP / rankc |")
    print("|---|---|---|---|")
    for kind in models:
        torch.manual_seed(0)
        model, example = export_torch.MODELS[kind]()
        gen = torch.Generator().manual_seed(7)
        batches = [torch.randn(example.shape, generator=gen) for _ in range(ranks)]
        doc = export_torch.export_step(model, (batches[0],), LOSS, world_size=ranks,
                                       optimizer=OPT)
        path = os.path.join(work, kind + ".json")
        json.dump(doc, open(path, "w"))
        exe = os.path.join(work, kind)
        subprocess.run([rankc, "compile", path, "-o", exe], check=True)
        export_torch.save_inputs(os.path.join(work, kind + "-in"), model, batches)
        stats = os.path.join(work, kind + "-stats.json")
        subprocess.run([os.path.join(exe, "launch"), "--inputs", os.path.join(work, kind + "-in"),
                        "--outputs", os.path.join(work, "res"), "--steps", str(steps),
                        "--stats", stats], check=True, stdout=subprocess.DEVNULL)
        ours = max(r["median"]["wall"] for r in json.load(open(stats))["ranks"])
        # gloo meets at a file of its own: a port found free here can be
        # taken before rank 0 listens on it.
        init = "file://" + os.path.join(tempfile.mkdtemp(dir=work), "rendezvous")
        mp.spawn(ddp_worker, nprocs=ranks, join=True,
                 args=(ranks, init, kind, steps, batches, work))
        per = np.max([np.load(os.path.join(work, f"ddp{r}.npy")) for r in range(ranks)], axis=0)
        theirs = statistics.median(per)
        print(f"| {kind} | {ours * 1e3:.2f} | {theirs * 1e3:.2f} | {theirs / ours:.2f} |")


if __name__ == "__main__":
    main()
