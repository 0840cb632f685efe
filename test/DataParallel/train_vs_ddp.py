#!/usr/bin/env python3
"""Training for many steps against real PyTorch DDP.

A model (mlp or transformer) is exported with its optimizer
(scripts/export_torch.py), compiled by rankc and run for STEPS steps in one
process per rank (`launch --steps`), one fixed batch per rank. The same
model, batches and optimizer are then trained by
torch.nn.parallel.DistributedDataParallel over gloo in RANKS processes.
Every rank's final parameters and last loss must agree.

    train_vs_ddp.py RANKC WORKDIR RANKS STEPS MODEL OPTIMIZER-JSON
        [--ignore PARAM] [--freeze PARAM] [--rtol R] [--atol A] [--lib]
        [--feed S --shuffle SEED] [--schedule warmcos|step|exp]
        [--clip M [--norm-type inf]] [--accumulate K] [--autocast bf16]

--schedule adds a torch.optim.lr_scheduler on both sides (warmcos:
SequentialLR of LinearLR and CosineAnnealingLR; step: StepLR; exp:
ExponentialLR), exported as `lr_schedule`. --clip M clips with
clip_grad_norm_ (rankc's `grad_norm` output is compared with its return
value). --accumulate K runs STEPS optimizer steps of K micro-steps each
(DDP under no_sync, the loss divided by K), a new batch every micro-step
(--feed S is then required).

--autocast bf16 exports the step under CPU autocast and runs DDP's forward
under torch.autocast, with bf16 matmuls accumulating in f32 as version 3's
rule says (f32_accumulate.py: PyTorch 1.13's CPU bf16 GEMMs do not).

--feed S gives every rank S batches, fed one a step (`launch --feed input0`,
row k mod S, in --shuffle SEED's order when given): DDP trains on the same
batches in the same order (rankc.datasets.feed_row).
--lib compiles with `--emit lib` and trains through the Python module
(test/E2E/lib_runner.py under mpiexec: a Python training loop calling the
compiled step) instead of OUT/launch.

Prints one line per mismatch and "N passed, M failed"."""
import contextlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import export_torch  # noqa: E402
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from rankc import datasets  # noqa: E402

# (.float(): under autocast the loss is f32, as the recipe's cross-entropy is;
# a no-op on f32.)
LOSS = lambda y: (y.float() * y.float()).mean()  # noqa: E731
OPTIMIZERS = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam, "adamw": torch.optim.AdamW}


def build(kind, freeze):
    torch.manual_seed(1)
    model, example = export_torch.MODELS[kind]()
    for name, p in model.named_parameters():
        if name in freeze:
            p.requires_grad_(False)
    return model, example


def make_optimizer(model, spec):
    kw = {k: v for k, v in spec.items() if k != "kind"}
    if "betas" in kw:
        kw["betas"] = tuple(kw["betas"])
    params = [p for p in model.parameters() if p.requires_grad]
    return OPTIMIZERS[spec["kind"]](params, **kw)


def make_schedule(opt, which):
    """The learning-rate schedule `which` of torch optimizer opt (or None)."""
    sched = torch.optim.lr_scheduler
    if which == "warmcos":
        return sched.SequentialLR(opt, [sched.LinearLR(opt, 0.1, total_iters=10),
                                        sched.CosineAnnealingLR(opt, T_max=50,
                                                                eta_min=opt.defaults["lr"] * 0.05)],
                                  milestones=[10])
    if which == "step":
        return sched.StepLR(opt, step_size=7, gamma=0.5)
    if which == "exp":
        return sched.ExponentialLR(opt, 0.95)
    return None


def ddp_worker(r, ranks, init, kind, spec, ignore, freeze, steps, batches, out,
               order=None, schedule=None, clip=None, norm_type=2.0, accumulate=1,
               autocast=None):
    from f32_accumulate import F32Accumulate
    if autocast:
        mode = F32Accumulate()
        mixed = lambda: torch.autocast("cpu", dtype=torch.bfloat16)  # noqa: E731
    else:
        mode, mixed = contextlib.nullcontext(), contextlib.nullcontext
    with mode:
        _ddp_worker(r, ranks, init, kind, spec, ignore, freeze, steps, batches, out,
                    order, schedule, clip, norm_type, accumulate, mixed)



def _ddp_worker(r, ranks, init, kind, spec, ignore, freeze, steps, batches, out,
                order, schedule, clip, norm_type, accumulate, mixed):
    dist.init_process_group("gloo", init_method=init, rank=r, world_size=ranks)
    torch.set_num_threads(1)
    model, _ = build(kind, freeze)
    if ignore:
        torch.nn.parallel.DistributedDataParallel._set_params_and_buffers_to_ignore_for_model(
            model, ignore)
    ddp = torch.nn.parallel.DistributedDataParallel(model)
    opt = make_optimizer(model, spec)
    sched = make_schedule(opt, schedule)
    loss = norm = None
    for k in range(steps):
        opt.zero_grad()
        for micro in range(accumulate):
            m = k * accumulate + micro
            batch = batches[r] if order is None else batches[r][datasets.feed_row(m, *order)]
            if micro + 1 < accumulate:
                with ddp.no_sync():
                    with mixed():
                        loss = LOSS(ddp(batch))
                    (loss / accumulate).backward()
            else:
                with mixed():
                    loss = LOSS(ddp(batch))
                (loss / accumulate).backward()
        if clip is not None:
            norm = torch.nn.utils.clip_grad_norm_(
                [p for p in model.parameters() if p.requires_grad], clip, norm_type)
        opt.step()
        if sched is not None:
            sched.step()
    res = {n: p.detach().numpy().copy() for n, p in model.named_parameters()}
    res["loss"] = np.float32(loss.item())
    if norm is not None:
        res["grad_norm"] = np.float32(norm.item())
    np.savez(os.path.join(out, f"rank{r}.npz"), **res)
    if mixed is not contextlib.nullcontext:
        # Freeing DDP's reducer can deadlock in PyTorch 1.13 once a dispatch
        # mode ran (F32Accumulate): gloo's thread frees a tensor that has a
        # Python object, which needs the GIL, while the main thread, holding
        # the GIL, joins that thread. The results are saved: leave.
        os._exit(0)
    dist.destroy_process_group()


def rendezvous(work):
    """A gloo group's meeting place: a file in a fresh directory, not a TCP
    port. A port picked free here can be taken by another test running
    beside this one before rank 0 listens on it (CI saw "address already in
    use" end a run); a file of our own cannot be."""
    return "file://" + os.path.join(tempfile.mkdtemp(dir=work), "rendezvous")


def main():
    args = sys.argv[1:]
    def take(flag, many=False, default=None, cast=str):
        vals = []
        while flag in args:
            i = args.index(flag)
            vals.append(cast(args[i + 1]))
            del args[i:i + 2]
        return vals if many else (vals[-1] if vals else default)
    ignore = take("--ignore", many=True)
    freeze = take("--freeze", many=True)
    lib = "--lib" in args
    if lib:
        args.remove("--lib")
    feed = take("--feed", default=None, cast=int)
    seed = take("--shuffle", default=None, cast=int)
    schedule = take("--schedule")
    clip = take("--clip", default=None, cast=float)
    norm_type = take("--norm-type", default="2")
    norm_type = float("inf") if norm_type == "inf" else float(norm_type)
    accumulate = take("--accumulate", default=1, cast=int)
    lr_input = "--lr-input" in args
    if lr_input:
        args.remove("--lr-input")
    autocast = take("--autocast")
    rtol = take("--rtol", default=1e-4, cast=float)
    atol = take("--atol", default=1e-6, cast=float)
    rankc, work, ranks, steps, kind, spec = args[0], args[1], int(args[2]), int(args[3]), args[4], json.loads(args[5])
    os.makedirs(work, exist_ok=True)

    model, example = build(kind, freeze)
    gen = torch.Generator().manual_seed(7)
    if feed:
        batches = [torch.randn((feed,) + tuple(example.shape), generator=gen)
                   for _ in range(ranks)]
        first = [b[0] for b in batches]
    else:
        batches = [torch.randn(example.shape, generator=gen) for _ in range(ranks)]
        first = batches
    # The schedule exported from the same torch scheduler DDP runs with.
    dummy = make_optimizer(build(kind, freeze)[0], spec)
    lr_schedule = make_schedule(dummy, schedule)
    lrs = None
    if lr_input:
        # The schedule computed in Python: the learning rate of each
        # micro-step (that of its update), fed to the `lr` input.
        lrs = []
        for _ in range(steps):
            lrs += [dummy.param_groups[0]["lr"]] * accumulate
            if lr_schedule is not None:
                lr_schedule.step()
        lr_schedule = None
    doc = export_torch.export_step(model, (first[0],), LOSS, world_size=ranks,
                                   bucket_cap_mb=0.002, first_bucket_cap_mb=0.001,
                                   optimizer=spec, lr_schedule=lr_schedule,
                                   clip_grad_norm=None if clip is None else
                                   {"max_norm": clip, "output": "grad_norm",
                                    "norm_type": "inf" if norm_type == float("inf") else 2},
                                   accumulate=accumulate, lr_input=lr_input,
                                   autocast=autocast)
    if ignore:
        doc["data_parallel"]["ignore"] = ignore
    path = os.path.join(work, "step.json")
    json.dump(doc, open(path, "w"))
    exe = os.path.join(work, "exe")
    export_torch.save_inputs(os.path.join(work, "in"), model, first)
    feed_args = []
    fed = []
    if feed:
        datasets.save_feed(os.path.join(work, "in"), "input0", [b.numpy() for b in batches])
        fed.append("input0")
    if lrs is not None:
        datasets.save_feed(os.path.join(work, "in"), "lr", [np.array(lrs)] * ranks)
        fed.append("lr")
    if fed:
        feed_args = ["--feed", ",".join(fed)] + (["--shuffle", str(seed)] if seed is not None else [])
    if lib and seed is not None:
        raise SystemExit("train_vs_ddp: --lib feeds rows in order (no --shuffle)")
    if lib:
        subprocess.run([rankc, "compile", path, "-o", exe, "--emit", "lib"], check=True)
        runner = os.path.join(HERE, "..", "E2E", "lib_runner.py")
        subprocess.run([os.environ.get("RANKC_MPIEXEC") or "mpiexec.mpich", "-n", str(ranks),
                        sys.executable, runner, exe, os.path.join(work, "in"),
                        os.path.join(work, "res"), str(steps * accumulate)] + feed_args,
                       check=True)
    else:
        subprocess.run([rankc, "compile", path, "-o", exe], check=True)
        subprocess.run([os.path.join(exe, "launch"), "--inputs", os.path.join(work, "in"),
                        "--outputs", os.path.join(work, "res"), "--steps", str(steps * accumulate)]
                       + feed_args, check=True)

    ref = tempfile.mkdtemp(dir=work)
    mp.spawn(ddp_worker, nprocs=ranks, join=True,
             args=(ranks, rendezvous(work), kind, spec, ignore, freeze, steps, batches, ref,
                   (feed, seed) if feed else None, schedule, clip, norm_type, accumulate,
                   autocast))
    passed = failed = 0
    for r in range(ranks):
        want = np.load(os.path.join(ref, f"rank{r}.npz"))
        res = os.path.join(work, "res", f"rank{r}")
        for name in want.files:
            f = os.path.join(res, name + ".npy")
            if name in freeze:
                ok = not os.path.exists(f)  # not a parameter of the step
                why = "a frozen parameter was written as updated"
            else:
                got = np.load(f)
                ok = np.allclose(got, want[name], rtol=rtol, atol=atol)
                why = f"max error {np.abs(got - want[name]).max():.3g}"
            if ok:
                passed += 1
            else:
                failed += 1
                print(f"FAIL: rank {r} {name}: {why}")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
