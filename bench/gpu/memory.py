#!/usr/bin/env python3
"""A training step's GPU memory: rankc against PyTorch eager (issue 39).

    bench/gpu/memory.py prepare RANKC WORK [NAME...]   here: export, compile
    bench/gpu/memory.py run WORK [NAME...]             on the GPU machine
                                                       (. scripts/device-env.sh)

Each model of the issue's table (and GPT-2 small) is exported with its
optimizer in the step and compiled for CUDA twice: with the memory plan
(rankc-plan-buffers, the default) and without (RANKC_PLAN_BUFFERS=0: every
buffer of a step in the step arena, two arenas). On the GPU machine the
inputs are made from the seeded model (save_inputs), then each side runs
in a process of its own: rankc's `launch --steps S --stats` (its
device_used_bytes: total minus free after the last step, and its median
step), PyTorch's eager step (zero_grad, loss, backward, opt.step) S times,
then total minus free (torch.cuda.mem_get_info) and its median step (CUDA
events). Same model, weights, batch and optimizer; TF32 off."""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
for p in ("python", "scripts", os.path.join("test", "DataParallel"),
          os.path.join("examples", "nanogpt")):
    sys.path.insert(0, os.path.join(ROOT, p))
STEPS = 30


def gpt(torch, vocab, block, layers, heads, d, batch):
    from model import GPT, loss_fn
    m = GPT(vocab, block_size=block, layers=layers, heads=heads, d=d)
    x = torch.randint(0, vocab, (batch, block))
    t = torch.randint(0, vocab, (batch, block))
    opt = torch.optim.AdamW(m.parameters(), lr=3e-4, betas=(0.9, 0.95), weight_decay=0.1)
    return m, x, t, loss_fn, opt


def resnet18(torch):
    import zoo
    m = zoo.resnet18()
    x, t = torch.randn(64, 3, 32, 32), torch.randint(0, 10, (64,))
    opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
    return m, x, t, torch.nn.functional.cross_entropy, opt


def zoo_model(torch, kind, adam):
    from rankc.models import MODELS
    m, x = MODELS[kind]()
    opt = (torch.optim.Adam(m.parameters(), lr=1e-4) if adam else
           torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9))
    return m, x, None, lambda y: (y * y).mean(), opt


# name: (title, maker)
CASES = {
    "gpt6": ("6-layer GPT, d=512, 8x256 tokens, AdamW",
             lambda torch: gpt(torch, 8192, 256, 6, 8, 512, 8)),
    "resnet18": ("torchvision resnet18, 64x3x32x32, SGD", resnet18),
    "block-xl": ("TransformerBlock(1024), 8x256x1024, Adam",
                 lambda torch: zoo_model(torch, "transformer-xl", True)),
    "block": ("TransformerBlock(256), 4x64x256, Adam",
              lambda torch: zoo_model(torch, "transformer-large", True)),
    "mlp": ("MLP 512-1024x4-16, SGD", lambda torch: zoo_model(torch, "mlp-large", False)),
    "gpt2": ("GPT-2 small (124M), 8x1024 tokens, AdamW",
             lambda torch: gpt(torch, 50257, 1024, 12, 12, 768, 8)),
    # nanoGPT's GPT-2 small run as issue 40 states it: its vocabulary padded
    # to 50304, 4x1024 tokens a step (bench/gpu/nanogpt_recipe.py).
    "gpt2-4k": ("GPT-2 small (124M), 4x1024 tokens, AdamW",
                lambda torch: gpt(torch, 50304, 1024, 12, 12, 768, 4)),
}


def setup(name, device="cpu"):
    import torch
    torch.manual_seed(0)
    m, x, t, loss, opt = CASES[name][1](torch)
    m.train()
    return m, x, t, loss, opt


def prepare(rankc, work, names):
    from rankc.export import export_step
    meta = {}
    for name in names:
        m, x, t, loss, opt = setup(name)
        t0 = time.time()
        doc = export_step(m, (x,), loss, targets=(t,) if t is not None else (),
                          optimizer=opt)
        export_s = time.time() - t0
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        dag = os.path.join(d, "step.json")
        json.dump(doc, open(dag, "w"))
        meta[name] = {"export_s": export_s}
        for plan in ("plan", "noplan"):
            env = dict(os.environ, RANKC_PLAN_BUFFERS="1" if plan == "plan" else "0")
            t0 = time.time()
            subprocess.run([rankc, "compile", dag, "-o", os.path.join(d, plan), "--target",
                            "cuda"], check=True, env=env)
            mem = json.load(open(os.path.join(d, plan, "plan.json")))["programs"][0]["memory"]
            meta[name][plan] = {"compile_s": time.time() - t0, "memory": mem}
        os.remove(dag)
        print(f"prepared {name}: {meta[name]}", flush=True)
    old = os.path.join(work, "meta.json")
    if os.path.exists(old):
        meta = {**json.load(open(old)), **meta}
    json.dump(meta, open(old, "w"), indent=1)


def on_gpu(name):
    """The model, batch, loss and optimizer of `name` on the GPU, TF32 off
    (PyTorch 2.x's settings and 1.13's): (torch, m, x, t, loss_fn, opt,
    device memory in use before any of the model)."""
    import torch
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):  # PyTorch >= 2.9
        torch.backends.cuda.matmul.fp32_precision = "ieee"
        torch.backends.cudnn.conv.fp32_precision = "ieee"
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    m, x, t, loss_fn, _ = setup(name)
    dev = torch.device("cuda")
    torch.zeros(1, device=dev)  # the context, before any of the model
    free, total = torch.cuda.mem_get_info()
    at_start = total - free
    m = m.to(dev)
    for b in getattr(m, "blocks", []):  # examples/nanogpt's shared mask
        b.mask = b.mask.to(dev)
    # The optimizer again, over the parameters on the device.
    _, _, _, _, proto = setup(name)
    # (Only the settings its constructor takes: 2.x's defaults hold more,
    # e.g. AdamW's decoupled_weight_decay.)
    import inspect
    takes = inspect.signature(type(proto).__init__).parameters
    opt = type(proto)(m.parameters(),
                      **{k: v for k, v in proto.defaults.items() if k in takes})
    x = x.to(dev)
    t = t.to(dev) if t is not None else None
    return torch, m, x, t, loss_fn, opt, at_start


def timed_steps(torch, forward, x, t, loss_fn, opt, steps, autocast=False):
    """`steps` training steps (zero_grad, forward, loss, backward, opt.step;
    the forward and loss under bf16 autocast if asked), each timed with
    CUDA events: (seconds per step, the last loss)."""
    times = []
    for _ in range(steps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            y = forward(x)
            loss = loss_fn(y, t) if t is not None else loss_fn(y)
        loss.backward()
        opt.step()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    return times, loss


def torch_side(name):
    """Run in a process of its own: prints {used, peak_allocated, step_s}."""
    torch, m, x, t, loss_fn, opt, at_start = on_gpu(name)
    times, loss = timed_steps(torch, m, x, t, loss_fn, opt, STEPS)
    free, total = torch.cuda.mem_get_info()
    print(json.dumps({"used": total - free, "at_start": at_start,
                      "peak_allocated": torch.cuda.max_memory_allocated(),
                      "step_s": statistics.median(times[STEPS // 2:]),
                      "loss": float(loss)}))


def rankc_side(d, plan):
    stats = os.path.join(d, plan + ".stats.json")
    subprocess.run([os.path.join(d, plan, "launch"), "--inputs", os.path.join(d, "in"),
                    "--outputs", os.path.join(d, "res-" + plan), "--steps", str(STEPS),
                    "--stats", stats, "--timeout", "500"], check=True,
                   stdout=subprocess.DEVNULL)
    r = json.load(open(stats))["ranks"][0]
    return r


def run(work, names):
    from rankc.datasets import save_inputs
    meta = json.load(open(os.path.join(work, "meta.json")))
    gib = 2 ** 30
    print("| model (training step) | rankc, planned | rankc, no plan | PyTorch eager "
          "| planned / eager | plan: scratch + arena (GB) | rankc ms (plan / no plan) "
          "| eager ms |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names or list(meta):
        if name not in meta:
            continue
        d = os.path.join(work, name)
        m, x, t, _, _ = setup(name)
        save_inputs(os.path.join(d, "in"), m, [(x,)], targets=[(t,)] if t is not None else None)
        rows = {}
        for p in ("plan", "noplan"):
            try:
                rows[p] = rankc_side(d, p)
            except subprocess.CalledProcessError:  # (out of memory, said above)
                rows[p] = None
        out = subprocess.run([sys.executable, __file__, "torch", name], check=True,
                             capture_output=True, text=True).stdout
        pt = json.loads(out.strip().splitlines()[-1])
        mem = meta[name]["plan"]["memory"]
        p, n = rows["plan"], rows["noplan"]
        if p is None:
            print(f"| {CASES[name][0]} | failed | | {pt['used'] / gib:.2f} GB | | | | |")
            continue
        unplanned = f"{n['device_used_bytes'] / gib:.2f} GB" if n else "out of memory"
        unplanned_ms = f"{n['median']['wall'] * 1e3:.2f}" if n else "-"
        print(f"| {CASES[name][0]} | {p['device_used_bytes'] / gib:.2f} GB "
              f"| {unplanned} | {pt['used'] / gib:.2f} GB "
              f"| {p['device_used_bytes'] / pt['used']:.2f}x "
              f"| {mem['scratch_bytes'] / gib:.2f} + {mem['step_bytes'] / gib:.2f} "
              f"| {p['median']['wall'] * 1e3:.2f} / {unplanned_ms} "
              f"| {pt['step_s'] * 1e3:.2f} |", flush=True)
        print(f"{name}: planned peak {mem['planned_peak_bytes'] / gib:.3f} GB, measured "
              f"scratch {p['scratch_bytes']}, step arena peak {p['step_bytes_peak']}; "
              f"PyTorch peak allocated {pt['peak_allocated'] / gib:.3f} GB, loss {pt['loss']:.5g}; "
              f"in use at start rankc {p.get('device_used_at_start_bytes', 0) / gib:.3f} GB, "
              f"PyTorch {pt['at_start'] / gib:.3f} GB; rankc after step 1 "
              f"{p.get('device_used_after_first_step_bytes', 0) / gib:.3f} GB, "
              f"buffers held {p['buffer_bytes'] / gib:.3f} GB",
              file=sys.stderr, flush=True)


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3], sys.argv[4:] or [n for n in CASES if not n.startswith("gpt2")])
    elif len(sys.argv) >= 3 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 3 and sys.argv[1] == "torch":
        torch_side(sys.argv[2])
    else:
        sys.exit(__doc__)
