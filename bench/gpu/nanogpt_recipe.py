#!/usr/bin/env python3
"""GPT-2 small's training step against PyTorch as nanoGPT runs it (issue
40's anchor): bf16 autocast, F.scaled_dot_product_attention (flash
attention), fused AdamW, torch.compile.

    bench/gpu/autocast_speed.py prepare RANKC WORK gpt2-4k   here
    bench/gpu/nanogpt_recipe.py run WORK                     on the GPU machine
                                                             (. scripts/device-env.sh)

The model is memory.py's gpt2-4k: examples/nanogpt's GPT at GPT-2 small's
size (12 layers, 12 heads, d 768, context 1024, the vocabulary padded to
50304 as nanoGPT pads it, the head tied to the token embedding), 4x1024
tokens a step, AdamW (one parameter group: the exporter's). rankc runs the
step exported under autocast="bf16" (`launch --steps 40 --stats`, median of
the last 20, host wall time). PyTorch runs the same weights, batch and
optimizer settings, each in a process of its own, 40 steps, median of the
last 20 by CUDA events:
  recipe           flash attention, AdamW(fused=True), torch.compile, bf16 autocast
  recipe, eager    the same without torch.compile
  written-out      the exported form of attention (no flash), bf16 eager
Each row gives tokens per second, the model FLOP utilization as nanoGPT's
estimate_mfu counts it (6N + 12 L H Q T FLOPs a token, N without the
position embedding) against the card's dense bf16 peak, and the device
memory in use (total minus free) after the last step. TF32 off."""
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import autocast_speed  # noqa: E402
import memory  # noqa: E402

NAME, STEPS = "gpt2-4k", 40
# Dense bf16 peak (FLOP/s) of the SXM cards this runs on (NVIDIA's sheets).
PEAK = {"H100": 989.4e12, "H200": 989.4e12}
MODES = ("recipe", "recipe, eager", "written-out")


def flops_per_token(m):
    n = sum(p.numel() for p in m.parameters()) - m.pos.weight.numel()
    b = m.blocks[0]
    layers, heads, q = len(m.blocks), b.heads, b.qkv.in_features // b.heads
    return 6 * n + 12 * layers * heads * q * m.pos.weight.shape[0]


def torch_side(mode):
    """In a process of its own: prints {step_s, used, loss}."""
    torch, m, x, t, loss_fn, opt, _ = memory.on_gpu(NAME)
    if mode != "written-out":
        for b in m.blocks:
            b.flash = True
        g = opt.param_groups[0]
        opt = torch.optim.AdamW(m.parameters(), lr=g["lr"], betas=g["betas"],
                                weight_decay=g["weight_decay"], fused=True)
    fwd = torch.compile(m) if mode == "recipe" else m
    times, loss = memory.timed_steps(torch, fwd, x, t, loss_fn, opt, STEPS, True)
    free, total = torch.cuda.mem_get_info()
    print(json.dumps({"step_s": statistics.median(times[STEPS // 2:]),
                      "used": total - free, "loss": float(loss),
                      "device": torch.cuda.get_device_name()}))


def run(work):
    from rankc.datasets import save_inputs
    d = os.path.join(work, NAME)
    m, x, t, _, _ = memory.setup(NAME)
    tokens = x.numel()
    fpt = flops_per_token(m)
    save_inputs(os.path.join(d, "in"), m, [(x,)], targets=[(t,)])
    rows = {}
    for mode in MODES:
        p = subprocess.run([sys.executable, __file__, "torch", mode], capture_output=True,
                           text=True, env=os.environ)
        lines = p.stdout.strip().splitlines()
        if p.returncode != 0 or not lines:
            print(f"{mode}: failed: {p.stderr.strip()[-600:]}", file=sys.stderr)
            continue
        rows[mode] = json.loads(lines[-1])
    device = next(iter(rows.values()))["device"] if rows else "?"
    peak = next((v for k, v in PEAK.items() if k in device), None)
    ours = autocast_speed.rankc_step_s(d)
    stats = json.load(open(os.path.join(d, "stats.json")))["ranks"][0]
    rows = {"rankc": {"step_s": ours, "used": stats.get("device_used_bytes", 0)}, **rows}
    print(f"{device}; {tokens} tokens a step, {fpt / 1e6:.1f} MFLOP a token; "
          f"peak {peak / 1e12 if peak else float('nan'):.0f} TFLOP/s")
    print("| GPT-2 small, 4x1024, bf16 autocast, AdamW | ms a step | tokens/s | MFU "
          "| GB in use | rankc / this |")
    print("|---|---|---|---|---|---|")
    for k, r in rows.items():
        s = r["step_s"]
        mfu = f"{fpt * tokens / s / peak * 100:.1f}%" if peak else "-"
        print(f"| {k} | {s * 1e3:.2f} | {tokens / s / 1e3:.0f}k | {mfu} "
              f"| {r['used'] / 2**30:.2f} | {ours / s:.2f} |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "run":
        run(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "torch":
        torch_side(sys.argv[2])
    else:
        sys.exit(__doc__)
