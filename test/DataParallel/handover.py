#!/usr/bin/env python3
"""PyTorch and rankc hand a training run over through a checkpoint.

    handover.py RANKC WORK RANKS STEPS HALF MODEL OPTIMIZER-JSON

A model of scripts/export_torch.py is trained STEPS steps by real PyTorch
DDP (gloo, RANKS processes, a fixed batch per rank), and twice more in two
halves: rankc runs the first HALF steps (launch --checkpoint-every HALF)
and DDP continues from its checkpoint (rankc.checkpoints.load_checkpoint);
DDP runs the first HALF and rankc continues from the checkpoint PyTorch's
state makes (save_checkpoint, launch --resume). Both must end at DDP's own
parameters (rtol 1e-4, atol 1e-6). Prints "N passed, M failed"."""
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, HERE)
import export_torch  # noqa: E402
from train_vs_ddp import LOSS, build, make_optimizer, rendezvous  # noqa: E402
from rankc.checkpoints import load_checkpoint, save_checkpoint  # noqa: E402


def worker(r, ranks, init, kind, spec, batches, steps, start_from, save_to, out, dag, exe):
    dist.init_process_group("gloo", init_method=init, rank=r, world_size=ranks)
    torch.set_num_threads(1)
    model, _ = build(kind, [])
    opt = make_optimizer(model, spec)
    done = 0
    if start_from:
        done = load_checkpoint(start_from, model, opt, rank=r)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    for _ in range(done, steps):
        opt.zero_grad()
        LOSS(ddp(batches[r])).backward()
        opt.step()
    if save_to and r == 0:
        save_checkpoint(save_to, dag, exe, model, opt, steps)
    np.savez(os.path.join(out, f"rank{r}.npz"),
             **{n: p.detach().numpy().copy() for n, p in model.named_parameters()})
    dist.destroy_process_group()


def ddp(ranks, kind, spec, batches, steps, out, start_from=None, save_to=None, dag=None,
        exe=None):
    os.makedirs(out, exist_ok=True)
    mp.spawn(worker, nprocs=ranks, join=True,
             args=(ranks, rendezvous(out), kind, spec, batches, steps, start_from, save_to, out,
                   dag, exe))


def main():
    rankc, work, ranks, steps, half, kind, spec = sys.argv[1:8]
    ranks, steps, half, spec = int(ranks), int(steps), int(half), json.loads(spec)
    os.makedirs(work, exist_ok=True)
    model, example = build(kind, [])
    gen = torch.Generator().manual_seed(7)
    batches = [torch.randn(example.shape, generator=gen) for _ in range(ranks)]
    doc = export_torch.export_step(model, (batches[0],), LOSS, world_size=ranks,
                                   bucket_cap_mb=0.002, first_bucket_cap_mb=0.001,
                                   optimizer=spec)
    dag = os.path.join(work, "step.json")
    json.dump(doc, open(dag, "w"))
    exe = os.path.join(work, "exe")
    subprocess.run([rankc, "compile", dag, "-o", exe], check=True)
    inputs = os.path.join(work, "in")
    export_torch.save_inputs(inputs, model, batches)
    launch = os.path.join(exe, "launch")

    ddp(ranks, kind, spec, batches, steps, os.path.join(work, "torch"))
    # rankc first, PyTorch after.
    ck = os.path.join(work, "ck")
    subprocess.run([launch, "--inputs", inputs, "--steps", str(half), "--checkpoint-every",
                    str(half), "--checkpoint-dir", ck, "--outputs", os.path.join(work, "r1")],
                   check=True, stdout=subprocess.DEVNULL)
    ddp(ranks, kind, spec, batches, steps, os.path.join(work, "rankc-then-torch"),
        start_from=os.path.join(ck, f"step{half}"))
    # PyTorch first, rankc after.
    ck2 = os.path.join(work, "from-torch")
    ddp(ranks, kind, spec, batches, half, os.path.join(work, "t1"), save_to=ck2, dag=dag,
        exe=exe)
    res = os.path.join(work, "torch-then-rankc")
    subprocess.run([launch, "--inputs", inputs, "--steps", str(steps), "--resume", ck2,
                    "--outputs", res], check=True, stdout=subprocess.DEVNULL)

    passed = failed = 0
    for r in range(ranks):
        want = np.load(os.path.join(work, "torch", f"rank{r}.npz"))
        got1 = np.load(os.path.join(work, "rankc-then-torch", f"rank{r}.npz"))
        for name in want.files:
            got2 = np.load(os.path.join(res, f"rank{r}", export_torch.dag_id(name) + ".npy"))
            for what, got in (("rankc then torch", got1[name]), ("torch then rankc", got2)):
                if np.allclose(got, want[name], rtol=1e-4, atol=1e-6):
                    passed += 1
                else:
                    failed += 1
                    print(f"FAIL: {what}: rank {r} {name}: max error "
                          f"{np.abs(got - want[name]).max():.3g}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
