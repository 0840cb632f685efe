#!/usr/bin/env python3
"""f32 matmul on one CPU core: a rankc program of one `matmul` (one rank,
--target cpu) against single-threaded OpenBLAS through NumPy, same
machine, same run (issue 17's benchmark).

    /usr/bin/python3 bench/cpu/matmul.py RANKC WORK [STEPS]

rankc: `launch --steps 2S --stats`, the median `compute` of the last S
steps. NumPy: np.matmul into a preallocated result, the median of S after
S warm-up calls; OPENBLAS_NUM_THREADS=1 (Debian's libopenblas0-serial is
single-threaded anyway). GFLOP/s count 2 n^3 per product. The result is
checked against NumPy's."""
import json
import os
import statistics
import subprocess
import sys
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

SIZES = (512, 1024, 2048)


def main():
    rankc, work = sys.argv[1], sys.argv[2]
    steps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    print("| n | rankc ms | rankc GFLOP/s | OpenBLAS (NumPy) ms | OpenBLAS GFLOP/s "
          "| rankc/OpenBLAS speed | max rel. error |")
    print("|---|---|---|---|---|---|---|")
    for n in SIZES:
        d = os.path.join(work, str(n))
        os.makedirs(os.path.join(d, "in", "rank0"), exist_ok=True)
        doc = {"world_size": 1, "programs": [{"ranks": [0], "nodes": [
            {"id": "a", "op": "input", "shape": [n, n], "dtype": "f32"},
            {"id": "b", "op": "input", "shape": [n, n], "dtype": "f32"},
            {"id": "c", "op": "matmul", "args": ["a", "b"]}], "outputs": {"c": "c"}}]}
        json.dump(doc, open(os.path.join(d, "mm.json"), "w"))
        subprocess.run([rankc, "compile", os.path.join(d, "mm.json"), "-o",
                        os.path.join(d, "out")], check=True)
        rng = np.random.default_rng(n)
        a = rng.standard_normal((n, n), dtype=np.float32)
        b = rng.standard_normal((n, n), dtype=np.float32)
        np.save(os.path.join(d, "in", "rank0", "a.npy"), a)
        np.save(os.path.join(d, "in", "rank0", "b.npy"), b)
        stats = os.path.join(d, "stats.json")
        subprocess.run([os.path.join(d, "out", "launch"), "--inputs", os.path.join(d, "in"),
                        "--outputs", os.path.join(d, "res"), "--steps", str(2 * steps),
                        "--stats", stats], check=True, stdout=subprocess.DEVNULL)
        per_step = json.load(open(stats))["ranks"][0]["per_step"][steps:]
        rankc_s = statistics.median(s["compute"] for s in per_step)
        c = np.empty((n, n), np.float32)
        times = []
        for i in range(2 * steps):
            t = time.perf_counter()
            np.matmul(a, b, out=c)
            if i >= steps:
                times.append(time.perf_counter() - t)
        blas_s = statistics.median(times)
        got = np.load(os.path.join(d, "res", "rank0", "c.npy"))
        ref = a.astype(np.float64) @ b.astype(np.float64)
        err = float(np.max(np.abs(got - ref)) / np.max(np.abs(ref)))
        gf = lambda s: 2 * n ** 3 / s / 1e9
        print(f"| {n} | {rankc_s * 1e3:.2f} | {gf(rankc_s):.1f} | {blas_s * 1e3:.2f} "
              f"| {gf(blas_s):.1f} | {blas_s / rankc_s:.2f} | {err:.1e} |", flush=True)


if __name__ == "__main__":
    main()
