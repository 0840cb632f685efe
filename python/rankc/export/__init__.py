"""Exports one data-parallel training step of a torch.nn.Module to rankc's
DAG format: the forward pass and the backward pass (traced with make_fx into
ATen ops), parameters in registration order as `param` nodes, the batch as
`input` nodes, the loss as an output and every gradient as a `grad_of`
output. Works with Debian's python3-torch (1.13) and current PyTorch.

    from rankc.export import export_step      # python/ on sys.path
    doc = export_step(model, example_inputs, loss_fn, world_size=2,
                      bucket_cap_mb=25, first_bucket_cap_mb=1,
                      optimizer={"kind": "sgd", "lr": 0.1, "momentum": 0.9})

    python3 scripts/export_torch.py MODEL OUT.json   (MODEL: see rankc.models)
        [--world-size N] [--bucket-cap-mb X] [--first-bucket-cap-mb Y]
        [--optimizer sgd|adam|adamw --lr X [--momentum M] [--dampening D]
         [--nesterov] [--weight-decay W] [--betas B1,B2] [--eps E]]
        [--freeze PARAM]...

    doc = export_step(model, (x,), lambda y, t: F.cross_entropy(y, t),
                      targets=(labels,), world_size=2)

The loss is loss_fn(model(*inputs), *targets); the inputs are `input0`,
... and the targets `target0`, ... (rankc.datasets.save_inputs writes both,
with the parameters and carried buffers, per rank).

With an optimizer (a dict as dag-format.md's `optimizer`, or a
torch.optim.SGD/Adam/AdamW whose settings are copied) the document is
version 2 and trains under `launch --steps N`: every parameter is updated
after each step. Parameters with requires_grad=False (or --freeze) are not
parameters of the step: they become `input` nodes (values supplied like the
batch's) with no gradient, so DDP's averaging and the optimizer skip them.
A parameter shared by several modules (a head tied to its embedding) is one
`param` whose gradient sums every use. Buffers the step writes (batch
norm's running statistics, in training mode) are inputs carried as
`state` and written after the last step under their names; the other
buffers and the tensors the model or the loss captures become `constant`
nodes (at most MAX_CONSTANT elements each: larger ones must be inputs).
Parameter and buffer ids are their PyTorch names, with a leading '_' where
the name does not start with a letter (nn.Sequential's `0.weight` is
`_0.weight`: dag_id()).

The operators: one registry of ATen translations (registry.py), filled
by ops_core.py (elementwise, matmuls, layer norm, softmax, GELU),
ops_losses.py, ops_shapes.py, ops_conv.py and ops_norm.py (losses, shapes,
embeddings, convolution, pooling, batch and group norm, with their
backward).
Operators without a translation stop the export with one message listing
every one of them and the module each comes from; dropout in training mode
is refused (the DAG has no random numbers).
"""
from . import ops_conv, ops_core, ops_losses, ops_norm, ops_shapes  # noqa: F401  (registers)
from .builder import DTYPES, Exporter  # noqa: F401
from .registry import TRANSLATIONS, Unsupported, aten  # noqa: F401
from .step import (MAX_CONSTANT, dag_id, export_step, lr_schedule_phases,  # noqa: F401
                   optimizer_settings)
