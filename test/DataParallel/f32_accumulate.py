"""PyTorch with version 3's accumulation rule (dag-format.md): a matmul of
f16/bf16 operands accumulates in f32 and rounds once, as cuBLAS does on the
GPU. PyTorch 1.13's CPU bf16 mm and bmm (this machine's generic BLAS)
round every product and partial sum to bf16 instead, so plain CPU autocast
differs from the rule by bf16's noise; under F32Accumulate the reference
follows the rule and rankc's autocast steps must match it closely."""
import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten
LOW = (torch.bfloat16, torch.float16)


class F32Accumulate(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in (aten.mm.default, aten.bmm.default) and args[0].dtype in LOW:
            return func(args[0].float(), args[1].float()).to(args[0].dtype)
        if func is aten.addmm.default and args[1].dtype in LOW:
            return func(*(a.float() for a in args[:3]), **kwargs).to(args[1].dtype)
        if func is aten.convolution.default and args[0].dtype in LOW:
            wide = [a.float() if isinstance(a, torch.Tensor) else a for a in args]
            return func(*wide, **kwargs).to(args[0].dtype)
        return func(*args, **kwargs)
