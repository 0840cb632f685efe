#!/usr/bin/env python3
"""rankc's training step profiled by CUPTI, kernel by kernel, beside
PyTorch's: the step compiled with `--emit lib --target cuda` runs inside a
Python process (rankc_program) under torch.profiler, so both sides' kernel
times come from the same tool (--kernel-stats times each launch with
events, which counts the host's gaps too).

    profile_lib.py prepare RANKC WORK NAME   here: compile models.py's NAME
    profile_lib.py run WORK NAME             on the GPU machine (device-env.sh)

Prints per side: GPU busy time per step, the GEMMs' share, and the top
kernels (name, us per step)."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402

STEPS = 5


def prepare(rankc, work, name):
    sys.path.insert(0, os.path.join(models.ROOT, "scripts"))
    import export_torch
    import torch
    kind, opt, _ = models.MODELS[name]
    torch.manual_seed(0)
    model, batch = export_torch.MODELS[kind]()
    doc = export_torch.export_step(model, (batch,), lambda y: (y * y).mean(),
                                   world_size=1, optimizer=opt)
    os.makedirs(work, exist_ok=True)
    dag = os.path.join(work, name + ".json")
    json.dump(doc, open(dag, "w"))
    flags = ["--precision", "tf32"] if name.endswith("-tf32") else []
    subprocess.run([rankc, "compile", dag, "-o", os.path.join(work, name), "--emit", "lib",
                    "--target", "cuda"] + flags, check=True)
    os.remove(dag)


def summarize(title, events, steps):
    gemm = ("gemm", "cutlass", "xmma", "cublas", "splitk")
    total, by = 0.0, {}
    for e in events:
        total += e.device_time
        by[e.name] = by.get(e.name, 0) + e.device_time
    g = sum(t for n, t in by.items() if any(x in n.lower() for x in gemm))
    print(f"{title}: GPU busy {total / steps / 1e3:.3f} ms/step, GEMMs {g / steps / 1e3:.3f} ms, "
          f"other {(total - g) / steps / 1e3:.3f} ms, {len(events) / steps:.0f} kernels/step")
    for n, t in sorted(by.items(), key=lambda x: -x[1])[:int(os.environ.get("TOP", "25"))]:
        print(f"  {t / steps:8.1f} us  {n[:110]}")


def run(work, name):
    import numpy as np
    import torch
    from torch.profiler import ProfilerActivity, profile
    models.save_inputs(work, name)
    sys.path.insert(0, os.path.join(work, name, "python"))
    import rankc_program
    prog = rankc_program.load(os.path.join(work, name))
    inputs = os.path.join(work, name, "inputs", "rank0")
    feed = {n: np.load(os.path.join(inputs, n + ".npy")) for n, _, _ in prog.inputs}
    prog.step(feed)
    light = {n: v for n, v in feed.items() if n not in prog.carried}
    for _ in range(10):
        prog.step(light)
    cuda = lambda p: [e for e in p.events()  # noqa: E731
                      if e.device_type == torch.autograd.DeviceType.CUDA]
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(STEPS):
            prog.step(light)
        torch.cuda.synchronize()
    summarize(f"rankc {name}", cuda(prof), STEPS)
    prog.close()

    # PyTorch eager, the same step (models.py's settings), the same way.
    sys.path.insert(0, os.path.join(models.ROOT, "scripts"))
    import export_torch
    torch.backends.cuda.matmul.allow_tf32 = name.endswith("-tf32")
    kind, opt, _ = models.MODELS[name]
    model, _ = export_torch.MODELS[kind]()
    with torch.no_grad():
        for pname, p in model.named_parameters():
            p.copy_(torch.from_numpy(np.load(os.path.join(inputs, pname + ".npy"))))
    model = model.cuda()
    x = torch.from_numpy(np.load(os.path.join(inputs, "input0.npy"))).cuda()
    settings = {k: v for k, v in opt.items() if k != "kind"}
    optimizer = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}[opt["kind"]](
        model.parameters(), **settings)

    def step():
        optimizer.zero_grad(set_to_none=True)
        ((model(x) ** 2).mean()).backward()
        optimizer.step()
    for _ in range(10):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(STEPS):
            step()
        torch.cuda.synchronize()
    summarize(f"eager {name}", cuda(prof), STEPS)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 4 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
