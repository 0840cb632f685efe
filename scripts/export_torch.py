#!/usr/bin/env python3
"""The exporter's command line: a training step of one of rankc.models as a
DAG. The exporter itself is the package python/rankc/export; this script
also keeps `import export_torch` working for scripts that put scripts/ on
sys.path.

    python3 scripts/export_torch.py MODEL OUT.json   (MODEL: see rankc.models)
        [--world-size N] [--bucket-cap-mb X] [--first-bucket-cap-mb Y]
        [--optimizer sgd|adam|adamw --lr X [--momentum M] [--dampening D]
         [--nesterov] [--weight-decay W] [--betas B1,B2] [--eps E]]
        [--freeze PARAM]...
        [--lr-schedule JSON | --lr-input] [--clip-grad-norm M]
        [--accumulate K] [--global-loss] [--autocast bf16]

--lr-schedule takes dag-format.md's `lr_schedule` list as JSON, e.g.
'[{"kind": "linear", "start_factor": 0.1, "steps": 100},
  {"kind": "cosine", "steps": 900, "min_factor": 0.1}]'.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

import torch  # noqa: E402

from rankc.datasets import save_inputs  # noqa: E402,F401
from rankc.export import (MAX_CONSTANT, Exporter, Unsupported, dag_id,  # noqa: E402,F401
                          export_step, optimizer_settings)
from rankc.models import MLP, MODELS, TransformerBlock  # noqa: E402,F401


def main():
    ap = argparse.ArgumentParser(description="Export a training step as a rankc DAG.")
    ap.add_argument("model", help=", ".join(MODELS))
    ap.add_argument("out")
    ap.add_argument("--world-size", type=int, default=2)
    ap.add_argument("--bucket-cap-mb", type=float, default=0.002)
    ap.add_argument("--first-bucket-cap-mb", type=float, default=0.001)
    ap.add_argument("--optimizer", choices=["sgd", "adam", "adamw"])
    ap.add_argument("--lr", type=float)
    ap.add_argument("--momentum", type=float)
    ap.add_argument("--dampening", type=float)
    ap.add_argument("--nesterov", action="store_true")
    ap.add_argument("--weight-decay", type=float)
    ap.add_argument("--betas", type=lambda s: [float(b) for b in s.split(",")])
    ap.add_argument("--eps", type=float)
    ap.add_argument("--freeze", action="append", default=[], metavar="PARAM",
                    help="a parameter to export with requires_grad=False")
    ap.add_argument("--lr-schedule", type=json.loads, metavar="JSON",
                    help="the learning-rate schedule: a list of phases (dag-format.md)")
    ap.add_argument("--lr-input", action="store_true",
                    help="the learning rate is the input 'lr' (f64), set every step")
    ap.add_argument("--clip-grad-norm", type=float, metavar="M",
                    help="clip gradients to total norm M (output 'grad_norm')")
    ap.add_argument("--accumulate", type=int, default=1, metavar="K",
                    help="micro-steps per optimizer update")
    ap.add_argument("--global-loss", action="store_true",
                    help="also output 'global_loss', the loss averaged over the ranks")
    ap.add_argument("--autocast", choices=["bf16"],
                    help="trace the forward under torch.autocast (CPU rules): "
                         "bf16 matmuls, f32 master weights and optimizer")
    a = ap.parse_args()
    torch.manual_seed(0)
    if a.model not in MODELS:
        raise SystemExit(f"error: export_torch: unknown model '{a.model}' "
                         f"(known: {', '.join(MODELS)})")
    model, batch = MODELS[a.model]()
    known = dict(model.named_parameters())
    for name in a.freeze:
        if name not in known:
            raise SystemExit(f"error: export_torch: --freeze '{name}' is not a parameter "
                             f"(known: {', '.join(known)})")
        known[name].requires_grad_(False)
    optimizer = None
    if a.optimizer:
        if a.lr is None:
            raise SystemExit("error: export_torch: --optimizer needs --lr")
        optimizer = {"kind": a.optimizer, "lr": a.lr}
        fields = {"momentum": a.momentum, "dampening": a.dampening,
                  "weight_decay": a.weight_decay, "betas": a.betas, "eps": a.eps}
        optimizer.update({k: v for k, v in fields.items() if v is not None})
        if a.nesterov:
            optimizer["nesterov"] = True
    doc = export_step(model, (batch,), lambda y: (y * y).mean(),
                      world_size=a.world_size, bucket_cap_mb=a.bucket_cap_mb,
                      first_bucket_cap_mb=a.first_bucket_cap_mb, optimizer=optimizer,
                      lr_schedule=a.lr_schedule, lr_input=a.lr_input,
                      clip_grad_norm=a.clip_grad_norm, accumulate=a.accumulate,
                      global_loss=a.global_loss, autocast=a.autocast)
    json.dump(doc, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
