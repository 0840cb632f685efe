"""rankc from Python.

- rankc.export: a PyTorch training step as a rankc DAG (export_step);
- rankc.datasets: the inputs `launch --inputs` reads (save_inputs);
- rankc.models: small models to try it on;
- rankc.program: a compiled `--emit lib` program, stepped from Python (the
  module `rankc compile --emit lib` writes as OUT/python/rankc_program.py).

Put this folder's parent (python/) on sys.path; rankc.export needs torch,
rankc.program only NumPy.
"""
