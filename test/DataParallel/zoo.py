#!/usr/bin/env python3
"""The model zoo: small, untuned PyTorch models with the layers and losses
people train (convolutions, batch and group norm, max pooling, embeddings
with a tied head and a causal mask, transposed convolutions, SiLU,
Softplus, sigmoid, LSTM and GRU,
and cross-entropy (with label smoothing and ignored targets), NLL, MSE and
L1 losses), exported by scripts/export_torch.py
with their targets as inputs, compiled by rankc and run under mpiexec on N
ranks (one batch per rank). Per rank: the loss equals torch's on that batch,
every averaged gradient torch's average over the N batches, and each
running statistic that batch norm carries as state torch's after that
batch.

    zoo.py RANKC WORKDIR RANKS [MODEL...]      (prints PASS/FAIL per model)
    zoo.py RANKC WORKDIR RANKS --train STEPS OPTIMIZER-JSON MODEL...
        STEPS steps with the optimizer against torch DDP (gloo): every
        parameter and running statistic after the last step.
    zoo.py --export-only OUTDIR RANKS [MODEL...]
        only exports each model's step to OUTDIR/MODEL.json (and prints
        PASS/FAIL per export): run under another PyTorch (the GPU machine's
        2.x), then check those documents here against this PyTorch with
        ZOO_DAGS=OUTDIR zoo.py RANKC WORKDIR RANKS (the DAG holds no weights:
        it is the same step whichever PyTorch traced it)."""
import copy
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
import export_torch  # noqa: E402


class LeNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1, self.b1 = nn.Conv2d(1, 4, 5, padding=2), nn.BatchNorm2d(4)
        self.c2, self.b2 = nn.Conv2d(4, 6, 3, stride=2, groups=2), nn.BatchNorm2d(6)
        self.fc = nn.Linear(6 * 2 * 2, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.b1(self.c1(x))), 2)
        x = F.max_pool2d(F.relu(self.b2(self.c2(x))), 2, stride=1)
        return self.fc(x.flatten(1))


class GPT(nn.Module):
    """Token and position embeddings, a causal mask (a captured tensor), one
    attention layer with a fused qkv projection split in three, and a head
    tied to the token embedding."""

    def __init__(self, vocab=23, T=6, d=8):
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(T, d)
        self.ln, self.qkv = nn.LayerNorm(d), nn.Linear(d, 3 * d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.tok.weight
        # A plain tensor, not a buffer: the trace captures it (a constant).
        self.mask = torch.tril(torch.ones(T, T)).bool()
        self.d = d

    def forward(self, idx):
        T = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(T))
        q, k, v = self.qkv(self.ln(x)).split(self.d, dim=-1)
        a = (q @ k.transpose(-2, -1)) * self.d ** -0.5
        a = a.masked_fill(~self.mask[:T, :T], float("-inf")).softmax(-1)
        return self.head(x + a @ v)


class GroupNormNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c, self.gn = nn.Conv1d(3, 8, 3, padding=1, dilation=2), nn.GroupNorm(2, 8)
        self.fc = nn.Linear(8 * 3, 3)

    def forward(self, x):
        return self.fc(F.silu(self.gn(self.c(x))).flatten(1))


class RnnClassifier(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.rnn, self.fc = kind(4, 6, batch_first=True), nn.Linear(6, 3)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1])


def resnet18():
    import torchvision
    return torchvision.models.resnet18(num_classes=10)


def classes(n, c):
    return lambda: (torch.randint(0, c, (n,)),)


# name: (model, batch maker, targets maker, loss of (output, *targets))
ZOO = {
    "lenet-bn-ce": (LeNet, lambda: (torch.randn(3, 1, 16, 16),), classes(3, 10),
                    lambda y, t: F.cross_entropy(y, t)),
    "gpt-tied-ce": (GPT, lambda: (torch.randint(0, 23, (2, 6)),),
                    lambda: (torch.randint(0, 23, (2, 6)),),
                    lambda y, t: F.cross_entropy(y.reshape(-1, 23), t.reshape(-1))),
    "silu-softplus-mse": (lambda: nn.Sequential(nn.Linear(5, 7), nn.SiLU(), nn.Linear(7, 2),
                                                nn.Softplus(beta=2.0)),
                          lambda: (torch.randn(4, 5),), lambda: (torch.randn(4, 2),),
                          lambda y, t: F.mse_loss(y, t)),
    "sigmoid-l1": (lambda: nn.Sequential(nn.Linear(5, 6), nn.Sigmoid(), nn.Linear(6, 3)),
                   lambda: (torch.randn(4, 5),), lambda: (torch.randn(4, 3),),
                   lambda y, t: F.l1_loss(y, t)),
    "groupnorm-nll": (lambda: nn.Sequential(GroupNormNet(), nn.LogSoftmax(-1)),
                      lambda: (torch.randn(4, 3, 5),), classes(4, 3),
                      lambda y, t: F.nll_loss(y, t)),
    "resnet18-ce": (resnet18, lambda: (torch.randn(4, 3, 32, 32),), classes(4, 10),
                    lambda y, t: F.cross_entropy(y, t)),
    "lstm-ce": (lambda: RnnClassifier(nn.LSTM), lambda: (torch.randn(3, 5, 4),), classes(3, 3),
                lambda y, t: F.cross_entropy(y, t)),
    "gru-ce": (lambda: RnnClassifier(nn.GRU), lambda: (torch.randn(3, 5, 4),), classes(3, 3),
               lambda y, t: F.cross_entropy(y, t)),
    "smoothed-ce-ignore": (lambda: nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 5)),
                           lambda: (torch.randn(6, 4),), lambda: (torch.tensor([0, 4, -100, 2, 2, 1]),),
                           lambda y, t: nn.CrossEntropyLoss(label_smoothing=0.1)(y, t)),
    # A decoder: a strided convolution down, a grouped transposed one back
    # up (output_padding 1), MSE against an image.
    "convtranspose-mse": (lambda: nn.Sequential(nn.Conv2d(1, 4, 3, stride=2, padding=1), nn.ReLU(),
                                                nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1,
                                                                   output_padding=1, groups=2)),
                          lambda: (torch.randn(3, 1, 8, 8),), lambda: (torch.randn(3, 2, 8, 8),),
                          lambda y, t: F.mse_loss(y, t)),
    "leaky-ce-sum": (lambda: nn.Sequential(nn.Linear(4, 6), nn.LeakyReLU(0.2), nn.Linear(6, 5)),
                     lambda: (torch.randn(5, 4),), classes(5, 5),
                     lambda y, t: F.cross_entropy(y, t, reduction="sum")),
}


def setup(name, ranks):
    """The model (seeded, in training mode), a batch and targets per rank,
    the loss, and the model's starting state."""
    make, batch, target, loss_fn = ZOO[name]
    torch.manual_seed(0)
    model = make()
    model.train()
    batches = [batch() for _ in range(ranks)]
    targets = [target() for _ in range(ranks)]
    return model, batches, targets, loss_fn, {k: v.clone() for k, v in model.state_dict().items()}


def export_step(model, batches, targets, loss_fn, ranks, optimizer=None):
    return export_torch.export_step(model, batches[0], loss_fn, targets=targets[0],
                                    world_size=ranks, bucket_cap_mb=0.0005,
                                    first_bucket_cap_mb=0.0002, optimizer=optimizer)


def export_only(out, ranks, names):
    os.makedirs(out, exist_ok=True)
    failed = 0
    for name in names:
        model, batches, targets, loss_fn, _ = setup(name, ranks)
        try:
            json.dump(export_step(model, batches, targets, loss_fn, ranks),
                      open(os.path.join(out, name + ".json"), "w"))
            why = None
        except (SystemExit, Exception) as e:  # the exporter's error, or torch's
            why = f"{type(e).__name__}: {str(e)[-1500:]}"
            open(os.path.join(out, name + ".failed"), "w").write(why)
        print(("PASS: " if why is None else "FAIL: ") + name + ("" if why is None else ": " + why),
              flush=True)
        failed += why is not None
    print(f"{len(names) - failed} exported, {failed} failed (torch {torch.__version__})")
    return 1 if failed else 0


def export_and_run(rankc, base, model, batches, targets, loss_fn, ranks, start,
                   steps=1, optimizer=None):
    """Exports the step (batch norm's statistics reset after tracing, which
    ran their update), compiles it, writes the inputs and runs STEPS steps
    into BASE/res; returns what failed, or None."""
    path = os.path.join(base, "step.json")
    exported = os.environ.get("ZOO_DAGS")
    if exported and optimizer is None:  # traced elsewhere (--export-only)
        name = os.path.basename(base)
        if not os.path.exists(os.path.join(exported, name + ".json")):
            failed = os.path.join(exported, name + ".failed")
            return "not exported: " + (open(failed).read() if os.path.exists(failed)
                                       else "no document")
        doc = json.load(open(os.path.join(exported, name + ".json")))
    else:
        doc = export_step(model, batches, targets, loss_fn, ranks, optimizer)
    model.load_state_dict(start)
    json.dump(doc, open(path, "w"))
    p = subprocess.run([rankc, "compile", path, "-o", os.path.join(base, "exe")],
                       capture_output=True, text=True)
    if p.returncode:
        return f"compile failed: {p.stderr.strip()[-2000:]}"
    export_torch.save_inputs(os.path.join(base, "in"), model, batches, targets)
    p = subprocess.run([os.path.join(base, "exe", "launch"), "--inputs", os.path.join(base, "in"),
                        "--outputs", os.path.join(base, "res"), "--steps", str(steps)],
                       capture_output=True, text=True)
    if p.returncode:
        return f"run failed: {p.stderr.strip()[-2000:]}"
    return None


def check(rankc, work, ranks, name):
    model, batches, targets, loss_fn, start = setup(name, ranks)
    base = os.path.join(work, name)
    os.makedirs(base, exist_ok=True)
    why = export_and_run(rankc, base, model, batches, targets, loss_fn, ranks, start)
    if why:
        return why
    # The reference: torch in f32 and in f64. rankc's f32 values must be as
    # close to the f64 ones as torch's own f32 values are (3x their
    # distance), or within rtol 1e-4, or (normwise) 2e-4 of the tensor's
    # largest value: batch norm over a few samples is ill-conditioned, and
    # rankc's reductions are serial f32 sums (a resnet conv1 weight gradient
    # sums 8192 products: n * eps is 5e-4 relative) where torch's are
    # blocked; both are f32 and both differ from exact.
    def reference(dtype):
        m = copy.deepcopy(model).to(dtype)
        grads = {n: torch.zeros_like(p) for n, p in m.named_parameters()}
        losses, bufs = [], []
        for r in range(ranks):
            m.load_state_dict({k: v.to(dtype) if v.is_floating_point() else v
                               for k, v in start.items()})
            m.zero_grad()
            xs = [x.to(dtype) if x.is_floating_point() else x for x in batches[r]]
            ts = [t.to(dtype) if t.is_floating_point() else t for t in targets[r]]
            loss = loss_fn(m(*xs), *ts)
            loss.backward()
            losses.append(loss.detach().double().numpy())
            for n, p in m.named_parameters():
                grads[n] += p.grad / ranks
            bufs.append({n: b.double().numpy() for n, b in m.named_buffers()
                         if b.is_floating_point()})
        return losses, {n: g.double().numpy() for n, g in grads.items()}, bufs

    l32, g32, b32 = reference(torch.float32)
    l64, g64, b64 = reference(torch.float64)

    def close(got, f32, f64):
        bound = 3 * np.abs(f32 - f64) + 1e-5 + 1e-4 * np.abs(f64) + \
            2e-4 * np.max(np.abs(f64), initial=0)
        return bool(np.all(np.abs(got.astype(np.float64) - f64) <= bound))

    for r in range(ranks):
        res = os.path.join(base, "res", f"rank{r}")
        got = np.load(os.path.join(res, "loss.npy"))
        if not close(got, l32[r], l64[r]):
            return f"rank {r}: loss {float(got)} != torch's {float(l32[r])} (f64: {float(l64[r])})"
        for n in b64[r]:  # carried state: this rank's update
            f = os.path.join(res, export_torch.dag_id(n) + ".npy")
            if os.path.exists(f) and not close(np.load(f), b32[r][n], b64[r][n]):
                return f"rank {r}: buffer {n} {np.load(f).ravel()[:4]} != {b32[r][n].ravel()[:4]}"
        for n in g64:
            got = np.load(os.path.join(res, f"grad.{n}.npy"))
            if not close(got, g32[n], g64[n]):
                err = np.abs(got - g64[n]).max()
                return f"rank {r}: grad.{n} differs by {err} ({got.ravel()[:3]} vs {g32[n].ravel()[:3]})"
    return None


def export_torch_carried(model):
    """Parameters, and the buffers batch norm updates (its running
    statistics): what a step's outputs hold after the last step."""
    names = {n for n, _ in model.named_parameters()}
    for path, m in model.named_modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            names |= {f"{path}.running_mean", f"{path}.running_var"}
    return names


def ddp_worker(r, ranks, init, name, spec, steps, batches, targets, start, out):
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method=init, rank=r, world_size=ranks)
    torch.set_num_threads(1)
    make, _, _, loss_fn = ZOO[name]
    torch.manual_seed(0)
    model = make()
    model.load_state_dict(start)
    model.train()
    # Each rank keeps its own running statistics, as rankc's state does
    # (DDP's default broadcasts rank 0's before every forward).
    ddp = torch.nn.parallel.DistributedDataParallel(model, broadcast_buffers=False)
    kw = {k: tuple(v) if k == "betas" else v for k, v in spec.items() if k != "kind"}
    opt = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam,
           "adamw": torch.optim.AdamW}[spec["kind"]](model.parameters(), **kw)
    for _ in range(steps):
        opt.zero_grad()
        loss = loss_fn(ddp(*batches[r]), *targets[r])
        loss.backward()
        opt.step()
    res = {export_torch.dag_id(n): p.detach().numpy().copy()
           for n, p in list(model.named_parameters()) + list(model.named_buffers())
           if p.is_floating_point() and n in export_torch_carried(model)}
    res["loss"] = np.float32(loss.item())
    np.savez(os.path.join(out, f"rank{r}.npz"), **res)
    dist.destroy_process_group()


def train(rankc, work, ranks, name, steps, spec):
    """STEPS steps of `name` with optimizer `spec` (dag-format.md's) under
    `launch --steps`, against torch DDP (gloo) over RANKS processes with the
    same batches and targets: every parameter after the last step, and the
    last loss, must agree."""
    import tempfile
    import torch.multiprocessing as mp
    model, batches, targets, loss_fn, start = setup(name, ranks)
    base = os.path.join(work, name + "-train")
    os.makedirs(base, exist_ok=True)
    why = export_and_run(rankc, base, model, batches, targets, loss_fn, ranks, start,
                         steps=steps, optimizer=spec)
    if why:
        return why
    ref = tempfile.mkdtemp(dir=base)
    # A file, not a TCP port, for gloo to meet at (train_vs_ddp.rendezvous).
    init = "file://" + os.path.join(tempfile.mkdtemp(dir=base), "rendezvous")
    mp.spawn(ddp_worker, nprocs=ranks, join=True,
             args=(ranks, init, name, spec, steps, batches, targets, start, ref))
    for r in range(ranks):
        want = np.load(os.path.join(ref, f"rank{r}.npz"))
        for n in want.files:
            got = np.load(os.path.join(base, "res", f"rank{r}", n + ".npy"))
            if not np.allclose(got, want[n], rtol=1e-3, atol=1e-5):
                return f"rank {r} {n}: max error {np.abs(got - want[n]).max():.3g} after {steps} steps"
    return None


def main():
    if sys.argv[1] == "--export-only":
        return export_only(sys.argv[2], int(sys.argv[3]), sys.argv[4:] or list(ZOO))
    rankc, work, ranks = sys.argv[1], sys.argv[2], int(sys.argv[3])
    names = sys.argv[4:] or list(ZOO)
    if names and names[0] == "--train":  # --train STEPS OPTIMIZER-JSON MODEL...
        steps, spec, names = int(names[1]), json.loads(names[2]), names[3:]
        failed = 0
        for name in names:
            try:
                why = train(rankc, work, ranks, name, steps, spec)
            except Exception as e:  # DDP's processes
                why = f"{type(e).__name__}: {str(e)[-500:]}"
            print(("PASS: " if why is None else "FAIL: ") + name + ("" if why is None else ": " + why),
                  flush=True)
            failed += why is not None
        print(f"{len(names) - failed} passed, {failed} failed")
        return 1 if failed else 0
    failed = 0
    for name in names:
        try:
            why = check(rankc, work, ranks, name)
        except SystemExit as e:  # the exporter's error
            why = str(e)
        print(("PASS: " if why is None else "FAIL: ") + name + ("" if why is None else ": " + why),
              flush=True)
        failed += why is not None
    print(f"{len(names) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
