"""The one registry of ATen translations: `@aten("add.Tensor", ...)` on a
function (exporter, fx node, its args, its shape, its dtype) that returns
the DAG id of the node's value, or a list of ids for an op with several
results (then `shape` is None and `dtype` lists the results' dtypes).
Adding an operator is one such function in the ops_*.py of its kind."""


class Unsupported(Exception):
    """An operator (or a use of it) the DAG format cannot express."""


TRANSLATIONS = {}


def aten(*names):
    """Registers the decorated function as the translation of `names`
    (ATen's "op.overload")."""
    def register(f):
        for name in names:
            if name in TRANSLATIONS:
                raise ValueError(f"two translations of aten.{name}")
            TRANSLATIONS[name] = f
        return f
    return register
