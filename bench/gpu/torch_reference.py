#!/usr/bin/env python3
"""What the H200 does with PyTorch (cuBLAS and its own elementwise kernels),
for bench/gpu/run.sh to compare the generated kernels with.
    torch_reference.py N M...   prints JSON"""
import json
import sys

import torch

n, sizes = int(sys.argv[1]), [int(m) for m in sys.argv[2:]]
torch.backends.cuda.matmul.allow_tf32 = False  # f32 like the generated code
dev = torch.device("cuda")


def timed(fn, reps=20):
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    times.sort()
    return times[len(times) // 2]


x = torch.rand(n, device=dev)
y = torch.empty_like(x)
out = {"device": torch.cuda.get_device_name(),
       "copy_s": timed(lambda: y.copy_(x)),
       "scale_s": timed(lambda: torch.mul(x, 2.0, out=y)),
       "bytes": 2 * 4 * n, "matmul": {}}
for m in sizes:
    a, b = torch.rand(m, m, device=dev), torch.rand(m, m, device=dev)
    out["matmul"][m] = timed(lambda: a @ b)
print(json.dumps(out))
