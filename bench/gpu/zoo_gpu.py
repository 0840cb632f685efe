#!/usr/bin/env python3
"""Real models on one H200 (issue 13's benchmark): torchvision's resnet18 at
32x32 (batch 32) and the zoo's GPT block at a GPU's size, exported by
scripts/export_torch.py, compiled by rankc (--target cuda, one rank),
against the same forward and backward in PyTorch on the same GPU, same
weights, batch and targets, same run.

    bench/gpu/zoo_gpu.py prepare RANKC WORK   here: exports and compiles
    bench/gpu/zoo_gpu.py run WORK [NAME...]   on the GPU machine
                                              (. scripts/device-env.sh first)

The inputs (weights, batch, targets) are made where the steps run, from
the seeded model (the DAG holds no weights; resnet18's are more than the
device tool carries): so the GPU machine needs torchvision too.

rankc's step: the median of `launch --steps S --stats` wall (host clock of
the step, which waits for the GPU); PyTorch's: CUDA events around
zero_grad + loss + backward, median of S after S warm-up steps (eager, and
torch.compile of the model). TF32 off on both sides. The loss of the first
step is printed for both, as a check that the two ran the same step."""
import json
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "scripts"))
sys.path.insert(0, os.path.join(ROOT, "test", "DataParallel"))
import export_torch  # noqa: E402
import zoo  # noqa: E402

STEPS = 20
VOCAB, T, D, B = 8192, 128, 512, 8


class DeviceGPT(zoo.GPT):
    """zoo.GPT with its position ids and mask on the input's device (the
    exporter traces the zoo's own, on the CPU)."""

    def forward(self, idx):
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        q, k, v = self.qkv(self.ln(x)).split(self.d, dim=-1)
        a = (q @ k.transpose(-2, -1)) * self.d ** -0.5
        mask = self.mask[:t, :t].to(idx.device)
        a = a.masked_fill(~mask, float("-inf")).softmax(-1)
        return self.head(x + a @ v)


def ce(y, t):
    return F.cross_entropy(y.reshape(-1, y.shape[-1]), t.reshape(-1))


# name: (model maker, batch maker, targets maker, loss, title)
CASES = {
    "resnet18": (zoo.resnet18, lambda: (torch.randn(32, 3, 32, 32),),
                 lambda: (torch.randint(0, 10, (32,)),), lambda y, t: F.cross_entropy(y, t),
                 "resnet18 32x32 batch 32, cross-entropy"),
    "gpt": (lambda: DeviceGPT(VOCAB, T, D), lambda: (torch.randint(0, VOCAB, (B, T)),),
            lambda: (torch.randint(0, VOCAB, (B, T)),), ce,
            f"GPT block (vocab {VOCAB}, T {T}, d {D}, tied head) batch {B}, cross-entropy"),
}


def setup(name):
    make, batch, target, loss_fn, title = CASES[name]
    torch.manual_seed(0)
    model = make()
    model.train()
    return model, batch(), target(), loss_fn, title


def prepare(rankc, work):
    meta = {}
    for name in CASES:
        model, x, t, loss_fn, _ = setup(name)
        start = {k: v.clone() for k, v in model.state_dict().items()}
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        t0 = time.perf_counter()
        doc = export_torch.export_step(model, x, loss_fn, targets=t, world_size=1)
        export_s = time.perf_counter() - t0
        model.load_state_dict(start)
        dag = os.path.join(d, "step.json")
        json.dump(doc, open(dag, "w"))
        t0 = time.perf_counter()
        subprocess.run([rankc, "compile", dag, "-o", os.path.join(d, "exe"),
                        "--target", "cuda"], check=True)
        compile_s = time.perf_counter() - t0
        os.remove(dag)
        meta[name] = {"nodes": len(doc["programs"][0]["nodes"]), "export_s": export_s,
                      "compile_s": compile_s}
        print(f"prepared {name}: {meta[name]}", flush=True)
    json.dump(meta, open(os.path.join(work, "meta.json"), "w"))


def rankc_step(d):
    stats = os.path.join(d, "stats.json")
    subprocess.run([os.path.join(d, "exe", "launch"), "--inputs", os.path.join(d, "in"),
                    "--outputs", os.path.join(d, "res"), "--steps", str(STEPS),
                    "--stats", stats, "--timeout", "500"], check=True,
                   stdout=subprocess.DEVNULL)
    s = json.load(open(stats))
    # Where the GPU's time goes (a second run: kernel timing adds events).
    ks = os.path.join(d, "kernels")
    subprocess.run([os.path.join(d, "exe", "launch"), "--inputs", os.path.join(d, "in"),
                    "--outputs", os.path.join(d, "res"), "--steps", "3",
                    "--kernel-stats", ks], check=True, stdout=subprocess.DEVNULL)
    kernels = json.load(open(os.path.join(ks, "rank0.json")))["kernels"]
    print(f"{os.path.basename(d)}: {sum(k['launches'] for k in kernels) / 3:.0f} kernels "
          f"per step, {sum(k['seconds'] for k in kernels) / 3 * 1e3:.3f} ms busy; top:",
          file=sys.stderr)
    for k in sorted(kernels, key=lambda k: -k["seconds"])[:int(os.environ.get("TOP", "6"))]:
        print(f"  {k['seconds'] / 3 * 1e3:.3f} ms x{k['launches'] // 3} {k['name']} "
              f"grid {k['grid']} block {k['block']}", file=sys.stderr)
    import numpy as np
    loss = float(np.load(os.path.join(d, "res", "rank0", "loss.npy")))
    return s["ranks"][0]["median"]["wall"], s["replay"], loss


def torch_step(name, d, compiled):
    import numpy as np
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):  # PyTorch >= 2.9
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        torch.backends.cudnn.conv.fp32_precision = "ieee"
    else:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
    model, _, _, loss_fn, _ = setup(name)
    inputs = os.path.join(d, "in", "rank0")
    with torch.no_grad():
        for pname, p in list(model.named_parameters()) + list(model.named_buffers()):
            f = os.path.join(inputs, export_torch.dag_id(pname) + ".npy")
            if os.path.exists(f):
                p.copy_(torch.from_numpy(np.load(f)))
    dev = torch.device("cuda")
    model = model.to(dev)
    x = torch.from_numpy(np.load(os.path.join(inputs, "input0.npy"))).to(dev)
    t = torch.from_numpy(np.load(os.path.join(inputs, "target0.npy"))).to(dev)
    forward = torch.compile(model) if compiled else model
    first = None
    times = []
    for i in range(2 * STEPS):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        model.zero_grad(set_to_none=True)
        loss = loss_fn(forward(x), t)
        loss.backward()
        e.record()
        torch.cuda.synchronize()
        if first is None:
            first = float(loss.detach())
        if i >= STEPS:
            times.append(s.elapsed_time(e) / 1e3)
    return statistics.median(times), first


def run(work, only=()):
    meta = json.load(open(os.path.join(work, "meta.json")))
    meta = {k: v for k, v in meta.items() if not only or k in only}
    print("| model (1 H200) | nodes | rankc compile s | rankc ms | eager ms | rankc/eager "
          "| torch.compile ms | rankc/compile | loss rankc vs eager |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, m in meta.items():
        d = os.path.join(work, name)
        model, x, t, _, _ = setup(name)
        export_torch.save_inputs(os.path.join(d, "in"), model, [x], [t])
        r, replay, rloss = rankc_step(d)
        e, eloss = torch_step(name, d, False)
        try:
            c, _ = torch_step(name, d, True)
            cs = f"{c * 1e3:.3f} | {r / c:.2f}"
        except Exception as ex:  # torch.compile needs a working Triton
            print(f"torch.compile failed on {name}: {ex}", file=sys.stderr)
            cs = "- | -"
        print(f"{name}: {replay}", file=sys.stderr)
        print(f"| {CASES[name][4]} | {m['nodes']} | {m['compile_s']:.1f} | {r * 1e3:.3f} "
              f"| {e * 1e3:.3f} | {r / e:.2f} | {cs} | {rloss:.6g} vs {eloss:.6g} |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 3 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
