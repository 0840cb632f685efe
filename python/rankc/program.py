"""Compiled rankc programs from Python: NumPy arrays in and out.

Written by `rankc compile --emit lib` into OUT/python/. Run the script
under mpiexec (MPICH's: the libraries are linked with MPICH, so the script
must not also load another MPI, such as mpi4py built on Open MPI):

    import sys; sys.path.insert(0, "OUT/python")
    import rankc_program
    prog = rankc_program.load("OUT")   # this rank's program; initializes MPI
    res = prog.step({"x": x, "w": w})  # dict: output name -> numpy array
    res = prog.step({"x": x2})         # carried inputs may be left out
    prog.close()

Each rank loads the library of the program that plan.json assigns to it
(OUT/lib/librankc_P.so) through ctypes. Inputs are checked here (names,
shapes, dtypes: ValueError naming the input) and copied in by the library;
outputs are new arrays, so a failed step writes nothing the caller holds.
"""

import atexit
import ctypes
import json
import os
import sys

import numpy as np

__all__ = ["load", "Program"]

# bf16 has no NumPy dtype: ml_dtypes' bfloat16 if it is installed, else its
# raw bits as uint16. Inputs may be either (uint16 holds the bits, as the
# .npy files of OUT/launch do).
try:
    import ml_dtypes

    _BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:
    _BF16 = np.dtype(np.uint16)

_DTYPES = {
    "bool": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "f16": np.dtype(np.float16),
    "bf16": _BF16,
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "u8": np.dtype(np.uint8),
    "u16": np.dtype(np.uint16),
    "u32": np.dtype(np.uint32),
}

# Where launchers say which rank a process is, before MPI is up: Hydra and
# Slurm's PMI (PMI_RANK), PMIx, Open MPI, Slurm.
_RANK_VARIABLES = ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
                   "MV2_COMM_WORLD_RANK", "SLURM_PROCID")


def _launcher_rank():
    """This process's rank, or None without a launcher (a singleton)."""
    for name in _RANK_VARIABLES:
        value = os.environ.get(name)
        if value and value.isdigit():
            return int(value)
    return None


class Program:
    """One rank's compiled program: step() runs it once."""

    def __init__(self, library_path, name):
        self.name = name
        self._lib = ctypes.CDLL(library_path)
        self._fn = {}
        prefix = "rankc_%s_" % name
        c_int, c_char_p = ctypes.c_int, ctypes.c_char_p
        c_shape = ctypes.POINTER(ctypes.c_int64)
        for fn, res, args in [
                ("init", c_int, []), ("finalize", c_int, []),
                ("step", c_int, [ctypes.c_void_p, ctypes.c_void_p]),
                ("last_error", c_char_p, []), ("rank", c_int, []),
                ("world_size", c_int, []), ("num_inputs", c_int, []),
                ("step_count", ctypes.c_int64, []),
                ("save", c_int, [c_char_p]), ("load", c_int, [c_char_p]),
                ("num_outputs", c_int, []),
                ("input_name", c_char_p, [c_int]),
                ("input_dtype", c_char_p, [c_int]),
                ("input_rank", c_int, [c_int]),
                ("input_shape", c_shape, [c_int]),
                ("input_is_state", c_int, [c_int]),
                ("output_alias", c_char_p, [c_int, c_int]),
                ("output_dtype", c_char_p, [c_int]),
                ("output_rank", c_int, [c_int]),
                ("output_shape", c_shape, [c_int])]:
            f = getattr(self._lib, prefix + fn)
            f.restype, f.argtypes = res, args
            self._fn[fn] = f
        if self._fn["init"]() != 0:
            error = self._fn["last_error"]().decode()
            self._fn["finalize"]()  # ends what init started (MPI)
            raise RuntimeError("rankc program %s: %s" % (name, error))
        self._open = True
        atexit.register(self.close)
        self.rank = self._fn["rank"]()
        self.world_size = self._fn["world_size"]()
        f = self._fn
        self._in = []
        for i in range(f["num_inputs"]()):
            self._in.append((f["input_name"](i).decode(),
                             self._shape(f["input_shape"](i), f["input_rank"](i)),
                             _DTYPES[f["input_dtype"](i).decode()],
                             bool(f["input_is_state"](i))))
        self._out = []
        for i in range(f["num_outputs"]()):
            names, j = [], 0
            while True:
                n = f["output_alias"](i, j)
                if n is None:
                    break
                names.append(n.decode())
                j += 1
            self._out.append((names,
                              self._shape(f["output_shape"](i), f["output_rank"](i)),
                              _DTYPES[f["output_dtype"](i).decode()]))
        self.steps_done = 0
        #: (name, shape, dtype) of every input, in the order of the DAG.
        self.inputs = [(n, s, d) for n, s, d, _ in self._in]
        #: names of the inputs carried from step to step (state, and the
        #: parameters an optimizer updates): step() may leave them out
        #: after the first step.
        self.carried = [n for n, _, _, c in self._in if c]
        #: (name, shape, dtype) of every output name.
        self.outputs = [(n, s, d) for names, s, d in self._out for n in names]

    def save(self, folder):
        """Writes all this rank carries to folder/rank<r>/ (a checkpoint
        launch --resume and load() read)."""
        if self._fn["save"](os.fsencode(folder)) != 0:
            raise RuntimeError("rankc program %s: %s" % (self.name,
                               self._fn["last_error"]().decode()))

    def load(self, folder):
        """Reads folder/rank<r>/ back: the run continues from its step."""
        if self._fn["load"](os.fsencode(folder)) != 0:
            raise RuntimeError("rankc program %s: %s" % (self.name,
                               self._fn["last_error"]().decode()))
        self.steps_done = self.step_count

    @property
    def step_count(self):
        """The steps done: the `step` leaf's value in the next step."""
        return self._fn["step_count"]()

    @staticmethod
    def _shape(dims, rank):
        return tuple(dims[k] for k in range(rank))

    def _check(self, status):
        if status != 0:
            raise RuntimeError("rankc program %s: %s" % (
                self.name, self._fn["last_error"]().decode()))

    def step(self, inputs):
        """Runs one step; returns {output name: new numpy array}."""
        if not getattr(self, "_open", False):
            raise RuntimeError("rankc program %s is closed" % self.name)
        if not isinstance(inputs, dict):
            raise ValueError("step() takes a dict {input name: array}")
        known = {n for n, _, _, _ in self._in}
        for name in inputs:
            if name not in known:
                raise ValueError("unknown input '%s' (the program's inputs: %s)" %
                                 (name, ", ".join(sorted(known)) or "none"))
        arrays, pointers = [], (ctypes.c_void_p * max(len(self._in), 1))()
        for i, (name, shape, dtype, carried) in enumerate(self._in):
            if name not in inputs:
                if carried and self.steps_done > 0:
                    continue  # NULL: the value carried from the last step
                raise ValueError("missing input '%s'%s" % (
                    name, " (it is carried from step to step, but only after "
                    "the first step)" if carried else ""))
            a = np.asarray(inputs[name])
            if dtype == _BF16 and a.dtype == np.uint16:
                a = a.view(_BF16)  # bf16 given as its bits
            if a.dtype != dtype:
                raise ValueError("input '%s' has dtype %s, the program takes %s" %
                                 (name, a.dtype, dtype))
            if a.shape != shape:
                raise ValueError("input '%s' has shape %s, the program takes %s" %
                                 (name, a.shape, shape))
            a = np.ascontiguousarray(a)
            arrays.append(a)
            # A zero-size array still needs an address that is not NULL.
            pointers[i] = a.ctypes.data if a.nbytes else ctypes.addressof(pointers)
        results = [np.empty(shape, dtype) for _, shape, dtype in self._out]
        out = (ctypes.c_void_p * max(len(results), 1))()
        for i, r in enumerate(results):
            # A zero-size array still needs an address that is not NULL.
            out[i] = r.ctypes.data if r.nbytes else ctypes.addressof(out)
        self._check(self._fn["step"](pointers, out))
        self.steps_done += 1
        return {n: r for (names, _, _), r in zip(self._out, results) for n in names}

    def close(self):
        """Frees the program; finalizes MPI if load() started it."""
        if getattr(self, "_open", False):
            self._open = False
            self._check(self._fn["finalize"]())

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def load(out_dir, rank=None):
    """The program of this MPI rank (plan.json) from OUT, initialized.

    The rank comes from the launcher's environment (PMI_RANK and the like;
    0 without a launcher) unless given; init checks it against MPI's.
    """
    with open(os.path.join(out_dir, "plan.json")) as f:
        plan = json.load(f)
    if rank is None:
        rank = _launcher_rank()
        if rank is None and plan["world_size"] > 1:
            # Started as `python3 script.py`: one process of a world of W.
            script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "SCRIPT.py"
            raise RuntimeError(
                "%s holds a program of %d ranks and this process was not started "
                "by mpiexec; start one process per rank: mpiexec -n %d %s %s"
                % (out_dir, plan["world_size"], plan["world_size"],
                   os.path.basename(sys.executable) or "python3", script))
        rank = rank or 0
    for p in plan["programs"]:
        if rank in p["ranks"]:
            name = p["executable"]
            break
    else:
        raise ValueError("rank %d runs no program of %s (world size %d)" %
                         (rank, out_dir, plan["world_size"]))
    path = os.path.join(os.path.abspath(out_dir), "lib", "librankc_%s.so" % name)
    return Program(path, name)
