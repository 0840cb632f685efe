#!/usr/bin/env python3
"""The nanoGPT example's optimizer step on one GPU: rankc against PyTorch
eager and torch.compile, same model, batches and recipe (issue 37).

    bench/gpu/nanogpt_step.py prepare RANKC WORK   here: export, compile (cuda)
    bench/gpu/nanogpt_step.py run WORK             on the GPU machine

The model is examples/nanogpt's GPT at a larger size (4 layers, d 256,
4 heads, context 256, micro-batch 8, a 96-token vocabulary), trained with
AdamW. Three variants, to see what each part of the recipe costs:
  plain      AdamW, no clipping, one micro-step per update
  clip       + clip_grad_norm_(params, 1.0)
  clip-acc4  + 4 micro-steps per update, warm-up then cosine schedule
rankc: `launch --steps S --metrics` (host wall time of each step, which
waits for the GPU), the median update step and the median micro-step,
the optimizer step being (K - 1) micro-steps and one update. PyTorch: the
same optimizer step (K forward/backward of loss / K, clip_grad_norm_,
opt.step, sched.step, zero_grad) timed with CUDA events, median after
warm-up, eager and torch.compile (the model compiled). TF32 off."""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
VARIANTS = {"plain": (None, 1), "clip": (1.0, 1), "clip-acc4": (1.0, 4)}
VOCAB, BLOCK, BATCH, LAYERS, HEADS, D = 96, 256, 8, 4, 4, 256
ROWS, STEPS = 16, 48


def model_and_recipe(torch, k, device="cpu"):
    sys.path.insert(0, os.path.join(ROOT, "examples", "nanogpt"))
    from model import GPT
    torch.manual_seed(0)
    m = GPT(VOCAB, block_size=BLOCK, layers=LAYERS, heads=HEADS, d=D).to(device)
    m.blocks[0].mask = m.blocks[0].mask.to(device)
    for b in m.blocks:
        b.mask = m.blocks[0].mask
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
    sched = None
    if k > 1:
        s = torch.optim.lr_scheduler
        sched = s.SequentialLR(opt, [s.LinearLR(opt, 0.1, total_iters=5),
                                     s.CosineAnnealingLR(opt, T_max=100, eta_min=1e-4)],
                               milestones=[5])
    return m, opt, sched


def tokens(np, seed):
    rng = np.random.default_rng(seed)
    return rng.integers(0, VOCAB, size=(ROWS, BATCH, BLOCK + 1)).astype(np.uint16)


def prepare(rankc, work):
    import numpy as np
    import torch
    sys.path.insert(0, os.path.join(ROOT, "python"))
    sys.path.insert(0, os.path.join(ROOT, "examples", "nanogpt"))
    from model import loss_fn
    from rankc.datasets import save_feed, save_inputs
    from rankc.export import export_step
    data = tokens(np, 0)
    inputs = os.path.join(work, "in")
    for name, (clip, k) in VARIANTS.items():
        m, opt, sched = model_and_recipe(torch, k)
        x0 = torch.from_numpy(data[0, :, :-1].astype(np.int64))
        doc = export_step(m, (x0,), loss_fn, targets=(x0,), optimizer=opt, lr_schedule=sched,
                          clip_grad_norm=clip, accumulate=k,
                          input_dtypes={"input0": "u16", "target0": "u16"})
        path = os.path.join(work, name + ".json")
        os.makedirs(work, exist_ok=True)
        json.dump(doc, open(path, "w"))
        if name == "plain":  # one set of inputs: the parameters are the same
            save_inputs(inputs, m, [(x0,)], targets=[(x0,)])
            save_feed(inputs, "input0", [data[:, :, :-1]])
            save_feed(inputs, "target0", [data[:, :, 1:]])
        t = time.time()
        subprocess.run([rankc, "compile", path, "-o", os.path.join(work, name), "--target",
                        "cuda"], check=True)
        print(f"{name}: compiled in {time.time() - t:.1f} s", flush=True)


def rankc_times(work, name, k):
    metrics = os.path.join(work, name + ".metrics.jsonl")
    if os.path.exists(metrics):
        os.remove(metrics)
    subprocess.run([os.path.join(work, name, "launch"), "--inputs", os.path.join(work, "in"),
                    "--feed", "input0,target0", "--steps", str(STEPS * k), "--metrics",
                    metrics], check=True, stdout=subprocess.DEVNULL)
    rows = [json.loads(line) for line in open(metrics)][8 * k:]
    update = statistics.median(r["step_s"] for r in rows if r["step"] % k == 0)
    micro = statistics.median(r["step_s"] for r in rows if r["step"] % k != 0) if k > 1 else 0
    return update, micro


def torch_time(name, compiled):
    import numpy as np
    import torch
    sys.path.insert(0, os.path.join(ROOT, "examples", "nanogpt"))
    from model import loss_fn
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    clip, k = VARIANTS[name]
    m, opt, sched = model_and_recipe(torch, k, "cuda")
    fwd = torch.compile(m) if compiled else m
    data = torch.from_numpy(tokens(np, 0).astype(np.int64)).cuda()
    times, row = [], 0
    for it in range(STEPS):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        for _ in range(k):
            x, y = data[row % ROWS, :, :-1], data[row % ROWS, :, 1:]
            row += 1
            (loss_fn(fwd(x), y) / k).backward()
        if clip:
            torch.nn.utils.clip_grad_norm_(m.parameters(), clip)
        opt.step()
        if sched:
            sched.step()
        opt.zero_grad(set_to_none=True)
        end.record()
        torch.cuda.synchronize()
        times.append(begin.elapsed_time(end) / 1e3)
    return statistics.median(times[8:])


def run(work):
    print(f"| variant | rankc update step | rankc micro-step | rankc optimizer step | "
          f"eager | torch.compile | rankc / eager | rankc / compile |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (clip, k) in VARIANTS.items():
        update, micro = rankc_times(work, name, k)
        step = update + (k - 1) * micro
        eager = torch_time(name, False)
        comp = torch_time(name, True)
        print(f"| {name} | {update * 1e3:.2f} ms | {micro * 1e3:.2f} ms | {step * 1e3:.2f} ms | "
              f"{eager * 1e3:.2f} ms | {comp * 1e3:.2f} ms | {step / eager:.2f} | "
              f"{step / comp:.2f} |", flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3])
    else:
        run(sys.argv[2])
