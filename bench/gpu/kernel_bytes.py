#!/usr/bin/env python3
"""The bytes a CUDA step's generated kernels move, counted statically (no GPU).

    bench/gpu/kernel_bytes.py BUILD MODEL [--f32] [--no-row-chains] [--top=N]
    bench/gpu/kernel_bytes.py BUILD STEP.json [--no-row-chains] [--top=N]

MODEL is one of bench/gpu/memory.py's (gpt6, gpt2-4k, block, ...), exported
with its optimizer in the step, under bf16 autocast unless --f32. The step
is compiled (`BUILD/bin/rankc compile --target cuda --emit mlir`) and
lowered (`BUILD/bin/rankc-opt -rankc-lower-cuda`, with `row-chains=0` for
--no-row-chains) up to rankc-gpu-merge-kernel-modules; then, for every
`gpu.launch_func` of the step, the bytes of its distinct buffers (memref
arguments traced through views and reshapes to their place in the block,
so one buffer passed twice counts once) are summed. cuBLASLt's GEMMs are
not counted. A kernel that reads a row again after another op of a row
chain read it is counted once: the premise of RowChains.h is that the row
is then in the cache. Prints the launches and the megabytes a step; with
--top=N, then the N kernels that move the most (megabytes a step over all
their launches, launches, the shapes of their first buffers): where a
kernel change pays."""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
SIZES = {"f32": 4, "bf16": 2, "f16": 2, "f64": 8, "i64": 8, "i32": 4, "i1": 1, "i8": 1,
         "index": 8}


def export(model, autocast, path):
    sys.path.insert(0, HERE)
    import memory  # noqa: E402  (sets up the exporter's paths)
    from rankc.export import export_step
    m, x, t, loss, opt = memory.setup(model)
    doc = export_step(m, (x,), loss, targets=(t,) if t is not None else (),
                      optimizer=opt, autocast=autocast)
    with open(path, "w") as f:
        json.dump(doc, f)


def nbytes(memref):
    parts = memref.split(",")[0].split("x")
    n = 1
    for p in parts[:-1]:
        n *= int(p) if p.isdigit() else 1
    return n * SIZES.get(parts[-1].strip(), 4)


def count(ir):
    consts = dict(re.findall(r"(%[\w.]+) = arith.constant (\d+) : index", ir))
    views = {}
    for m in re.finditer(r"(%[\w.]+) = memref\.(view|expand_shape|collapse_shape|subview|cast)"
                         r" (%[\w.]+)(\[[^\]]*\])?", ir):
        name, kind, src, idx = m.groups()
        shift = int(consts.get(idx.strip("[]").split(",")[0].strip(), -1)) \
            if kind == "view" and idx else 0
        views[name] = (src, kind, shift)

    def place(v):
        while v in views:
            src, kind, shift = views[v]
            if kind == "view":
                return (src, shift)
            if kind == "subview":  # a part of its source: a buffer of its own
                return (v, 0)
            v = src
        return (v, 0)

    per_kernel = {}  # name -> [bytes, launches, shapes]
    for m in re.finditer(r"gpu\.launch_func\s+@\w+::@(\w+).*?args\((.*?)\)\n", ir):
        distinct = {}
        shapes = []
        for v, t in re.findall(r"(%[\w.]+) : memref<([^>]*)>", m.group(2)):
            k = place(v)
            distinct[k] = max(distinct.get(k, 0), nbytes(t))
            shapes.append(t.split(",")[0])
        row = per_kernel.setdefault(m.group(1), [0, 0, shapes])
        row[0] += sum(distinct.values())
        row[1] += 1
    return per_kernel


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        sys.exit(__doc__)
    build, what = args
    chains = "--no-row-chains" not in sys.argv
    with tempfile.TemporaryDirectory() as work:
        step = what
        if not what.endswith(".json"):
            step = os.path.join(work, "step.json")
            export(what, None if "--f32" in sys.argv else "bf16", step)
        mlir = os.path.join(work, "step.mlir")
        subprocess.run([os.path.join(build, "bin", "rankc"), "compile", step, "--target", "cuda",
                        "--emit", "mlir", "-o", mlir], check=True)
        lowered = subprocess.run(
            [os.path.join(build, "bin", "rankc-opt"), mlir, "--mlir-disable-threading",
             "-rankc-lower-cuda=format=isa" + ("" if chains else " row-chains=0"),
             "--mlir-print-ir-after=rankc-gpu-merge-kernel-modules", "-o", os.devnull],
            check=True, capture_output=True, text=True).stderr
    per_kernel = count(lowered)
    launches = sum(r[1] for r in per_kernel.values())
    total = sum(r[0] for r in per_kernel.values())
    print(f"{what}{' f32' if '--f32' in sys.argv else ''}{'' if chains else ' no row chains'}: {launches} launches, "
          f"{total / 1e6:.1f} MB a step")
    top = [int(a.split("=")[1]) for a in sys.argv if a.startswith("--top=")]
    for name, (b, n, shapes) in sorted(per_kernel.items(), key=lambda kv: -kv[1][0])[:top[0] if top else 0]:
        print(f"  {b / 1e6:9.1f} MB {n:4d}x {name}: {' '.join(shapes[:6])}")


if __name__ == "__main__":
    main()
