"""Issue 39: a GPT-2-shaped step exports in bounded time and memory: 12
layers, 1024 positions, nanoGPT's causal mask registered as a 1024x1024
buffer (too large a constant: it becomes an input that save_inputs
writes), traced with fake tensors (nothing computed, no intermediate kept).
The width is small for CI's time; the shape of the graph is GPT-2's.

    gpt2_export.py RANKC WORK SECONDS MEGABYTES
prints the trace mode, time and peak memory, checks the document and the
inputs written, and `rankc check`s the document."""
import math
import os
import resource
import subprocess
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from rankc.datasets import save_inputs  # noqa: E402
from rankc.export import export_step  # noqa: E402
from rankc.export import step as step_module  # noqa: E402

LAYERS, BLOCK, D, HEADS, VOCAB, BATCH = 12, 1024, 48, 2, 128, 1


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.c_attn, self.c_proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
        # nanoGPT's: a registered buffer, (1, 1, block, block).
        self.register_buffer("bias", torch.tril(torch.ones(BLOCK, BLOCK)).view(1, 1, BLOCK, BLOCK))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, HEADS, C // HEADS).transpose(1, 2) for t in (q, k, v))
        a = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        a = a.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf")).softmax(dim=-1)
        return self.c_proj((a @ v).transpose(1, 2).contiguous().view(B, T, C))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.attn, self.ln_2 = nn.LayerNorm(D), Attention(), nn.LayerNorm(D)
        self.fc, self.proj = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.proj(F.gelu(self.fc(self.ln_2(x))))


class GPT2(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(VOCAB, D), nn.Embedding(BLOCK, D)
        self.h = nn.ModuleList(Block() for _ in range(LAYERS))
        self.ln_f, self.lm_head = nn.LayerNorm(D), nn.Linear(D, VOCAB, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        for b in self.h:
            x = b(x)
        return self.lm_head(self.ln_f(x))


def main():
    rankc, work, seconds, megabytes = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
    torch.manual_seed(0)
    model = GPT2()
    idx = torch.randint(0, VOCAB, (BATCH, BLOCK))
    tgt = torch.randint(0, VOCAB, (BATCH, BLOCK))
    loss = lambda out, t: F.cross_entropy(out.view(-1, VOCAB), t.view(-1))  # noqa: E731
    modes, real_trace = [], step_module.trace

    def spy(*args):
        gm, mode = real_trace(*args)
        modes.append(mode)
        return gm, mode
    step_module.trace = spy
    begin = time.time()
    doc = export_step(model, (idx,), loss, targets=(tgt,), world_size=2,
                      optimizer=torch.optim.AdamW(model.parameters(), lr=6e-4))
    took = time.time() - begin
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("traced with:", *modes)
    nodes = doc["programs"][0]["nodes"]
    masks = [n for n in nodes if "bias" in n["id"] and n["op"] == "input"]
    print(f"exported {len(nodes)} nodes; mask inputs: {len(masks)} "
          f"{masks[0]['shape'] if masks else None}")
    print("constants above 65536 elements:",
          sum(1 for n in nodes if n["op"] == "constant" and
              math.prod(n.get("shape", [])) > 65536))
    print(f"within {seconds:.0f} s: {took <= seconds} ({took:.1f} s)")
    print(f"within {megabytes:.0f} MB: {peak <= megabytes} ({peak:.0f} MB)")
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "gpt2.json")
    import json
    with open(path, "w") as f:
        json.dump(doc, f)
    save_inputs(os.path.join(work, "in"), model, [idx, idx], [(tgt,), (tgt,)])
    import numpy as np
    files = [os.path.join(work, "in", "rank1", m["id"] + ".npy") for m in masks]
    print("mask files written:", all(os.path.exists(p) and list(np.load(p).shape) == m["shape"]
                                     for p, m in zip(files, masks)))
    p = subprocess.run([rankc, "check", path], capture_output=True, text=True)
    print("rankc check:", p.returncode, p.stderr.strip()[-500:])


if __name__ == "__main__":
    main()
