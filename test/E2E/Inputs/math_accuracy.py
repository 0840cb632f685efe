"""erf and tanh of f32 as compiled for the CPU, against float64 references,
in units in the last place of the f32 result (ulps): a DAG of 2^20 points
over [-8, 8], built, run under launch, compared.

    math_accuracy.py RANKC WORKDIR

The bounds are those of glibc's erff and tanhf (what the CUDA backend's
libdevice also meets): a cheaper approximation that moved a 6-step Adam
run of the transformer further than the GPU does (4.5 ulps) fails here."""
import json
import math
import os
import subprocess
import sys

import numpy as np

BOUND = {"erf": 1.0, "tanh": 2.5}


def main():
    rankc, work = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(work, "in", "rank0"), exist_ok=True)
    n = 1 << 20
    doc = {"format": "rankc-dag", "version": 1, "world_size": 1,
           "programs": [{"ranks": [0], "nodes": [
               {"id": "x", "op": "input", "shape": [n], "dtype": "f32"},
               {"id": "e", "op": "erf", "args": ["x"]},
               {"id": "t", "op": "tanh", "args": ["x"]}],
               "outputs": {"erf": "e", "tanh": "t"}}]}
    json.dump(doc, open(os.path.join(work, "d.json"), "w"))
    x = np.linspace(-8, 8, n).astype(np.float32)
    np.save(os.path.join(work, "in", "rank0", "x.npy"), x)
    exe = os.path.join(work, "exe")
    subprocess.run([rankc, "compile", os.path.join(work, "d.json"), "-o", exe], check=True)
    subprocess.run([os.path.join(exe, "launch"), "--inputs", os.path.join(work, "in"),
                    "--outputs", os.path.join(work, "res")], check=True,
                   stdout=subprocess.DEVNULL)
    x64 = x.astype(np.float64)
    reference = {"erf": np.array([math.erf(v) for v in x64]), "tanh": np.tanh(x64)}
    for name, ref in reference.items():
        got = np.load(os.path.join(work, "res", "rank0", name + ".npy")).astype(np.float64)
        ulp = np.maximum(np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64), 1e-45)
        err = np.abs(got - ref) / ulp
        worst = int(np.argmax(err))
        verdict = "ok" if err[worst] <= BOUND[name] else "TOO FAR"
        print(f"{name}: worst {err[worst]:.2f} ulps at x = {x[worst]:.6g} "
              f"(bound {BOUND[name]}): {verdict}")


if __name__ == "__main__":
    main()
