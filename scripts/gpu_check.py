#!/usr/bin/env python3
"""The CUDA backend against the CPU backend, on the same DAGs and inputs.

    gpu_check.py prepare RANKC WORK   (here: needs MPICH, NumPy, split-file)
    gpu_check.py compare WORK         (on the GPU machine: needs NumPy)

prepare collects the DAGs (examples/, examples/pytato/, every op of the spec
from test/Frontend, the data-parallel MLP step, random deadlock-free programs
on 1 to 4 ranks with a fixed seed), writes each one's inputs, compiles it
for both targets, runs the CPU build and keeps its outputs:
WORK/<dag>/{dag.json, in/, cpu/, cuda/ (OUT of --target cuda), steps}.
Some cases run many steps (launch --steps: state carried, parameters
updated by the optimizer), on both targets alike. Some write inputs of
their own (indices in range, a model zoo's batches and targets); some must
fail on both targets with the same message (WORK/<dag>/expect_error), as an
index out of range does.
compare runs every cuda/launch (with $RANKC_MPIEXEC, $LD_LIBRARY_PATH as
set by the caller) and compares each rank's outputs with the CPU's, within
the tolerances of test/E2E (exact for integers and bool). Prints one line
per DAG and "N passed, M failed"; exits 1 on any failure."""
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOL = {"float16": (2e-2, 2e-2), "float32": (2e-4, 1e-5), "float64": (1e-9, 1e-12)}


def write_dag(work, name, doc):
    """Writes `doc` to WORK/NAME.json; returns that path."""
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def bf16_integers(v, shape):
    """Input `v` (f32, standard normal) as small integers in bf16 (node
    `v`b): floor(4 v), exact in bf16, their products' sums exact in f32.
    Needs the constant node "four"."""
    return [{"id": v, "op": "input", "shape": shape, "dtype": "f32"},
            {"id": v + "s", "op": "mul", "args": [v, "four"]},
            {"id": v + "i", "op": "floor", "args": [v + "s"]},
            {"id": v + "b", "op": "cast", "args": [v + "i"], "dtype": "bf16"}]


def dags(work):
    """(name, path) of every DAG to check, run for one step; see steps()."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "examples", "*.json")) +
                       glob.glob(os.path.join(ROOT, "examples", "pytato", "*.json"))):
        out.append((os.path.splitext(os.path.basename(path))[0], path))
    split = os.path.join(work, "split")
    for test, member in [("unary", "unary.json"), ("binary", "binary.json"),
                         ("contraction", "c.json"), ("reduction", "r.json"),
                         ("shape", "s.json"), ("leaves", "leaves.json")]:
        subprocess.run(["split-file", os.path.join(ROOT, "test", "Frontend", test + ".test"),
                        os.path.join(split, test)], check=True)
        out.append(("ops-" + test, os.path.join(split, test, member)))
    out.append(("dp-mlp", os.path.join(ROOT, "test", "DataParallel", "Inputs",
                                       "torch2.11-mlp.json")))
    # Row chains (RowChains.h; on in every CUDA build of the check): a
    # softmax over rows of 72 and a layer norm over rows of 100 (neither a
    # multiple of a warp), 768 and 300 rows (300: the last block's rows
    # overhang), their quotients and normalized rows read by GEMMs.
    out.append(("row-chains", os.path.join(ROOT, "test", "Target", "Inputs",
                                           "row-chains-check.json")))
    # Version 2's conv (1-3 spatial axes, groups, padding, dilations, f16,
    # f64) and pool (max, argmax with ties and NaN, sum, mean, integers).
    out.append(("window", os.path.join(ROOT, "test", "E2E", "Inputs", "window.json")))
    # take and scatter_add (constant indices, repeated ones, 2 ranks).
    out.append(("indexing", os.path.join(ROOT, "test", "E2E", "Inputs", "indexing.json")))
    # Edge cases: an empty slice (kernels over nothing), 0-d values, a sum
    # to a scalar (one-thread kernel), odd sizes (no vector path), an
    # allreduce of f16 on 2 ranks.
    edge = {"world_size": 2, "programs": [{"ranks": "all", "nodes": [
        {"id": "x", "op": "input", "shape": [4, 8], "dtype": "f32"},
        {"id": "h", "op": "input", "shape": [5, 3], "dtype": "f16"},
        {"id": "empty", "op": "slice", "args": ["x"], "begin": [0, 2], "end": [4, 2],
         "step": [1, 1]},
        {"id": "e", "op": "exp", "args": ["empty"]},
        {"id": "t", "op": "sum", "args": ["x"]},
        {"id": "m", "op": "max", "args": ["x"], "axes": [0]},
        {"id": "odd", "op": "tanh", "args": ["h"]},
        {"id": "r", "op": "allreduce", "args": ["odd"], "reduce": "sum", "tag": "g"},
        {"id": "col", "op": "slice", "args": ["x"], "begin": [0, 1], "end": [4, 8],
         "step": [2, 3]},
        # A vectorized 3-D elementwise chain whose rows span several vectors
        # (tiling once dropped all but each tile's first vector).
        {"id": "a3", "op": "input", "shape": [2, 5, 16], "dtype": "f32"},
        {"id": "b3", "op": "input", "shape": [2, 5, 16], "dtype": "f32"},
        {"id": "d3", "op": "sub", "args": ["a3", "b3"]},
        {"id": "sq3", "op": "mul", "args": ["d3", "d3"]}],
        "outputs": {"e": "e", "t": "t", "m": "m", "r": "r", "col": "col", "sq3": "sq3"}}]}
    path = os.path.join(work, "edge.json")
    with open(path, "w") as f:
        json.dump(edge, f)
    out.append(("edge-cases", path))
    # The new GPU paths (issue 11): GEMMs of odd shapes through cuBLASLt,
    # transposed and batched einsums; reductions of 1 to 10^8 elements (a
    # tree of parallel stages) along rows, columns and to a scalar; the
    # allreduces of a world of one (no collective), also through a one-rank
    # NCCL communicator (RANKC_NCCL=1 in the case's env file).
    gemm = {"world_size": 1, "programs": [{"ranks": "all", "nodes": [
        {"id": "a", "op": "input", "shape": [33, 17], "dtype": "f32"},
        {"id": "b", "op": "input", "shape": [17, 65], "dtype": "f32"},
        {"id": "c", "op": "input", "shape": [29, 17], "dtype": "f32"},
        {"id": "p", "op": "input", "shape": [3, 5, 7], "dtype": "f32"},
        {"id": "q", "op": "input", "shape": [3, 9, 7], "dtype": "f64"},
        {"id": "q32", "op": "input", "shape": [3, 9, 7], "dtype": "f32"},
        {"id": "pd", "op": "input", "shape": [3, 5, 7], "dtype": "f64"},
        {"id": "ab", "op": "matmul", "args": ["a", "b"]},
        {"id": "act", "op": "einsum", "spec": "ik,jk->ij", "args": ["a", "c"]},
        {"id": "atb", "op": "einsum", "spec": "ki,kj->ij", "args": ["a", "a"]},
        {"id": "pq", "op": "einsum", "spec": "bij,bkj->bik", "args": ["p", "q32"]},
        {"id": "pqd", "op": "einsum", "spec": "bij,bkj->bki", "args": ["pd", "q"]},
        {"id": "heads", "op": "einsum", "spec": "bij,bkj->ik", "args": ["p", "q32"]},
        # One B for every batch (A transposed per batch): stride-0 batches.
        {"id": "w", "op": "input", "shape": [5, 9], "dtype": "f32"},
        {"id": "shared", "op": "einsum", "spec": "bki,kj->bij", "args": ["p", "w"]}],
        "outputs": {n: n for n in ["ab", "act", "atb", "pq", "pqd", "heads", "shared"]}}]}
    red_nodes = [
        {"id": "big", "op": "iota", "shape": [100000000], "dtype": "f64", "axis": 0},
        {"id": "grid", "op": "iota", "shape": [4096, 8192], "dtype": "f32", "axis": 1},
        {"id": "k", "op": "constant", "value": 1e-4, "dtype": "f32"},
        {"id": "scaled", "op": "mul", "args": ["grid", "k"]},
        {"id": "rows", "op": "sum", "args": ["scaled"], "axes": [1]},
        {"id": "cols", "op": "sum", "args": ["scaled"], "axes": [0]},
        {"id": "colmax", "op": "max", "args": ["scaled"], "axes": [0]},
        {"id": "total_big", "op": "sum", "args": ["big"]},
        {"id": "mean_big", "op": "mean", "args": ["big"]}]
    outputs = {n: n for n in ["rows", "cols", "colmax", "total_big", "mean_big"]}
    for n in (1, 1000, 1000000):
        red_nodes += [{"id": f"x{n}", "op": "input", "shape": [n], "dtype": "f32"},
                      {"id": f"sum{n}", "op": "sum", "args": [f"x{n}"]},
                      {"id": f"max{n}", "op": "max", "args": [f"x{n}"]}]
        outputs.update({f"sum{n}": f"sum{n}", f"max{n}": f"max{n}"})
    reductions = {"world_size": 1, "programs": [{"ranks": "all", "nodes": red_nodes,
                                                 "outputs": outputs}]}
    # The same GEMMs of f16 (f32 accumulation, dag-format.md v3): cuBLASLt
    # reads f16 A and B into an f32 C (rankc_rt_gemm's RANKC_F16).
    gemm16 = json.loads(json.dumps(gemm).replace('"f32"', '"f16"'))
    for name, doc in [("gemm-shapes", gemm), ("gemm-shapes-tf32", gemm),
                      ("gemm-shapes-f16", gemm16), ("reductions", reductions)]:
        path = write_dag(work, name, doc)
        out.append((name, path))
    # Large enough to be built in pieces, with the schedule cut into
    # functions (lib/Target/ProgramPieces.cpp, rankc-split-glue-functions):
    # on CUDA, the launching functions too (rankc-gpu-launch-to-llvm).
    pieces = os.path.join(work, "glue-pieces.json")
    subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_dag.py"),
                    "20000", "2", pieces, "--bounded"], check=True,
                   stdout=subprocess.DEVNULL)
    out.append(("glue-pieces", pieces))
    one = os.path.join(ROOT, "test", "E2E", "Inputs", "allreduce-one.json")
    out += [("allreduce-one", one), ("allreduce-one-nccl", one)]
    sys.path.insert(0, os.path.join(ROOT, "test", "Random"))
    import random_dags
    rng = random.Random(6)
    for i in range(16):
        ranks = [1, 2][i % 2] if i < 12 else rng.randint(3, 4)
        b = random_dags.Builder(rng, ranks)
        b.valid_traffic(rng.randint(3, 20))
        path = os.path.join(work, f"random{i}.json")
        with open(path, "w") as f:
            json.dump(b.document(), f)
        out.append((f"random{i}-{ranks}ranks", path))
    return out


def stepped(work):
    """(name, path, steps): DAGs run for many steps in one process."""
    out = [("heat-20steps", os.path.join(ROOT, "examples", "heat.json"), 20),
           # --emit lib: the CUDA library stepped from Python (lib_runner.py).
           ("heat-20steps-lib", os.path.join(ROOT, "examples", "heat.json"), 20),
           ("state-mpmd-7steps-lib", os.path.join(ROOT, "test", "E2E", "Inputs", "state-mpmd.json"), 7),
           ("state-mpmd-7steps", os.path.join(ROOT, "test", "E2E", "Inputs", "state-mpmd.json"), 7),
           # One rank: steps 2 on replay from CUDA graphs (a pass-through
           # swap moved between arenas, a world of one's allreduce); the
           # same with replay off, and from Python through the library.
           ("state-one-9steps-replay", os.path.join(ROOT, "test", "E2E", "Inputs", "state-one.json"), 9),
           ("state-one-9steps-nographs", os.path.join(ROOT, "test", "E2E", "Inputs", "state-one.json"), 9),
           ("state-one-9steps-lib", os.path.join(ROOT, "test", "E2E", "Inputs", "state-one.json"), 9)]
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import export_torch
    import torch
    for kind, opt, steps, ws in [("mlp", {"kind": "sgd", "lr": 0.1, "momentum": 0.9}, 5, 2),
                             ("mlp", {"kind": "adam", "lr": 0.01}, 5, 2),
                             ("transformer", None, 1, 2),
                             # (lr 0.1 diverges on this block: loss ~2000
                             # after 5 steps, where any rounding difference
                             # grows without bound; 0.01 trains.)
                             ("transformer", {"kind": "sgd", "lr": 0.01, "momentum": 0.9}, 5, 2),
                             ("transformer", {"kind": "adam", "lr": 0.01}, 1, 2),
                             ("transformer", {"kind": "adam", "lr": 0.01}, 5, 2),
                             # One rank: replayed from CUDA graphs.
                             ("transformer", {"kind": "adam", "lr": 0.01}, 6, 1)]:
        torch.manual_seed(0)
        model, batch = export_torch.MODELS[kind]()
        if kind == "transformer" and opt and opt["kind"] == "adam":
            # Its gradient is zero in exact arithmetic (softmax ignores a
            # shift common to all keys): Adam turns either backend's
            # rounding noise into full steps (test/DataParallel/train.test).
            model.k.bias.requires_grad_(False)
        doc = export_torch.export_step(model, (batch,), lambda y: (y * y).mean(),
                                       world_size=ws, bucket_cap_mb=0.002,
                                       first_bucket_cap_mb=0.001, optimizer=opt)
        name = f"train-{kind}-{opt['kind'] if opt else 'grads'}-{steps}steps"
        if ws == 1:
            name += "-1rank-replay"
        path = write_dag(work, name, doc)
        out.append((name, path, steps))
        if kind == "mlp" and opt and opt["kind"] == "adam":
            out.append((name + "-lib", path, steps))
    return out


def with_inputs(work):
    """(name, path, steps, write_inputs(folder), expected error or None):
    cases whose inputs are not make_input's (indices must be in range)."""
    out = []
    rng = np.random.default_rng(1)
    # take and scatter_add with run-time indices on the GPU: many threads
    # meeting at repeated indices (atomics) in every dtype, a 3-d take along
    # axis 1, and an index out of range (the device-side record).
    V, D, N = 1000, 64, 4096
    nodes = [{"id": "emb", "op": "input", "shape": [V, D], "dtype": "f32"},
             {"id": "ids", "op": "input", "shape": [N], "dtype": "i32"},
             {"id": "rows", "op": "take", "args": ["emb", "ids"], "axis": 0},
             {"id": "g", "op": "input", "shape": [N, D], "dtype": "f32"},
             {"id": "demb", "op": "scatter_add", "args": ["emb", "ids", "g"], "axis": 0},
             {"id": "cube", "op": "input", "shape": [3, 50, 5], "dtype": "f64"},
             {"id": "pick", "op": "input", "shape": [2, 7], "dtype": "i64"},
             {"id": "picked", "op": "take", "args": ["cube", "pick"], "axis": 1},
             {"id": "few", "op": "input", "shape": [8], "dtype": "i64"}]
    outputs = {"rows": "rows", "demb": "demb", "picked": "picked"}
    for dt in ("f16", "f64", "i32", "i8"):
        nodes += [{"id": f"base_{dt}", "op": "input", "shape": [3, 8], "dtype": dt},
                  {"id": f"upd_{dt}", "op": "input", "shape": [3, 8], "dtype": dt},
                  {"id": f"sc_{dt}", "op": "scatter_add",
                   "args": [f"base_{dt}", "few", f"upd_{dt}"], "axis": -1}]
        outputs[f"sc_{dt}"] = f"sc_{dt}"
    doc = {"format": "rankc-dag", "version": 2, "world_size": 1,
           "programs": [{"ranks": "all", "nodes": nodes, "outputs": outputs}]}
    path = write_dag(work, "gather-scatter", doc)

    def gather_inputs(bad):
        def write(folder):
            sys.path.insert(0, os.path.join(ROOT, "test", "E2E"))
            import e2e
            d = os.path.join(folder, "rank0")
            for node in nodes:
                if node["op"] == "input":
                    e2e.save(os.path.join(d, node["id"] + ".npy"), e2e.make_input(rng, node),
                             node["dtype"])
            ids = rng.integers(0, 40, size=N).astype(np.int32)  # many repeats
            if bad:
                ids[3001] = V  # the one bad index among 4096
            np.save(os.path.join(d, "ids.npy"), ids)
            np.save(os.path.join(d, "pick.npy"), rng.integers(0, 50, size=(2, 7)))
            np.save(os.path.join(d, "few.npy"), np.array([7, 0, 7, 7, 3, 0, 1, 7]))
        return write
    out.append(("gather-scatter", path, 1, gather_inputs(False), None))
    # Steps 2 on from CUDA graph recordings: the record is read after each.
    out.append(("gather-scatter-6steps-replay", path, 6, gather_inputs(False), None))
    out.append(("gather-scatter-bad-index", path, 1, gather_inputs(True),
                "node 'rows': index 1000 is out of range [0, 1000)"))
    # The zoo's models with indices and windows (test/DataParallel/zoo.py):
    # embeddings and a tied head (take, scatter_add), convolutions, batch
    # norm and max pooling (pool argmax, scatter_add), trained on 2 ranks.
    # (resnet18's weights and gradients, 180 MB, are more than the device
    # tool carries: bench/gpu/zoo_gpu.py runs it, inputs made there.)
    sys.path.insert(0, os.path.join(ROOT, "test", "DataParallel"))
    import zoo
    import export_torch
    # (SGD for the GPT: the k third of its fused qkv bias has a gradient of
    # zero in exact arithmetic, softmax ignoring a shift common to all keys,
    # and Adam turns either backend's rounding noise there into full steps.)
    # Each also under bf16 autocast (issue 40): bf16 GEMMs on tensor cores
    # (rankc-gpu-narrow-contractions) against the CPU's exact f32 ones.
    sgd = {"kind": "sgd", "lr": 0.1, "momentum": 0.9}
    for name, autocast in [("gpt-tied-ce", None), ("lenet-bn-ce", None),
                           ("gpt-tied-ce", "bf16"), ("lenet-bn-ce", "bf16")]:
        model, batches, targets, loss_fn, start = zoo.setup(name, 2)
        doc = export_torch.export_step(model, batches[0], loss_fn, targets=targets[0],
                                       world_size=2, bucket_cap_mb=0.0005,
                                       first_bucket_cap_mb=0.0002, optimizer=sgd,
                                       autocast=autocast)
        model.load_state_dict(start)
        case = (f"autocast-bf16-{name}-3steps" if autocast else f"zoo-{name}-sgd-3steps")
        path = write_dag(work, case, doc)

        def write(folder, model=model, batches=batches, targets=targets):
            export_torch.save_inputs(folder, model, batches, targets)
        out.append((case, path, 3, write, None))
    out += version3(work)
    return out


# Extra launch arguments of a case (both backends' runs).
LAUNCH_ARGS = {}

# Cases also stopped at a step (a checkpoint) and resumed: the outputs must
# equal the uninterrupted run's bit for bit (issue 38; cli.md --resume), with
# CUDA-graph replay, feeds and shuffling, and accumulation mid-window (5).
RESUME_AT = {"v3-optimizer-adamw-12steps": 5,
             "v3-optimizer-accumulate-1rank-12steps-replay": 5,
             "v3-feed-shuffle-9steps-replay": 4,
             "v3-feed-large-shuffle-9steps-replay": 5,
             "state-one-9steps-replay": 4,
             "state-one-9steps-nographs": 4,
             "train-transformer-adam-6steps-1rank-replay": 3,
             "train-transformer-adam-5steps": 2,
             "train-mlp-adam-5steps": 2,
             "v3-heat-2x2-20steps": 7}


def version3(work):
    """dag-format.md v3 on the GPU: rem, unsigned dtypes and the step leaf
    (5 steps), mixed-precision accumulation, the heat equation on 2x2 and
    2x2x2 process grids (grid peers with fill), a fed one-rank step
    (a new row every step, shuffled, replayed from CUDA graphs), and the
    optimizer's schedules, clipping and accumulation."""
    out = []
    sys.path.insert(0, os.path.join(ROOT, "examples", "heat2d"))
    import make_heat
    for name, grid, block in [("v3-heat-2x2-20steps", [2, 2], [6, 5]),
                              ("v3-heat-2x2x2-20steps", [2, 2, 2], [3, 4, 3])]:
        path = os.path.join(work, name + ".json")
        with open(path, "w") as f:
            json.dump(make_heat.generate(grid, block), f)
        out.append((name, path, 20, None, None))
    inputs = os.path.join(ROOT, "test", "E2E", "Inputs")
    out.append(("v3-ops-5steps", os.path.join(inputs, "v3-ops.json"), 5, None, None))
    out.append(("v3-mixed-precision", os.path.join(inputs, "mixed-precision.json"), 1,
                None, None))
    # bf16 convolutions on the GEMM path (issue 40): zero padding, strides,
    # dilations, input dilation (a strided pad), groups, 1 to 3 spatial
    # axes. On the GPU each pad is computed in its im2col copy and the
    # copy is bf16 (rankc-gpu-pads-as-generics, NarrowOperands.cpp). The
    # values are small integers (exact in bf16, sums exact in f32), so the
    # bf16 results must match the CPU's bit for bit.
    convs = [([2, 8, 9, 7], [8, 8, 3, 3], {"padding": [[1, 1], [1, 1]]}),
             ([2, 6, 9, 8], [8, 6, 3, 2], {"stride": [2, 1], "padding": [[1, 2], [0, 1]],
                                            "dilation": [2, 1]}),
             ([1, 4, 5, 4], [6, 4, 3, 3], {"input_dilation": [2, 2],
                                            "padding": [[1, 1], [2, 2]]}),
             ([2, 8, 6, 6], [8, 4, 3, 3], {"groups": 2, "padding": [[1, 1], [1, 1]]}),
             ([2, 6, 10], [6, 6, 4], {"padding": [[2, 1]], "input_dilation": [3]}),
             ([1, 4, 4, 5, 3], [4, 4, 2, 3, 2], {"padding": [[1, 0], [1, 1], [0, 1]]}),
             ([2, 8, 6, 6], [8, 8, 1, 1], {"stride": [2, 2]})]
    nodes, outputs = [{"id": "four", "op": "constant", "value": 4.0, "dtype": "f32"}], {}
    for i, (xs, ws, attrs) in enumerate(convs):
        for v, shape in (("x", xs), ("w", ws)):
            nodes += bf16_integers(f"{v}{i}", shape)
        nodes.append({"id": f"c{i}", "op": "conv", "args": [f"x{i}b", f"w{i}b"], **attrs})
        outputs[f"c{i}"] = f"c{i}"
    doc = {"format": "rankc-dag", "version": 3, "world_size": 1,
           "programs": [{"ranks": [0], "nodes": nodes, "outputs": outputs}]}
    path = write_dag(work, "v3-bf16-convs", doc)
    out.append(("v3-bf16-convs", path, 1, None, None))
    # bf16 matmuls whose bf16 results cuBLASLt writes itself (issue 40,
    # RANKC_GEMM_NARROW_C): long K over small M and N (split-K's case: its
    # partial sums must be reduced in f32, each result rounded once), a
    # batch, a transposed operand, and a chain (the first result read by
    # the second GEMM, its A dead after the first). Integers (|x| <= ~12):
    # exact sums in f32, partial sums of thousands that bf16 would round,
    # so the bf16 results match the CPU's bit for bit only if rounded once.
    mms = [("a0", [8, 8192], "b0", [8192, 8], None),
           ("a1", [4, 16, 4096], "b1", [4, 4096, 24], None),
           ("a2", [32, 2048], "b2", [48, 2048], "tb")]
    nodes = [{"id": "four", "op": "constant", "value": 4.0, "dtype": "f32"}]
    outputs = {}
    for a, ashape, bname, bshape, trans in mms:
        for v, shape in ((a, ashape), (bname, bshape)):
            nodes += bf16_integers(v, shape)
        rhs = bname + "b"
        if trans:
            nodes.append({"id": rhs + "t", "op": "transpose", "args": [rhs], "perm": [1, 0]})
            rhs += "t"
        nodes.append({"id": "y" + a, "op": "matmul", "args": [a + "b", rhs]})
        outputs["y" + a] = "y" + a
    nodes += [{"id": "c3", "op": "input", "shape": [8, 16], "dtype": "f32"},
              {"id": "c3i", "op": "floor", "args": ["c3"]},
              {"id": "c3b", "op": "cast", "args": ["c3i"], "dtype": "bf16"},
              {"id": "chain", "op": "matmul", "args": ["ya0", "c3b"]}]
    outputs["chain"] = "chain"
    doc = {"format": "rankc-dag", "version": 3, "world_size": 1,
           "programs": [{"ranks": [0], "nodes": nodes, "outputs": outputs}]}
    path = write_dag(work, "v3-bf16-matmuls", doc)
    out.append(("v3-bf16-matmuls", path, 1, None, None))
    # Autocast linear layers as the exporter writes addmm (opmath: f32
    # operands that are bf16 values, the bf16 bias added to the f32 sum,
    # one rounding): cuBLASLt's bias epilogue (rankc_rt_gemm_bias). Long K
    # over a narrow output (split-K's case), a transposed weight with the
    # sum's operands the other way round and a relu after, and a residual
    # added in f32 as a transformer's projection does. Integers again: the
    # bias changes which bf16 value the exact sum rounds to, so the
    # results match the CPU's bit for bit only with the bias added before
    # the one rounding.
    lins = [("l0", [8, 8192], [8192, 8], False, True, None),
            ("l1", [64, 256], [48, 256], True, False, "relu"),
            ("l2", [32, 512], [512, 64], False, True, "residual")]
    nodes = [{"id": "four", "op": "constant", "value": 4.0, "dtype": "f32"}]
    outputs = {}
    for v, xshape, wshape, trans, bias_first, after in lins:
        n = wshape[0] if trans else wshape[1]
        for name, shape in ((v + "x", xshape), (v + "w", wshape), (v + "c", [n])):
            nodes += bf16_integers(name, shape)
        w = v + "wb"
        if trans:
            nodes.append({"id": w + "t", "op": "transpose", "args": [w], "perm": [1, 0]})
            w += "t"
        nodes += [{"id": v + "xf", "op": "cast", "args": [v + "xb"], "dtype": "f32"},
                  {"id": v + "wf", "op": "cast", "args": [w], "dtype": "f32"},
                  {"id": v + "cf", "op": "cast", "args": [v + "cb"], "dtype": "f32"},
                  {"id": v + "mm", "op": "matmul", "args": [v + "xf", v + "wf"]},
                  {"id": v + "s", "op": "add",
                   "args": [v + "cf", v + "mm"] if bias_first else [v + "mm", v + "cf"]},
                  {"id": v + "y", "op": "cast", "args": [v + "s"], "dtype": "bf16"}]
        out_id = v + "y"
        if after == "relu":
            nodes.append({"id": v + "r", "op": "relu", "args": [out_id]})
            out_id = v + "r"
        elif after == "residual":
            nodes += [{"id": v + "res", "op": "input", "shape": [xshape[0], n], "dtype": "f32"},
                      {"id": v + "yf", "op": "cast", "args": [out_id], "dtype": "f32"},
                      {"id": v + "o", "op": "add", "args": [v + "res", v + "yf"]}]
            out_id = v + "o"
        outputs[v] = out_id
    doc = {"format": "rankc-dag", "version": 3, "world_size": 1,
           "programs": [{"ranks": [0], "nodes": nodes, "outputs": outputs}]}
    path = write_dag(work, "v3-bf16-linears", doc)
    out.append(("v3-bf16-linears", path, 1, None, None))
    # Rows of 8 KiB are staged on the step's thread, rows of 128 KiB by the
    # feed's thread while the step before runs (runtime/core/Feeds.h).
    for name, rows, width in [("v3-feed-shuffle-9steps-replay", 64, 32),
                              ("v3-feed-large-shuffle-9steps-replay", 128, 256)]:
        doc = {"format": "rankc-dag", "version": 3, "world_size": 1, "programs": [{
            "ranks": [0], "nodes": [
                {"id": "x", "op": "input", "shape": [rows, width], "dtype": "f32"},
                {"id": "w", "op": "param", "shape": [width, 8], "dtype": "f32"},
                {"id": "acc", "op": "input", "shape": [], "dtype": "f32"},
                {"id": "y", "op": "matmul", "args": ["x", "w"]},
                {"id": "t", "op": "step", "dtype": "f32"},
                {"id": "s", "op": "sum", "args": ["y"]},
                {"id": "ts", "op": "mul", "args": ["t", "s"]},
                {"id": "acc2", "op": "add", "args": ["acc", "ts"]}],
            "outputs": {"acc": "acc2", "y": "y"}, "state": {"acc": "acc"}}]}
        path = write_dag(work, name, doc)

        def write(folder, rows=rows, width=width):
            rng = np.random.default_rng(5)
            d = os.path.join(folder, "rank0")
            os.makedirs(d, exist_ok=True)
            np.save(os.path.join(d, "x.npy"),
                    rng.standard_normal((5, rows, width)).astype(np.float32))
            np.save(os.path.join(d, "w.npy"),
                    rng.standard_normal((width, 8)).astype(np.float32))
            np.save(os.path.join(d, "acc.npy"), np.zeros((), np.float32))
        LAUNCH_ARGS[name] = ["--feed", "x", "--shuffle", "3"]
        out.append((name, path, 9, write, None))
    # The v3 optimizer (issue 37): a schedule, clipping, an lr input, 2
    # micro-steps per update on 2 ranks; and on one rank, where the
    # micro-steps and the updates replay as two CUDA-graph recordings.
    for f in ("adamw", "sgd", "below"):
        out.append((f"v3-optimizer-{f}-12steps",
                    os.path.join(inputs, f"optimizer-v3-{f}.json"), 12, None, None))
    doc = json.load(open(os.path.join(inputs, "optimizer-v3-adamw.json")))
    doc["world_size"] = 1
    name = "v3-optimizer-accumulate-1rank-12steps-replay"
    path = write_dag(work, name, doc)
    out.append((name, path, 12, None, None))
    return out


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, errors="replace", **kw)


def prepare(rankc, work):
    sys.path.insert(0, os.path.join(ROOT, "test", "E2E"))
    import e2e
    os.makedirs(work, exist_ok=True)
    cases = ([(n, p, 1, None, None) for n, p in dags(work)] +
             [(n, p, s, None, None) for n, p, s in stepped(work)] + with_inputs(work))
    for name, path, steps, write_inputs, expect in cases:
        if run([rankc, "check", path]).returncode != 0:
            print(f"skipped {name}: not a valid program (an example of an error)")
            continue
        base = os.path.join(work, name)
        doc = json.load(open(path))
        os.makedirs(base, exist_ok=True)
        with open(os.path.join(base, "dag.json"), "w") as f:
            json.dump(doc, f)
        with open(os.path.join(base, "steps"), "w") as f:
            f.write(str(steps))
        if name.endswith("-tf32"):  # 10-bit mantissas: 1e-3 relative per product
            with open(os.path.join(base, "rtol"), "w") as f:
                f.write("1e-2")
        if name.endswith("-nccl") or name.endswith("-nographs"):  # the GPU run's environment
            with open(os.path.join(base, "env"), "w") as f:
                f.write("RANKC_NCCL=1\n" if name.endswith("-nccl") else "RANKC_CUDA_GRAPHS=0\n")
        if "optimizer" in doc.get("data_parallel", {}) and steps > 1:
            # Training amplifies the backends' rounding differences (sums in
            # another order) from step to step: 5 steps get rtol 1e-3.
            with open(os.path.join(base, "rtol"), "w") as f:
                f.write("1e-3")
        if name.startswith("autocast-bf16"):
            # A bf16 rounding that one backend's sum order tips the other
            # way (1 in 256 relative) moves what follows it.
            with open(os.path.join(base, "rtol"), "w") as f:
                f.write("2e-2")
        if expect:
            with open(os.path.join(base, "expect_error"), "w") as f:
                f.write(expect)
        if name in RESUME_AT:
            with open(os.path.join(base, "resume_at"), "w") as f:
                f.write(str(RESUME_AT[name]))
        with open(os.path.join(base, "launch_args"), "w") as f:
            f.write(" ".join(LAUNCH_ARGS.get(name, [])))
        rng = np.random.default_rng(0)
        os.makedirs(os.path.join(base, "in"), exist_ok=True)  # (a DAG of constants has none)
        if write_inputs:
            write_inputs(os.path.join(base, "in"))
        for prog in ([] if write_inputs else doc["programs"]):
            ranks = range(doc["world_size"]) if prog["ranks"] == "all" else prog["ranks"]
            for r in ranks:
                for node in prog["nodes"]:
                    if node["op"] in ("input", "param"):
                        e2e.save(os.path.join(base, "in", f"rank{r}", node["id"] + ".npy"),
                                 e2e.make_input(rng, node), node["dtype"])
        for target in ("cpu", "cuda"):
            flags = ["--precision", "tf32"] if target == "cuda" and name.endswith("-tf32") else []
            if target == "cuda" and name.endswith("-lib"):
                flags += ["--emit", "lib"]
            p = run([rankc, "compile", path, "--target", target, "-o",
                     os.path.join(base, target + "-exe")] + flags)
            if p.returncode != 0:
                sys.exit(f"{name}: compile --target {target} failed:\n{p.stderr}")
        p = run([os.path.join(base, "cpu-exe", "launch"), "--inputs",
                 os.path.join(base, "in"), "--outputs", os.path.join(base, "cpu"),
                 "--steps", str(steps)] + LAUNCH_ARGS.get(name, []), timeout=600)
        if expect and (p.returncode != 1 or expect not in p.stderr):
            sys.exit(f"{name}: the CPU run should fail with '{expect}':\n{p.stderr}")
        if not expect and p.returncode != 0:
            sys.exit(f"{name}: CPU run failed:\n{p.stderr}")
        subprocess.run(["rm", "-rf", os.path.join(base, "cpu-exe")])
        os.rename(os.path.join(base, "cuda-exe"), os.path.join(base, "cuda"))
        print(f"prepared {name}")


def check_resume(base, at, steps, extra, env):
    """cli.md's --resume on the GPU: a run that wrote a checkpoint at step
    `at` on its way to `steps`, resumed from that checkpoint in a new
    process, ends with the same outputs bit for bit. (The resumed process
    takes the cuBLASLt algorithms the checkpoint recorded: two processes
    that each time the GEMMs may choose differently and round differently.)
    None, or why not."""
    ck = os.path.join(base, "gpu-ck")
    full, out = os.path.join(base, "gpu-full"), os.path.join(base, "gpu-resumed")
    shutil.rmtree(ck, ignore_errors=True)
    launch = [os.path.join(base, "cuda", "launch"), "--inputs", os.path.join(base, "in"),
              "--timeout", "120", "--steps", steps] + extra
    for args in (["--checkpoint-every", str(at), "--checkpoint-dir", ck, "--keep", "1000",
                  "--outputs", full],
                 ["--resume", os.path.join(ck, f"step{at}"), "--outputs", out]):
        p = run(launch + args, timeout=600, env=env)
        if p.returncode != 0:
            return f"resume run {' '.join(args)} failed ({p.returncode}): {p.stderr.strip()[-2000:]}"
    for want_file in sorted(glob.glob(os.path.join(full, "rank*", "*.npy"))):
        rel = os.path.relpath(want_file, full)
        got_file = os.path.join(out, rel)
        if not os.path.exists(got_file) or open(got_file, "rb").read() != open(want_file, "rb").read():
            return f"resumed at step {at}: {rel} differs from the uninterrupted run's"
    return None


def compare(work, only=()):
    passed = failed = 0
    for base in sorted(glob.glob(os.path.join(work, "*", "cuda"))):
        base = os.path.dirname(base)
        name = os.path.basename(base)
        if only and not any(o in name for o in only):
            continue
        res = os.path.join(base, "gpu")
        steps = open(os.path.join(base, "steps")).read().strip()
        rtol_file = os.path.join(base, "rtol")
        trained_rtol = float(open(rtol_file).read()) if os.path.exists(rtol_file) else None
        env = dict(os.environ)
        env_file = os.path.join(base, "env")
        if os.path.exists(env_file):
            env.update(line.split("=", 1) for line in open(env_file).read().split())
        stats = os.path.join(base, "stats.json")
        lib = name.endswith("-lib")
        if lib:  # the library, stepped by a Python loop under mpiexec
            ws = json.load(open(os.path.join(base, "dag.json")))["world_size"]
            p = run([os.environ.get("RANKC_MPIEXEC") or "mpiexec.mpich", "-n", str(ws),
                     sys.executable, os.path.join(ROOT, "test", "E2E", "lib_runner.py"),
                     os.path.join(base, "cuda"), os.path.join(base, "in"), res, steps],
                    timeout=600, env=env)
        else:
            args_file = os.path.join(base, "launch_args")
            extra = open(args_file).read().split() if os.path.exists(args_file) else []
            p = run([os.path.join(base, "cuda", "launch"), "--inputs", os.path.join(base, "in"),
                     "--outputs", res, "--timeout", "120", "--steps", steps, "--stats", stats]
                    + extra, timeout=600, env=env)
        why = None
        expect_file = os.path.join(base, "expect_error")
        if os.path.exists(expect_file):
            # Fails as on the CPU: exit 1, the same message, no outputs.
            expect = open(expect_file).read()
            if p.returncode != 1 or expect not in p.stderr:
                why = f"expected exit 1 with '{expect}', got {p.returncode}: {p.stderr.strip()[-2000:]}"
            elif glob.glob(os.path.join(res, "rank*", "*.npy")):
                why = "a failed run left outputs"
        elif p.returncode != 0:
            why = f"run failed ({p.returncode}): {p.stderr.strip()[-2000:]}"
        else:
            want_files = sorted(glob.glob(os.path.join(base, "cpu", "rank*", "*.npy")))
            for want_file in want_files:
                rel = os.path.relpath(want_file, os.path.join(base, "cpu"))
                got_file = os.path.join(res, rel)
                if not os.path.exists(got_file):
                    why = f"missing {rel}"
                    break
                want, got = np.load(want_file), np.load(got_file)
                if got.shape != want.shape or got.dtype != want.dtype:
                    why = f"{rel}: {got.dtype}{got.shape} != {want.dtype}{want.shape}"
                    break
                if want.dtype.name in TOL:
                    rtol, atol = TOL[want.dtype.name]
                    rtol = max(rtol, trained_rtol or 0)
                    if name.endswith("-tf32") and want.dtype == np.float32:
                        atol = 1e-2  # TF32 products: ~1e-3 of |a||b| each
                    ok = np.allclose(got.astype(np.float64), want.astype(np.float64),
                                     rtol=rtol, atol=atol, equal_nan=True)
                else:  # integers, bool, bf16 bits (uint16): exact
                    ok = np.array_equal(got, want)
                if not ok:
                    err = np.abs(got.astype(np.float64) - want.astype(np.float64))
                    i = int(np.argmax(err)) if err.size else 0
                    why = (f"{rel}: got {got.ravel()[:4]} want {want.ravel()[:4]}; worst "
                           f"element {i}: {got.ravel()[i]} vs {want.ravel()[i]}")
                    break
            if why is None and not want_files:
                why = "the CPU run wrote no outputs"
            path = "" if lib else json.load(open(stats))["allreduce"]
            if why is None and name.endswith("-nccl") and not path.startswith("nccl"):
                why = f"RANKC_NCCL=1 but the allreduces ran on: {path}"
            # Replay: every step after the first 2 from a recording (at most
            # one recording per arena besides the first steps' buffers), per
            # entry (gradient accumulation's micro-step and update step).
            replay = "" if lib else json.load(open(stats))["replay"]
            m = re.match(r"cuda graphs: (\d+) of (\d+) steps replayed", replay)
            entries = 2 if "accumulate" in name else 1
            if why is None and name.endswith("-replay") and not (
                    m and int(m[1]) >= int(m[2]) - 5 * entries and int(m[1]) > 0):
                why = f"expected steps replayed from CUDA graphs, got: {replay}"
            if why is None and name.endswith("-nographs") and replay != "none: RANKC_CUDA_GRAPHS=0":
                why = f"RANKC_CUDA_GRAPHS=0 but replay says: {replay}"
            if why is None and "-replay" in name:
                name += f" ({replay})"
            resume_file = os.path.join(base, "resume_at")
            if why is None and not lib and os.path.exists(resume_file):
                why = check_resume(base, int(open(resume_file).read()), steps, extra, env)
                if why is None:
                    name += f" (resumed at step {open(resume_file).read().strip()}: bit for bit)"
            # Kernels are looked up and named once, as their module loads (a
            # global constructor of the generated code: rankc-gpu-launch-to-llvm),
            # before the runtime's own static initializers: --kernel-stats
            # still lists every kernel by name.
            if why is None and name == "glue-pieces":
                ks = os.path.join(base, "kernel-stats")
                shutil.rmtree(ks, ignore_errors=True)
                q = run([os.path.join(base, "cuda", "launch"), "--inputs", os.path.join(base, "in"),
                         "--outputs", res + "-kernel-stats", "--timeout", "120", "--steps", steps,
                         "--kernel-stats", ks], timeout=600, env=env)
                kernels = [k for f in sorted(glob.glob(os.path.join(ks, "rank*.json")))
                           for k in json.load(open(f))["kernels"]]
                if q.returncode != 0:
                    why = f"--kernel-stats run failed ({q.returncode}): {q.stderr.strip()[-2000:]}"
                elif not kernels or any(not k["name"] or k["launches"] < 1 for k in kernels):
                    why = f"--kernel-stats: kernels unnamed or never launched: {kernels[:4]}"
                else:
                    name += f" ({len(kernels)} kernels named in --kernel-stats)"
        if why is None and name.startswith("allreduce-one"):
            name += f" (allreduce: {path})"
        print(("PASS: " if why is None else "FAIL: ") + name + ("" if why is None else ": " + why),
              flush=True)
        passed, failed = passed + (why is None), failed + (why is not None)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 3 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3:]))
    else:
        sys.exit(__doc__)
