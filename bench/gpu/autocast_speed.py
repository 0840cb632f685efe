#!/usr/bin/env python3
"""A training step under bf16 autocast on the GPU: rankc against PyTorch
eager, torch.compile and torch.compile(mode="reduce-overhead") (issue 40's
bf16 rows).

    bench/gpu/autocast_speed.py prepare RANKC WORK [NAME...]   here
    bench/gpu/autocast_speed.py run WORK [NAME...]             on the GPU machine
                                                               (. scripts/device-env.sh)
    AUTOCAST=0 ...: the same in f32 (no autocast on either side): the
    issue's f32 rows.

NAME is one of bench/gpu/memory.py's models (default gpt6). prepare
exports the step with its optimizer under `autocast="bf16"` (the casts
PyTorch's autocast inserts, f32 master weights and optimizer) and compiles
it for CUDA. run makes the inputs from the seeded model, runs rankc's
`launch --steps 40 --stats` (median step, host wall time of the whole
step), then, each in a process of its own, the same model, weights, batch
and optimizer in PyTorch under torch.autocast("cuda", torch.bfloat16):
eager, torch.compile of the model (default mode) and with
mode="reduce-overhead", 40 steps each (zero_grad, forward, loss,
backward, opt.step), median of the last 20, timed with CUDA events. TF32
off on both sides (f32 GEMMs do not occur in the bf16 steps' forward and
backward; the optimizer is elementwise)."""
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import memory  # noqa: E402  (its CASES, setup and sys.path)

STEPS = 40
AUTOCAST = os.environ.get("AUTOCAST", "1") != "0"


def prepare(rankc, work, names):
    from rankc.export import export_step
    for name in names:
        m, x, t, loss, opt = memory.setup(name)
        t0 = time.time()
        doc = export_step(m, (x,), loss, targets=(t,) if t is not None else (),
                          optimizer=opt, autocast="bf16" if AUTOCAST else None)
        export_s = time.time() - t0
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        dag = os.path.join(d, "step.json")
        json.dump(doc, open(dag, "w"))
        t0 = time.time()
        subprocess.run([rankc, "compile", dag, "-o", os.path.join(d, "exe"), "--target",
                        "cuda"], check=True)
        os.remove(dag)
        print(f"prepared {name}: export {export_s:.1f} s, compile {time.time() - t0:.1f} s",
              flush=True)


def torch_side(name, mode):
    """In a process of its own: prints {step_s, loss}."""
    torch, m, x, t, loss_fn, opt, _ = memory.on_gpu(name)
    fwd = m
    if mode == "compile":
        fwd = torch.compile(m)
    elif mode == "reduce-overhead":
        fwd = torch.compile(m, mode="reduce-overhead")
    times, loss = memory.timed_steps(torch, fwd, x, t, loss_fn, opt, STEPS, AUTOCAST)
    print(json.dumps({"step_s": statistics.median(times[STEPS // 2:]),
                      "loss": float(loss)}))


def rankc_step_s(d):
    """The prepared step in `d`: `launch --steps 40 --stats`, the median
    step of the last 20 (host wall time of the whole step), in seconds."""
    stats = os.path.join(d, "stats.json")
    subprocess.run([os.path.join(d, "exe", "launch"), "--inputs", os.path.join(d, "in"),
                    "--outputs", os.path.join(d, "res"), "--steps", str(STEPS),
                    "--stats", stats, "--timeout", "500"], check=True,
                   stdout=subprocess.DEVNULL)
    r = json.load(open(stats))["ranks"][0]
    return statistics.median([s["wall"] for s in r["per_step"][STEPS // 2:]])


def run(work, names):
    from rankc.datasets import save_inputs
    print(f"| model ({'bf16 autocast' if AUTOCAST else 'f32'}) | rankc ms | eager ms | torch.compile ms "
          "| reduce-overhead ms | rankc / eager | rankc / compile | rankc / reduce-overhead |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        d = os.path.join(work, name)
        m, x, t, _, _ = memory.setup(name)
        save_inputs(os.path.join(d, "in"), m, [(x,)], targets=[(t,)] if t is not None else None)
        ours = rankc_step_s(d)
        theirs = {}
        for mode in ("eager", "compile", "reduce-overhead"):
            p = subprocess.run([sys.executable, __file__, "torch", name, mode],
                               capture_output=True, text=True, env=os.environ)
            lines = p.stdout.strip().splitlines()
            theirs[mode] = json.loads(lines[-1])["step_s"] if p.returncode == 0 and lines \
                else float("nan")
            if p.returncode != 0:
                print(f"{name} {mode}: failed: {p.stderr.strip()[-400:]}", file=sys.stderr)
        e, c, ro = theirs["eager"], theirs["compile"], theirs["reduce-overhead"]
        print(f"| {memory.CASES[name][0]} | {ours * 1e3:.2f} | {e * 1e3:.2f} | {c * 1e3:.2f} "
              f"| {ro * 1e3:.2f} | {ours / e:.2f} | {ours / c:.2f} | {ours / ro:.2f} |",
              flush=True)


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "prepare":
        prepare(sys.argv[2], sys.argv[3], sys.argv[4:] or ["gpt6"])
    elif len(sys.argv) >= 3 and sys.argv[1] == "run":
        run(sys.argv[2], sys.argv[3:] or ["gpt6"])
    elif len(sys.argv) == 4 and sys.argv[1] == "torch":
        torch_side(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
