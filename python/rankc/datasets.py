"""What `launch --inputs FOLDER` reads, written from PyTorch tensors."""
from rankc.export.step import dag_id
from rankc.export.tracing import CapturedTensors


def save_inputs(folder, model, batches, targets=None):
    """Writes what `launch --inputs FOLDER` reads for a document of
    export_step: on every rank r, each parameter (frozen ones too: they are
    inputs) and each buffer the step carries as FOLDER/rank<r>/<name>.npy,
    batches[r] as input0.npy (a tuple: input0, input1, ...) and targets[r]
    (a tuple) as target0.npy, ..."""
    import numpy as np
    import os
    with CapturedTensors(model):  # (a mask held as an attribute: an input)
        state = list(model.named_parameters()) + list(model.named_buffers())
    for r, batch in enumerate(batches):
        d = os.path.join(folder, f"rank{r}")
        os.makedirs(d, exist_ok=True)
        for name, p in state:
            np.save(os.path.join(d, dag_id(name) + ".npy"), p.detach().cpu().numpy())
        for i, x in enumerate(batch if isinstance(batch, tuple) else (batch,)):
            np.save(os.path.join(d, f"input{i}.npy"), x.numpy())
        for i, t in enumerate(targets[r] if targets else ()):
            np.save(os.path.join(d, f"target{i}.npy"), t.numpy())


def save_feed(folder, name, rows_per_rank):
    """Writes what `launch --feed NAME` reads: FOLDER/rank<r>/NAME.npy
    holding rank r's rows ([S, *shape]: step k reads row k mod S)."""
    import numpy as np
    import os
    for r, rows in enumerate(rows_per_rank):
        d = os.path.join(folder, f"rank{r}")
        os.makedirs(d, exist_ok=True)
        np.save(os.path.join(d, name + ".npy"), np.ascontiguousarray(rows))


_MASK = (1 << 64) - 1


def _splitmix64(state):
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def feed_row(step, rows, seed=None):
    """The row of a feed of `rows` rows that step `step` reads under
    `launch --feed` (with `--shuffle SEED`): cli.md's definition, in Python,
    for a training loop elsewhere that must see the same batches."""
    if seed is None:
        return step % rows
    epoch = step // rows
    perm = list(range(rows))
    state = (seed * 0x9E3779B97F4A7C15 + epoch) & _MASK
    for i in range(rows - 1, 0, -1):
        state, value = _splitmix64(state)
        j = value % (i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return perm[step % rows]
