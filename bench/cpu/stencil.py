#!/usr/bin/env python3
"""The halo stencil on the CPU against memory bandwidth (issue 17's
benchmark): a 1-D heat equation u' = u + k (u[i-1] - 2 u[i] + u[i+1]) over
N f64 points per rank, 2 ranks on a periodic ring that exchange one halo
point each way per step, u carried from step to step as state (the
`examples/stencil.json` program at a size that streams from memory).

    /usr/bin/python3 bench/cpu/stencil.py RANKC WORK [N] [STEPS]

All three run on both ranks' cores at once, so they share the memory
system as the two ranks do:
  - STREAM-style copy: two processes each copy an array of N f64 into
    another (np.copyto), best of STEPS; bandwidth = 16 B per point (a
    read, a write) per process, summed;
  - NumPy: two processes each run the same update on their own N points
    (the halo taken from their own ends), median of STEPS;
  - rankc: `launch --steps 2S --stats`, median `compute` of the last S
    steps (the first fault in the arenas' pages), slowest rank.
The stencil's bandwidth counts the same 16 B per point (read u, write u'),
the least any implementation must move; the ratio to STREAM is the figure
the issue asks >= 0.8 of. The values after the steps are checked against
NumPy's (same start, same steps)."""
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import time

import numpy as np

K = 0.25


def document(n):
    nodes = [
        {"id": "u", "op": "input", "shape": [n], "dtype": "f64"},
        {"id": "k", "op": "constant", "value": K, "dtype": "f64"},
        {"id": "two", "op": "constant", "value": 2.0, "dtype": "f64"},
        {"id": "first", "op": "slice", "args": ["u"], "begin": [0], "end": [1], "step": [1]},
        {"id": "last", "op": "slice", "args": ["u"], "begin": [n - 1], "end": [n], "step": [1]},
        {"id": "to_left", "op": "send", "args": ["first"], "dest": {"offset": -1}, "tag": "west"},
        {"id": "to_right", "op": "send", "args": ["last"], "dest": {"offset": 1}, "tag": "east"},
        {"id": "from_left", "op": "recv", "src": {"offset": -1}, "tag": "east", "shape": [1],
         "dtype": "f64"},
        {"id": "from_right", "op": "recv", "src": {"offset": 1}, "tag": "west", "shape": [1],
         "dtype": "f64"},
        {"id": "ext", "op": "concat", "args": ["from_left", "u", "from_right"], "axis": 0},
        {"id": "l", "op": "slice", "args": ["ext"], "begin": [0], "end": [n], "step": [1]},
        {"id": "r", "op": "slice", "args": ["ext"], "begin": [2], "end": [n + 2], "step": [1]},
        {"id": "lr", "op": "add", "args": ["l", "r"]},
        {"id": "u2", "op": "mul", "args": ["two", "u"]},
        {"id": "lap", "op": "sub", "args": ["lr", "u2"]},
        {"id": "du", "op": "mul", "args": ["k", "lap"]},
        {"id": "next", "op": "add", "args": ["u", "du"]},
    ]
    return {"version": 2, "world_size": 2,
            "programs": [{"ranks": [0, 1], "nodes": nodes, "outputs": {"u": "next"},
                          "state": {"u": "u"}}]}


def stream(n, steps, q):
    a, b = np.random.rand(n), np.empty(n)
    best = float("inf")
    for _ in range(steps):
        t = time.perf_counter()
        np.copyto(b, a)
        best = min(best, time.perf_counter() - t)
    q.put(best)


def numpy_update(u):
    ext = np.concatenate((u[-1:], u, u[:1]))
    return u + K * (ext[:-2] - 2.0 * u + ext[2:])


def numpy_steps(n, steps, q):
    u = np.random.rand(n)
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        u = numpy_update(u)
        times.append(time.perf_counter() - t)
    q.put(statistics.median(times))


def both(fn, *args):
    q = mp.Queue()
    ps = [mp.Process(target=fn, args=args + (q,)) for _ in range(2)]
    for p in ps:
        p.start()
    out = [q.get() for _ in ps]
    for p in ps:
        p.join()
    return out


def main():
    rankc, work = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 1 << 24
    steps = int(sys.argv[4]) if len(sys.argv) > 4 else 10
    os.makedirs(work, exist_ok=True)
    dag, out = os.path.join(work, "stencil.json"), os.path.join(work, "stencil")
    json.dump(document(n), open(dag, "w"))
    subprocess.run([rankc, "compile", dag, "-o", out], check=True)
    rng = np.random.default_rng(0)
    start = [rng.random(n) for _ in range(2)]
    for r in range(2):
        os.makedirs(os.path.join(work, "in", f"rank{r}"), exist_ok=True)
        np.save(os.path.join(work, "in", f"rank{r}", "u.npy"), start[r])
    stats = os.path.join(work, "stats.json")
    subprocess.run([os.path.join(out, "launch"), "--inputs", os.path.join(work, "in"),
                    "--outputs", os.path.join(work, "res"), "--steps", str(2 * steps),
                    "--stats", stats], check=True, stdout=subprocess.DEVNULL)
    ranks = json.load(open(stats))["ranks"]
    rankc_s = max(statistics.median(s["compute"] for s in r["per_step"][steps:])
                  for r in ranks)
    # The check: 2S steps of the two ranks' ring in NumPy.
    u = np.concatenate(start)
    for _ in range(2 * steps):
        u = numpy_update(u)
    got = np.concatenate([np.load(os.path.join(work, "res", f"rank{r}", "u.npy"))
                          for r in range(2)])
    err = float(np.max(np.abs(got - u)))
    copy_s = max(both(stream, n, steps))
    numpy_s = max(both(numpy_steps, n, steps))
    gbs = lambda s: 2 * 16 * n / s / 1e9
    print(f"| 1-D halo stencil, 2 ranks x {n} f64 | {rankc_s * 1e3:.2f} | {gbs(rankc_s):.1f} "
          f"| {numpy_s * 1e3:.2f} | {gbs(numpy_s):.1f} | {copy_s * 1e3:.2f} | {gbs(copy_s):.1f} "
          f"| {gbs(rankc_s) / gbs(copy_s):.2f} | {numpy_s / rankc_s:.2f} | {err:.1e} |")


if __name__ == "__main__":
    print("| case | rankc ms/step | rankc GB/s | NumPy ms/step | NumPy GB/s | copy ms | copy GB/s "
          "| rankc/copy bandwidth | NumPy/rankc time | max error |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    main()
