#!/usr/bin/env python3
"""Training steps side by side on one GPU: rankc's compiled step against
PyTorch eager and torch.compile, same model, same inputs, same optimizer
(issue 11's benchmark).

    bench/gpu/models.py prepare RANKC WORK   here: exports, compiles (cuda)
    bench/gpu/models.py run WORK             on the GPU machine (MPICH
                                             unpacked, RANKC_MPIEXEC set)

A step is forward, backward and the optimizer's update of every parameter
(the exported DAG's version 2 step). rankc: `launch --steps S`, the median
step of `--stats` (host wall clock of the step, which waits for the GPU);
kernels per step from `--kernel-stats` (a cuBLASLt GEMM counts as one).
PyTorch: the same step (zero_grad, loss, backward, opt.step) timed with CUDA
events, median of S after warm-up; kernels per step from torch.profiler. TF32
is off in PyTorch, as rankc's f32 is exact f32, except for the "-tf32" rows
(rankc --precision tf32, PyTorch allow_tf32). The final loss of both after
S steps is printed as a check that the two trained the same thing."""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
STEPS = 30
# name: (export_torch model, optimizer, title)
MODELS = {
    "block-xl": ("transformer-xl", {"kind": "adam", "lr": 1e-4},
                 "TransformerBlock(1024, 4096) [8, 256, 1024] Adam"),
    # TF32 on both sides: --precision tf32 against PyTorch's
    # float32_matmul_precision("high").
    "block-xl-tf32": ("transformer-xl", {"kind": "adam", "lr": 1e-4},
                      "TransformerBlock(1024, 4096) Adam, TF32 both sides"),
    "block": ("transformer-large", {"kind": "adam", "lr": 1e-3},
              "TransformerBlock(256, 1024) [4, 64, 256] Adam"),
    "mlp": ("mlp-large", {"kind": "sgd", "lr": 0.01, "momentum": 0.9},
            "MLP 512-1024x4-16 batch 64 SGD+momentum"),
    "mlp-wide": ("mlp-wide", {"kind": "sgd", "lr": 0.01, "momentum": 0.9},
                 "MLP 1024-4096-4096-1024 batch 512 SGD+momentum"),
}


def prepare(rankc, work, only):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import export_torch
    import torch
    os.makedirs(work, exist_ok=True)
    meta = {}
    for name, (kind, opt, title) in MODELS.items():
        if only and name not in only:
            continue
        torch.manual_seed(0)
        model, batch = export_torch.MODELS[kind]()
        doc = export_torch.export_step(model, (batch,), lambda y: (y * y).mean(),
                                       world_size=1, optimizer=opt)
        dag = os.path.join(work, name + ".json")
        json.dump(doc, open(dag, "w"))
        t = time.perf_counter()
        flags = ["--precision", "tf32"] if name.endswith("-tf32") else []
        subprocess.run([rankc, "compile", dag, "-o", os.path.join(work, name),
                        "--target", "cuda"] + flags, check=True)
        meta[name] = {"compile_s": time.perf_counter() - t,
                      "nodes": len(doc["programs"][0]["nodes"])}
        os.remove(dag)
    json.dump(meta, open(os.path.join(work, "meta.json"), "w"))


def rankc_step(work, name):
    d = os.path.join(work, name)
    stats, kstats = os.path.join(d, "stats.json"), os.path.join(d, "kernels")
    subprocess.run([os.path.join(d, "launch"), "--inputs", os.path.join(d, "inputs"),
                    "--outputs", os.path.join(d, "res"), "--steps", str(STEPS),
                    "--stats", stats], check=True, stdout=subprocess.DEVNULL)
    replay = json.load(open(stats))["replay"]
    r = json.load(open(stats))["ranks"][0]
    # The same steps launched kernel by kernel (no CUDA graphs), for the record.
    subprocess.run([os.path.join(d, "launch"), "--inputs", os.path.join(d, "inputs"),
                    "--outputs", os.path.join(d, "res"), "--steps", str(STEPS),
                    "--stats", stats], check=True, stdout=subprocess.DEVNULL,
                   env=dict(os.environ, RANKC_CUDA_GRAPHS="0"))
    unreplayed = json.load(open(stats))["ranks"][0]["median"]["wall"]
    # Kernel timing adds events around every launch: a second run for it.
    subprocess.run([os.path.join(d, "launch"), "--inputs", os.path.join(d, "inputs"),
                    "--outputs", os.path.join(d, "res"), "--steps", str(STEPS),
                    "--kernel-stats", kstats], check=True, stdout=subprocess.DEVNULL)
    ks = json.load(open(os.path.join(kstats, "rank0.json")))["kernels"]
    import numpy as np
    loss = float(np.load(os.path.join(d, "res", "rank0", "loss.npy")))
    return {"step_s": r["median"]["wall"], "replay": replay, "unreplayed_s": unreplayed,
            "kernels": sum(k["launches"] for k in ks) / STEPS,
            "busy_s": sum(k["seconds"] for k in ks) / STEPS,
            "gemm_s": sum(k["seconds"] for k in ks if k["name"].startswith("cublasLt")) / STEPS,
            "memory": r["device_used_bytes"], "loss": loss, "top": sorted(
                ks, key=lambda k: -k["seconds"])[:int(os.environ.get("TOP", "8"))]}


def torch_step(work, name, compiled):
    import numpy as np
    import torch
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import export_torch
    tf32 = name.endswith("-tf32")
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):  # PyTorch >= 2.9
        torch.backends.cuda.matmul.fp32_precision = "tf32" if tf32 else "ieee"
    else:
        torch.set_float32_matmul_precision("high" if tf32 else "highest")
        torch.backends.cuda.matmul.allow_tf32 = tf32
    kind, opt, _ = MODELS[name]
    model, _ = export_torch.MODELS[kind]()
    inputs = os.path.join(work, name, "inputs", "rank0")
    with torch.no_grad():
        for pname, p in model.named_parameters():
            p.copy_(torch.from_numpy(np.load(os.path.join(inputs, pname + ".npy"))))
    dev = torch.device("cuda")
    model = model.to(dev)
    x = torch.from_numpy(np.load(os.path.join(inputs, "input0.npy"))).to(dev)
    settings = {k: v for k, v in opt.items() if k != "kind"}
    optimizer = {"sgd": torch.optim.SGD, "adam": torch.optim.Adam}[opt["kind"]](
        model.parameters(), **settings)
    forward = torch.compile(model) if compiled else model
    torch.cuda.reset_peak_memory_stats()

    def step():
        optimizer.zero_grad(set_to_none=True)
        loss = (forward(x) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss

    # The loss check: STEPS steps from the same start as rankc's run.
    for _ in range(STEPS):
        loss = step()
    final = float(loss.detach())
    times = []
    for _ in range(STEPS):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        step()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(5):
            step()
        torch.cuda.synchronize()
    cuda = [ev for ev in prof.events() if ev.device_type == torch.autograd.DeviceType.CUDA]
    kernels = len(cuda) / 5
    # GPU time per step, and the GEMMs' share (cuBLAS/CUTLASS kernel names).
    gemm = ("gemm", "cutlass", "sm90_xmma", "cublas")
    busy = sum(ev.device_time for ev in cuda) / 5 / 1e6
    busy_gemm = sum(ev.device_time for ev in cuda
                    if any(g in ev.name.lower() for g in gemm)) / 5 / 1e6
    free, total = torch.cuda.mem_get_info()  # as rankc's --stats measures it
    return {"step_s": statistics.median(times), "kernels": kernels,
            "memory": total - free, "loss": final, "busy_s": busy, "gemm_s": busy_gemm}


def save_inputs(work, name):
    """The step's inputs, made where they run (the larger models' weights
    would not fit in what the device tool carries): the model as export_torch
    builds it, its parameters and batch as .npy for both sides."""
    import torch
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import export_torch
    torch.manual_seed(0)
    model, batch = export_torch.MODELS[MODELS[name][0]]()
    export_torch.save_inputs(os.path.join(work, name, "inputs"), model, [batch])


def run(work, only):
    meta = json.load(open(os.path.join(work, "meta.json")))
    rows = []
    for name, (_, _, title) in MODELS.items():
        if name not in meta or (only and name not in only):
            continue
        save_inputs(work, name)
        r = rankc_step(work, name)
        eager = torch_step(work, name, False)
        try:
            comp = torch_step(work, name, True)
        except Exception as e:  # torch.compile needs a working Triton
            print(f"torch.compile failed on {name}: {e}", file=sys.stderr)
            comp = None
        rows.append((name, title, r, eager, comp))
        print(f"{name}: GPU busy per step: rankc {r['busy_s'] * 1e3:.3f} ms (GEMMs "
              f"{r['gemm_s'] * 1e3:.3f}), eager {eager['busy_s'] * 1e3:.3f} ms (GEMMs "
              f"{eager['gemm_s'] * 1e3:.3f})", file=sys.stderr)
        print(f"{name}: rankc {r['step_s'] * 1e3:.3f} ms ({r['replay']}); without "
              f"CUDA graphs {r['unreplayed_s'] * 1e3:.3f} ms", file=sys.stderr)
        print(f"{name}: rankc's top kernels (s over {STEPS} steps):", file=sys.stderr)
        for k in r["top"]:
            print(f"  {k['seconds']:.5f} x{k['launches']} {k['name']} grid {k['grid']} "
                  f"block {k['block']}", file=sys.stderr)
    ms = lambda s: f"{s * 1e3:.3f}"
    # GPU MB: in use on the device after the steps (cuMemGetInfo, both
    # sides: the CUDA context, the libraries' workspaces and every buffer).
    print("| step (1 GPU) | rankc ms | eager ms | rankc/eager | compile ms | rankc/compile "
          "| kernels rankc/eager/compile | GPU MB rankc/eager | loss rankc vs eager "
          "| rankc compile s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, title, r, e, c in rows:
        cs = f"{ms(c['step_s'])} | {r['step_s'] / c['step_s']:.2f}" if c else "- | -"
        ck = f"{c['kernels']:.0f}" if c else "-"
        print(f"| {title} | {ms(r['step_s'])} | {ms(e['step_s'])} | "
              f"{r['step_s'] / e['step_s']:.2f} | {cs} | {r['kernels']:.0f}/{e['kernels']:.0f}/{ck} "
              f"| {r['memory'] / 2**20:.0f}/{e['memory'] / 2**20:.0f} "
              f"| {r['loss']:.6g} vs {e['loss']:.6g} | {meta[name]['compile_s']:.1f} |",
              flush=True)


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3], sys.argv[4:])
    elif len(sys.argv) >= 3 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
