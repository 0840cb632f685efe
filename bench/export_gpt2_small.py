#!/usr/bin/env python3
"""GPT-2 small (124M parameters, 12 layers, d 768, 12 heads, 50257 tokens,
1024 positions with nanoGPT's mask buffers, batch 8x1024, AdamW, 2 ranks)
exported by export_step (issue 39's goal: under 60 s and 3 GB on a 2-core
machine), then `rankc check`ed. The model is test/DataParallel/gpt2_export.py's
at GPT-2's sizes.

    /usr/bin/python3 bench/export_gpt2_small.py RANKC OUT.json"""
import json
import os
import resource
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "DataParallel"))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
import gpt2_export as gpt  # noqa: E402

gpt.D, gpt.HEADS, gpt.VOCAB, gpt.BATCH = 768, 12, 50257, 8


def main():
    import torch
    import torch.nn.functional as F
    from rankc.export import export_step
    rankc, out = sys.argv[1], sys.argv[2]
    torch.manual_seed(0)
    model = gpt.GPT2()
    idx = torch.randint(0, gpt.VOCAB, (gpt.BATCH, gpt.BLOCK))
    tgt = torch.randint(0, gpt.VOCAB, (gpt.BATCH, gpt.BLOCK))
    begin = time.time()
    doc = export_step(model, (idx,), lambda o, y: F.cross_entropy(o.view(-1, gpt.VOCAB), y.view(-1)),
                      targets=(tgt,), world_size=2,
                      optimizer=torch.optim.AdamW(model.parameters(), lr=6e-4))
    took = time.time() - begin
    with open(out, "w") as f:
        json.dump(doc, f)
    params = sum(p.numel() for p in model.parameters())
    print(f"GPT-2 small: {params / 1e6:.1f}M parameters, {len(doc['programs'][0]['nodes'])} nodes; "
          f"export_step {took:.1f} s; peak RSS of the process (model, batch and export) "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")
    p = subprocess.run([rankc, "check", out], capture_output=True, text=True)
    print((p.stdout + p.stderr).strip())


if __name__ == "__main__":
    main()
