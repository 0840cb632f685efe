#!/usr/bin/env python3
"""What a checkpoint costs a training run (issue 38).

    checkpoint_cost.py RANKC WORK [--model transformer-large] [--ranks 2]
                       [--steps 60] [--every 20] [--target cpu|cuda]
                       [--prepare-only | --run-only]

Exports the model's data-parallel step with AdamW (scripts/export_torch.py),
compiles it and runs `launch --steps N --metrics` twice in one call: plain,
and with `--checkpoint-every K --checkpoint-dir`. Prints the median step
time of each run, the median of the steps right after a checkpoint, the
checkpoint's times (launch's line: committed how long after its step and
while how many more steps ran, its files being written on a thread), the
size a rank writes, the steps that ran meanwhile, and what the checkpoints
cost the whole run (its wall time against the plain run's)."""
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def option(args, flag, default):
    return type(default)(args[args.index(flag) + 1]) if flag in args else default


def main():
    args = sys.argv[1:]
    rankc, work = args[0], args[1]
    model = option(args, "--model", "transformer-large")
    ranks, steps, every = option(args, "--ranks", 2), option(args, "--steps", 60), \
        option(args, "--every", 20)
    target = option(args, "--target", "cpu")
    exe = os.path.join(work, "exe")
    if "--run-only" not in args:
        os.makedirs(work, exist_ok=True)
        dag = os.path.join(work, "step.json")
        subprocess.run([sys.executable, os.path.join(HERE, "..", "scripts", "export_torch.py"),
                        model, dag, "--world-size", str(ranks), "--optimizer", "adamw",
                        "--lr", "0.001"], check=True)
        subprocess.run([rankc, "compile", dag, "-o", exe, "--target", target], check=True)
    if "--prepare-only" in args:
        return
    launch = os.path.join(exe, "launch")
    times, walls = {}, {}
    for name, extra in (("plain", []), ("checkpointing", ["--checkpoint-every", str(every),
                                                          "--checkpoint-dir",
                                                          os.path.join(work, "ck")])):
        metrics = os.path.join(work, name + ".jsonl")
        begin = time.time()
        out = subprocess.run([launch, "--steps", str(steps), "--metrics", metrics] + extra,
                             check=True, capture_output=True, text=True).stdout
        walls[name] = time.time() - begin
        rows = [json.loads(line) for line in open(metrics)]
        times[name] = [r["step_s"] for r in rows]
        lines = re.findall(r"written in ([0-9.]+) s \(([0-9.]+) MB a rank; "
                           r"written while ([0-9]+) more steps ran\)", out)
        if lines:
            written = [float(w) for w, _, _ in lines]
            behind = [int(b) for _, _, b in lines]
            overlapped = [w for w, b in zip(written, behind) if b > 0] or written
            # The steps that ran while a checkpoint was written.
            during = [times[name][k + j] for k in range(every, steps, every)
                      for j in range(max(behind)) if k + j < steps]
            print(f"checkpoint: {len(lines)} of {lines[0][1]} MB a rank, each committed "
                  f"{statistics.median(overlapped) * 1e3:.1f} ms after its step (median), "
                  f"while {max(behind)} more steps ran; those steps' median "
                  f"{statistics.median(during) * 1e3:.2f} ms")
            if behind[-1] == 0:  # the run's last: written before the run ends
                print(f"the last checkpoint, written with no step after it: "
                      f"{written[-1] * 1e3:.1f} ms")
            print(f"checkpoint's cost to the run: "
                  f"{(walls[name] - walls['plain']) / len(lines) * 1e3:.1f} ms each "
                  f"(whole runs: {walls['plain']:.2f} s plain, {walls[name]:.2f} s)")
        print(f"{name}: median step {statistics.median(times[name][2:]) * 1e3:.2f} ms")

if __name__ == "__main__":
    main()
