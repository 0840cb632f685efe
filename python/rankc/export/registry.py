"""The one registry of ATen translations: `@aten("add.Tensor", ...)` on a
function (exporter, fx node, its args, its shape, its dtype) that returns
the DAG id of the node's value, or a list of ids for an op with several
results (then `shape` is None and `dtype` lists the results' dtypes).
Adding an operator is one such function in the ops_*.py of its kind."""


class Unsupported(Exception):
    """An operator (or a use of it) the DAG format cannot express."""


TRANSLATIONS = {}
# Operators PyTorch computes in f32 on f16/bf16 tensors, rounding only their
# results (ATen's opmath: a fused softmax, a layer norm, addmm's bias added
# to the f32 accumulator). Their translations are several DAG nodes, each of
# which would round: the exporter runs them in f32 between casts instead.
OPMATH = set()


def aten(*names, opmath=False):
    """Registers the decorated function as the translation of `names`
    (ATen's "op.overload"); `opmath`: see OPMATH."""
    def register(f):
        for name in names:
            if name in TRANSLATIONS:
                raise ValueError(f"two translations of aten.{name}")
            TRANSLATIONS[name] = f
            if opmath:
                OPMATH.add(name)
        return f
    return register
