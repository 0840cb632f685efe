"""What `launch --inputs FOLDER` reads, written from PyTorch tensors."""
from rankc.export.step import dag_id


def save_inputs(folder, model, batches, targets=None):
    """Writes what `launch --inputs FOLDER` reads for a document of
    export_step: on every rank r, each parameter (frozen ones too: they are
    inputs) and each buffer the step carries as FOLDER/rank<r>/<name>.npy,
    batches[r] as input0.npy (a tuple: input0, input1, ...) and targets[r]
    (a tuple) as target0.npy, ..."""
    import numpy as np
    import os
    for r, batch in enumerate(batches):
        d = os.path.join(folder, f"rank{r}")
        os.makedirs(d, exist_ok=True)
        for name, p in list(model.named_parameters()) + list(model.named_buffers()):
            np.save(os.path.join(d, dag_id(name) + ".npy"), p.detach().numpy())
        for i, x in enumerate(batch if isinstance(batch, tuple) else (batch,)):
            np.save(os.path.join(d, f"input{i}.npy"), x.numpy())
        for i, t in enumerate(targets[r] if targets else ()):
            np.save(os.path.join(d, f"target{i}.npy"), t.numpy())
