#!/usr/bin/env python3
"""A training step's peak memory on the CPU: rankc against PyTorch (issue 39).

    bench/cpu/memory_rss.py RANKC WORK [MODEL...]   (rankc.models names;
                                                    default transformer-large
                                                    transformer-xl mlp-large)

Each model's step with Adam (one rank) is exported, compiled with the
memory plan and without it (RANKC_PLAN_BUFFERS=0), and run S steps by
`launch --stats` (max_rss_kb: the rank's peak resident set). PyTorch runs
the same step (zero_grad, loss, backward, opt.step) S times in a process of
its own; its peak resident set is reported next to that of a process that
only imported torch and made the model and its batch (the library's own
code and data, which rankc's executable does not carry); where the steps
add more than a fifth to it, the ratio of rankc's peak to the difference
(PyTorch's step) is given."""
import json
import os
import resource
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
sys.path.insert(0, os.path.join(ROOT, "scripts"))
STEPS = 5


def setup(name):
    import torch
    from rankc.models import MODELS
    torch.manual_seed(0)
    model, x = MODELS[name]()
    return torch, model, x


def torch_side(name, steps):
    torch, model, x = setup(name)
    torch.set_num_threads(1)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = (model(x) ** 2).mean()
        loss.backward()
        opt.step()
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def main():
    rankc, work = sys.argv[1], sys.argv[2]
    names = sys.argv[3:] or ["transformer-large", "transformer-xl", "mlp-large"]
    import export_torch
    os.makedirs(work, exist_ok=True)
    print("| model (Adam, 1 rank, CPU) | rankc planned | rankc no plan | PyTorch eager "
          "| PyTorch with no step | planned / PyTorch's step |")
    print("|---|---|---|---|---|---|")
    for name in names:
        torch, model, x = setup(name)
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        doc = export_torch.export_step(model, (x,), lambda y: (y * y).mean(), world_size=1,
                                       optimizer=opt)
        d = os.path.join(work, name)
        os.makedirs(d, exist_ok=True)
        json.dump(doc, open(os.path.join(d, "step.json"), "w"))
        export_torch.save_inputs(os.path.join(d, "in"), model, [(x,)])
        rss = {}
        for plan in ("1", "0"):
            exe = os.path.join(d, "plan" + plan)
            subprocess.run([rankc, "compile", os.path.join(d, "step.json"), "-o", exe],
                           check=True, env=dict(os.environ, RANKC_PLAN_BUFFERS=plan))
            stats = os.path.join(d, f"stats{plan}.json")
            subprocess.run([os.path.join(exe, "launch"), "--inputs", os.path.join(d, "in"),
                            "--outputs", os.path.join(d, "res" + plan), "--steps", str(STEPS),
                            "--stats", stats], check=True, stdout=subprocess.DEVNULL)
            rss[plan] = json.load(open(stats))["ranks"][0]["max_rss_kb"]
        run = [sys.executable, __file__, "--torch", name]
        pt = int(subprocess.run(run + [str(STEPS)], check=True, capture_output=True,
                                text=True).stdout.split()[-1])
        base = int(subprocess.run(run + ["0"], check=True, capture_output=True,
                                  text=True).stdout.split()[-1])
        mb = 1024
        # (Where the steps add little to the library's footprint the
        # difference says nothing: no ratio.)
        ratio = f"{rss['1'] / (pt - base):.2f}" if pt - base > 0.2 * pt else "-"
        print(f"| {name} | {rss['1'] / mb:.0f} MB | {rss['0'] / mb:.0f} MB | {pt / mb:.0f} MB "
              f"| {base / mb:.0f} MB | {ratio} |", flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--torch":
        torch_side(sys.argv[2], int(sys.argv[3]))
    else:
        main()
