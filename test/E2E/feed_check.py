#!/usr/bin/env python3
"""launch --feed: the rows each step read, against cli.md's definition.

    feed_check.py RANKC WORKDIR ROWS STEPS [SEED] [--width W]

A two-rank program echoes its fed input `x` (u16 rows [S, 3], rank r's rows
distinct from every other rank's) and a loss that depends on it and on the
step leaf; the run writes a snapshot after every step (--save-every 1).
Step k's snapshot must hold row k mod S, or with SEED row perm_e[k mod S]
(rankc.datasets.feed_row, cli.md's Fisher-Yates over splitmix64), on every
rank. --width W makes the rows W wide (default 3; 40000 u16 is 80 KB, rows
a thread reads ahead). Prints "N passed, M failed"."""
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from rankc.datasets import feed_row, save_feed  # noqa: E402

DOC = {"format": "rankc-dag", "version": 3, "world_size": 2, "programs": [{
    "ranks": "all", "nodes": [
        {"id": "x", "op": "input", "shape": [3], "dtype": "u16"},
        {"id": "w", "op": "input", "shape": [3], "dtype": "f32"},
        {"id": "xf", "op": "cast", "args": ["x"], "dtype": "f32"},
        {"id": "y", "op": "mul", "args": ["xf", "w"]},
        {"id": "s", "op": "sum", "args": ["y"]},
        {"id": "t", "op": "step", "dtype": "f32"},
        {"id": "loss", "op": "add", "args": ["s", "t"]}],
    "outputs": {"x": "x", "loss": "loss"}}]}


def main():
    args = sys.argv[1:]
    width = 3
    if "--width" in args:
        i = args.index("--width")
        width = int(args[i + 1])
        del args[i:i + 2]
    rankc, work, rows, steps = args[0], args[1], int(args[2]), int(args[3])
    seed = int(args[4]) if len(args) > 4 else None
    DOC["programs"][0]["nodes"][0]["shape"] = [width]
    DOC["programs"][0]["nodes"][1]["shape"] = [width]
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "feed.json")
    json.dump(DOC, open(path, "w"))
    feeds = [((np.arange(rows * width).reshape(rows, width) * 7 + 1000 * r) % 60000)
             .astype(np.uint16) for r in range(2)]
    inputs = os.path.join(work, "in")
    save_feed(inputs, "x", feeds)
    for r in range(2):
        np.save(os.path.join(inputs, f"rank{r}", "w.npy"), np.ones(width, np.float32))
    exe, res = os.path.join(work, "exe"), os.path.join(work, "res")
    subprocess.run([rankc, "compile", path, "-o", exe], check=True)
    args = [os.path.join(exe, "launch"), "--inputs", inputs, "--outputs", res,
            "--steps", str(steps), "--feed", "x", "--save-every", "1"]
    if seed is not None:
        args += ["--shuffle", str(seed)]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    passed = failed = 0
    for k in range(steps):
        row = feed_row(k, rows, seed)
        for r in range(2):
            snap = os.path.join(res, f"step{k + 1}", f"rank{r}")
            got, loss = np.load(os.path.join(snap, "x.npy")), np.load(os.path.join(snap, "loss.npy"))
            want = feeds[r][row]
            # (The loss sums the row in f32: in another order than NumPy's.)
            if np.array_equal(got, want) and np.isclose(loss, want.astype(np.float64).sum() + k,
                                                        rtol=1e-3):
                passed += 1
            else:
                failed += 1
                print(f"FAIL: step {k} rank {r}: read {got.tolist()[:6]}... (loss {loss}), "
                      f"row {row} is {want.tolist()[:6]}...")
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
