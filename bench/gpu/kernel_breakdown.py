#!/usr/bin/env python3
"""Where a step's GPU time goes, kernel by kernel, rankc beside PyTorch, for
the models of autocast_speed.py (bf16 autocast; AUTOCAST=0 for f32):

    kernel_breakdown.py run WORK NAME...   on the GPU machine (device-env.sh),
                                           after `autocast_speed.py prepare`

rankc: the prepared executable's `launch --kernel-stats` (CUDA events per
launch, recorded without CUDA graphs; launches of one generated kernel
summed). PyTorch: torch.compile's default mode (Inductor's kernels, the ones
reduce-overhead replays) under torch.profiler. Prints per side the GPU time
per step, the share of GEMMs and convolutions, and the top kernels with their
launches per step. KEEP=DIR copies rankc's raw rows (name, launches, seconds,
grid, block) to DIR/NAME-kernels.json. rankc's per-launch events add a few
microseconds to every launch: with hundreds of launches a step, its total is
above the CUDA-graph step time."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import memory  # noqa: E402

STEPS = 10
TOP = int(os.environ.get("TOP", "20"))
AUTOCAST = os.environ.get("AUTOCAST", "1") != "0"
LIBRARY = ("gemm", "cutlass", "xmma", "cublas", "splitk", "conv", "cudnn", "sm90", "nvjet")


def show(title, by, launches, steps):
    """by: seconds per kernel name; launches: launches per kernel name."""
    total = sum(by.values())
    lib = sum(t for n, t in by.items() if any(x in n.lower() for x in LIBRARY))
    print(f"{title}: GPU {total / steps * 1e3:.3f} ms/step, library (GEMM, conv) "
          f"{lib / steps * 1e3:.3f} ms, other {(total - lib) / steps * 1e3:.3f} ms, "
          f"{len(by)} distinct kernels, {sum(launches.values()) / steps:.0f} launches/step")
    print("  us/step  launches/step  us/launch  kernel")
    for n, t in sorted(by.items(), key=lambda x: -x[1])[:TOP]:
        k = launches[n] / steps
        print(f"  {t / steps * 1e6:7.1f}  {k:13.1f}  {t / steps * 1e6 / k:9.2f}  {n[:90]}")


def rankc_side(work, name):
    from rankc.datasets import save_inputs
    d = os.path.join(work, name)
    m, x, t, _, _ = memory.setup(name)
    save_inputs(os.path.join(d, "in"), m, [(x,)], targets=[(t,)] if t is not None else None)
    stats = tempfile.mkdtemp()
    subprocess.run([os.path.join(d, "exe", "launch"), "--inputs", os.path.join(d, "in"),
                    "--outputs", os.path.join(d, "res"), "--steps", str(STEPS),
                    "--kernel-stats", stats, "--timeout", "500"], check=True,
                   stdout=subprocess.DEVNULL, env=dict(os.environ, RANKC_CUDA_GRAPHS="0"))
    rows = json.load(open(os.path.join(stats, "rank0.json")))
    rows = rows.get("kernels", rows) if isinstance(rows, dict) else rows
    by, launches = {}, {}
    for r in rows:
        by[r["name"]] = by.get(r["name"], 0.0) + r["seconds"]
        launches[r["name"]] = launches.get(r["name"], 0) + r["launches"]
    if os.environ.get("KEEP"):  # the raw per-kernel rows, to join with the IR
        shutil.copy(os.path.join(stats, "rank0.json"),
                    os.path.join(os.environ["KEEP"], f"{name}-kernels.json"))
    show(f"rankc {name}", by, launches, STEPS)


def torch_side(name):
    torch, m, x, t, loss_fn, opt, _ = memory.on_gpu(name)
    from torch.profiler import ProfilerActivity, profile
    fwd = torch.compile(m)
    memory.timed_steps(torch, fwd, x, t, loss_fn, opt, 5, AUTOCAST)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        memory.timed_steps(torch, fwd, x, t, loss_fn, opt, STEPS, AUTOCAST)
    by, launches = {}, {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            by[e.name] = by.get(e.name, 0.0) + e.device_time / 1e6
            launches[e.name] = launches.get(e.name, 0) + 1
    show(f"torch.compile {name}", by, launches, STEPS)


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "run":
        for n in sys.argv[3:]:
            rankc_side(sys.argv[2], n)
            subprocess.run([sys.executable, __file__, "torch", n], check=False)
    elif len(sys.argv) == 3 and sys.argv[1] == "torch":
        torch_side(sys.argv[2])
    else:
        sys.exit(__doc__)
