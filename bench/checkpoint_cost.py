#!/usr/bin/env python3
"""What a checkpoint costs a training run (issue 38).

    checkpoint_cost.py RANKC WORK [--model transformer-large] [--ranks 2]
                       [--steps 60] [--every 20] [--target cpu|cuda]
                       [--prepare-only | --run-only]

Exports the model's data-parallel step with AdamW (scripts/export_torch.py),
compiles it and runs `launch --steps N --metrics` twice in one call: plain,
and with `--checkpoint-every K --checkpoint-dir`. Prints the median step
time of each run, the median of the steps right after a checkpoint, the
checkpoint's own time (launch's line: written and synced, all ranks, after
the step) and the size a rank writes."""
import json
import os
import re
import statistics
import subprocess
import sys

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
    times = {}
    for name, extra in (("plain", []), ("checkpointing", ["--checkpoint-every", str(every),
                                                          "--checkpoint-dir",
                                                          os.path.join(work, "ck")])):
        metrics = os.path.join(work, name + ".jsonl")
        out = subprocess.run([launch, "--steps", str(steps), "--metrics", metrics] + extra,
                             check=True, capture_output=True, text=True).stdout
        rows = [json.loads(line) for line in open(metrics)]
        times[name] = [r["step_s"] for r in rows]
        written = [float(m.group(1)) for m in re.finditer(r"written in ([0-9.]+) s", out)]
        size = re.findall(r"\(([0-9.]+) MB a rank\)", out)
        if written:
            after = [times[name][k] for k in range(every, steps, every)]
            print(f"checkpoint: {statistics.median(written) * 1e3:.1f} ms (median of "
                  f"{len(written)}), {size[0]} MB a rank; the step after it "
                  f"{statistics.median(after) * 1e3:.2f} ms")
        print(f"{name}: median step {statistics.median(times[name][2:]) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
