"""PyTorch with version 3's mixed-precision rule (dag-format.md), whatever
the CPU: every operation on f16/bf16 values computes in f32 and rounds its
result once to its own dtype. For contractions and reductions that is the
rule itself (accumulate in f32, round once, as cuBLAS does on the GPU); for
the rest it is what rankc computes (each op's opmath in f32 between casts).

PyTorch 1.13's CPU kernels do not: its bf16 mm and bmm on this machine's
generic BLAS round every product and partial sum to bf16, and which bf16
kernels round inside (layer norm, softmax, GELU and their backwards) depends
on the CPU's vector capability (AVX2 and AVX-512 builds of ATen differ), so
a reference that widened only the GEMMs matched rankc within 2e-3 on an
AVX-512 machine and not on an AVX2 one (3-4e-3). Under F32Accumulate the
reference is the rule on every CPU; plain CPU autocast stays bf16's noise
away from it."""
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten, tree_map

LOW = (torch.bfloat16, torch.float16)


def _wide(a):
    return a.float() if isinstance(a, torch.Tensor) and a.dtype in LOW else a


class F32Accumulate(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        low = any(isinstance(a, torch.Tensor) and a.dtype in LOW
                  for a in tree_flatten((args, kwargs))[0])
        # Views and in-place ops return (or write) the tensors they are given:
        # as they are. (They move or overwrite values; they do not round.)
        aliasing = func._schema.is_mutable or any(
            r.alias_info is not None for r in func._schema.returns)
        if not low or aliasing:
            return func(*args, **kwargs)
        # The op as PyTorch runs it gives each output's dtype; the same op on
        # f32 copies of the low-precision inputs gives its value, rounded once.
        expected = func(*args, **kwargs)
        wide = func(*tree_map(_wide, args), **tree_map(_wide, kwargs))

        def rounded(w, e):
            if isinstance(e, torch.Tensor) and e.is_floating_point():
                return w.to(e.dtype)
            return e
        if isinstance(expected, (tuple, list)):
            return type(expected)(rounded(w, e) for w, e in zip(wide, expected))
        return rounded(wide, expected)
