#!/usr/bin/env python3
"""Which kernel PyTorch's cuBLAS runs for each GEMM of the d=1024
transformer block's step, and how long it takes (f32, TF32 off), to set
beside rankc's cuBLASLt choices (`--kernel-stats`).

    python3 bench/gpu/torch_gemms.py     (on the GPU machine)"""
import torch
from torch.profiler import ProfilerActivity, profile

torch.backends.cuda.matmul.allow_tf32 = False
dev = torch.device("cuda")
# (name, A shape, B shape, op): rankc's "batch x m x n x k" shapes.
T = lambda t: t.t()  # noqa: E731
cases = [
    ("1x2048x1024x1024 tB (x W^T)", (2048, 1024), (1024, 1024), lambda a, b: a @ b.t()),
    ("1x2048x4096x1024 tB", (2048, 1024), (4096, 1024), lambda a, b: a @ b.t()),
    ("1x2048x1024x4096 tB", (2048, 4096), (1024, 4096), lambda a, b: a @ b.t()),
    ("1x1024x1024x2048 tA (dW)", (2048, 1024), (2048, 1024), lambda a, b: a.t() @ b),
    ("1x1024x4096x2048 tA", (2048, 1024), (2048, 4096), lambda a, b: a.t() @ b),
    ("1x2048x1024x1024 (dX = dY W)", (2048, 1024), (1024, 1024), lambda a, b: a @ b),
]
for name, sa, sb, f in cases:
    a, b = torch.randn(sa, device=dev), torch.randn(sb, device=dev)
    for _ in range(5):
        f(a, b)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(20):
            f(a, b)
        torch.cuda.synchronize()
    evs = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    us = sum(e.device_time for e in evs) / 20
    print(f"{name}: {us:.1f} us  {sorted({e.name for e in evs})}")
