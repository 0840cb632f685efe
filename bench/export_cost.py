#!/usr/bin/env python3
"""What export_step costs, traced with fake tensors and for real (issue 39):
examples/nanogpt's GPT (4 layers, d 256, context 256, batch 8) with AdamW,
time and peak RSS of each trace in a process of its own, and whether the two
documents are the same.

    /usr/bin/python3 bench/export_cost.py"""
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CHILD = r"""
import json, resource, sys, time
sys.path.insert(0, sys.argv[1] + '/python'); sys.path.insert(0, sys.argv[1] + '/examples/nanogpt')
import torch
from model import GPT
from rankc.export import export_step
torch.manual_seed(0)
m = GPT(96, block_size=256, layers=4, heads=4, d=256)
x = torch.randint(0, 96, (8, 256)); y = torch.randint(0, 96, (8, 256))
lf = lambda out, t: torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]), t.reshape(-1))
t = time.time()
doc = export_step(m, (x,), lf, targets=(y,), optimizer={"kind": "adamw", "lr": 1e-3},
                  fake=sys.argv[2] == "fake")
took = time.time() - t
print(json.dumps({"seconds": took, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "doc": json.dumps(doc, sort_keys=True)}))
"""


def main():
    results = {}
    for mode in ("fake", "real"):
        p = subprocess.run([sys.executable, "-c", CHILD, ROOT, mode], capture_output=True,
                           text=True, check=True)
        results[mode] = json.loads(p.stdout.strip().splitlines()[-1])
    f, r = results["fake"], results["real"]
    print(f"fake: {f['seconds']:.2f} s, peak RSS {f['rss_mb']:.0f} MB")
    print(f"real: {r['seconds']:.2f} s, peak RSS {r['rss_mb']:.0f} MB")
    print(f"time real/fake {r['seconds'] / f['seconds']:.1f}x; same document: {f['doc'] == r['doc']}")


if __name__ == "__main__":
    main()
