#!/usr/bin/env python3
"""Checkpoints and resume, bit for bit (issue 38).

    checkpoint_check.py RANKC WORK DAG STEPS K [--feed S] [--signal]

Compiles DAG and runs it three ways with the same inputs: STEPS steps in
one run; STEPS steps with --checkpoint-every K (the same outputs), then
from its first checkpoint `--resume DIR/step<K>` to STEPS; and (--signal) a long run stopped by SIGTERM to every rank (the
way a scheduler preempts), which must exit 3 with a checkpoint at some
step k (mid-way through an accumulation window, it may be), resumed
with `--resume latest` for 10 to 13 more steps and compared with an
uninterrupted run of as many steps. With --feed S every input named
input0 is fed S rows (--shuffle 5). Every output file must be byte for
byte the uninterrupted run's. Prints "resume: equal" lines or the first
difference."""
import json
import os
import signal
import subprocess
import sys
import time

import numpy as np


def run(exe, args, **kw):
    return subprocess.run([os.path.join(exe, "launch")] + args, capture_output=True,
                          text=True, **kw)


def same(a, b):
    for root, _, files in os.walk(a):
        for f in files:
            if not f.endswith(".npy"):
                continue
            pa = os.path.join(root, f)
            pb = os.path.join(b, os.path.relpath(pa, a))
            if not os.path.exists(pb) or open(pa, "rb").read() != open(pb, "rb").read():
                return os.path.relpath(pa, a)
    return None


def main():
    args = sys.argv[1:]
    feed = None
    if "--feed" in args:
        i = args.index("--feed")
        feed = int(args[i + 1])
        del args[i:i + 2]
    signalled = "--signal" in args
    if signalled:
        args.remove("--signal")
    rankc, work, dag, steps, k = args[0], args[1], args[2], int(args[3]), int(args[4])
    os.makedirs(work, exist_ok=True)
    exe = os.path.join(work, "exe")
    subprocess.run([rankc, "compile", dag, "-o", exe], check=True)
    common = []
    if feed:
        doc = json.load(open(dag))
        rng = np.random.default_rng(3)
        inp = os.path.join(work, "in")
        for p in doc["programs"]:
            ranks = range(doc["world_size"]) if p["ranks"] == "all" else p["ranks"]
            for r in ranks:
                os.makedirs(os.path.join(inp, f"rank{r}"), exist_ok=True)
                for n in p["nodes"]:
                    if n["op"] in ("input", "param"):
                        shape = ([feed] if n["id"] == "input0" else []) + n["shape"]
                        v = rng.standard_normal(shape).astype(n["dtype"].replace("f", "float"))
                        np.save(os.path.join(inp, f"rank{r}", n["id"] + ".npy"), v)
        common = ["--inputs", inp, "--feed", "input0", "--shuffle", "5"]
    whole = os.path.join(work, "whole")
    r = run(exe, common + ["--steps", str(steps), "--outputs", whole])
    assert r.returncode == 0, r.stderr
    ck = os.path.join(work, "ck")
    # The same run writing checkpoints every K steps: the same outputs.
    r = run(exe, common + ["--steps", str(steps), "--checkpoint-every", str(k),
                           "--checkpoint-dir", ck, "--keep", "100",
                           "--outputs", os.path.join(work, "first")])
    assert r.returncode == 0, r.stderr
    diff = same(whole, os.path.join(work, "first"))
    print("checkpointing: equal" if diff is None else f"checkpointing: DIFFERENT {diff}")
    resumed = os.path.join(work, "resumed")
    r = run(exe, common + ["--steps", str(steps), "--resume", os.path.join(ck, f"step{k}"),
                           "--outputs", resumed])
    assert r.returncode == 0, r.stderr
    diff = same(whole, resumed)
    print("resume: equal" if diff is None else f"resume: DIFFERENT {diff}")
    if signalled:
        ck2 = os.path.join(work, "ck2")
        long = subprocess.Popen([os.path.join(exe, "launch")] + common +
                                ["--steps", "100000000", "--checkpoint-dir", ck2,
                                 "--outputs", os.path.join(work, "long")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        time.sleep(2)
        # Every rank, as a scheduler signals a job's tasks.
        subprocess.run(["pkill", "-TERM", "-f", os.path.join(exe, "") + r"[^ ]* .*--checkpoint-dir " + ck2])
        out, err = long.communicate(timeout=120)
        print(f"signal: exit {long.returncode}")
        print(out.strip().splitlines()[-1] if out.strip() else err.strip())
        latest = max((d for d in os.listdir(ck2) if d.startswith("step")),
                     key=lambda d: int(d[4:]))
        k2 = int(latest[4:])
        extra = k2 + 10
        extra += -extra % 4  # (a run ends with an update: K = 1, 2 or 4)
        r = run(exe, common + ["--steps", str(extra), "--outputs", os.path.join(work, "whole2")])
        assert r.returncode == 0, r.stderr
        r = run(exe, common + ["--steps", str(extra), "--checkpoint-dir", ck2, "--resume",
                               "latest", "--outputs", os.path.join(work, "resumed2")])
        assert r.returncode == 0, r.stderr
        diff = same(os.path.join(work, "whole2"), os.path.join(work, "resumed2"))
        print("resume latest: equal" if diff is None else f"resume latest: DIFFERENT {diff}")


if __name__ == "__main__":
    main()
