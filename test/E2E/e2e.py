#!/usr/bin/env python3
"""End-to-end: compile DAGs, run them under MPICH, compare every rank's
outputs with the NumPy reference (reference.py).

    e2e.py RANKC WORKDIR DAG.json... [--seed S] [--random N] [--steps N] [--lib]
           [--cpu NAME] [--threads N]

--random N also generates N random deadlock-free MPMD programs (with the
generator of test/Random) and checks them the same way. --steps N runs
every program N steps in one process (launch --steps) against N steps of
the reference (state carried, the optimizer applied). --lib compiles with
`--emit lib` and steps the programs through the Python module under
mpiexec (lib_runner.py) instead of OUT/launch. --cpu NAME compiles with
`rankc compile --cpu NAME`, --threads N with `rankc compile --threads N`
(each rank's loops and GEMMs on N OpenMP threads). Prints one line per
DAG and "N passed, M failed"; exits 1 on any failure."""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Random"))
import reference  # noqa: E402

FLAGS = []  # for `rankc compile` (--cpu, --threads)
TOL = {"f16": (2e-2, 2e-2), "bf16": (5e-2, 5e-2), "f32": (2e-4, 1e-5),
       "f64": (1e-9, 1e-12)}


def make_input(rng, node):
    shape, dt = node["shape"], node["dtype"]
    if dt in ("f16", "bf16", "f32", "f64"):
        v = rng.uniform(0.1, 1.0, size=shape) * rng.choice([-1, 1], size=shape)
        return reference.round_bf16(v) if dt == "bf16" else v.astype(reference.DT[dt])
    if dt == "bool":
        return rng.random(size=shape) < 0.5
    if dt in ("u8", "u16", "u32"):
        return rng.integers(0, 17, size=shape).astype(reference.DT[dt])
    return rng.integers(-8, 9, size=shape).astype(reference.DT[dt])


def save(path, value, dt):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, reference.to_bf16_bits(value) if dt == "bf16" else value)


def run_lib(rankc, path, base, ws, steps):
    """Like launch: every rank's outputs in base/res, via the Python module."""
    out = os.path.join(base, "lib")
    p = subprocess.run([rankc, "compile", path, "-o", out, "--emit", "lib"] + FLAGS,
                       capture_output=True, text=True)
    if p.returncode != 0:
        return f"compile failed: {p.stderr.strip()}"
    runner = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib_runner.py")
    mpiexec = os.environ.get("RANKC_MPIEXEC") or "mpiexec.mpich"
    p = subprocess.run([mpiexec, "-n", str(ws), sys.executable, runner, out,
                        os.path.join(base, "in"), os.path.join(base, "res"), str(steps)],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        return f"run failed ({p.returncode}): {p.stderr.strip()}"
    return None


def check(rankc, workdir, path, seed, steps=1, lib=False):
    name = os.path.splitext(os.path.basename(path))[0]
    base = os.path.join(workdir, name)
    doc = json.load(open(path))
    ws = doc["world_size"]
    rng = np.random.default_rng(seed)
    out = os.path.join(base, "exe")
    if not lib:
        p = subprocess.run([rankc, "compile", path, "-o", out] + FLAGS, capture_output=True,
                           text=True)
        if p.returncode != 0:
            return f"compile failed: {p.stderr.strip()}"
    inputs = {r: {} for r in range(ws)}
    for prog in doc["programs"]:
        for r in (range(ws) if prog["ranks"] == "all" else prog["ranks"]):
            for node in prog["nodes"]:
                if node["op"] in ("input", "param"):
                    v = make_input(rng, node)
                    inputs[r][node["id"]] = v
                    save(os.path.join(base, "in", f"rank{r}", node["id"] + ".npy"), v, node["dtype"])
    res = os.path.join(base, "res")
    if lib:
        why = run_lib(rankc, path, base, ws, steps)
        if why:
            return why
    else:
        p = subprocess.run([os.path.join(out, "launch"), "--inputs", os.path.join(base, "in"),
                            "--outputs", res, "--timeout", "60", "--steps", str(steps)],
                           capture_output=True, text=True, timeout=300)
        if p.returncode != 0:
            return f"run failed ({p.returncode}): {p.stderr.strip()}"
    expected = (reference.evaluate(doc, inputs) if steps == 1
                else reference.evaluate_steps(doc, inputs, steps))
    for r, outs in expected.items():
        for oname, (want, dt) in outs.items():
            f = os.path.join(res, f"rank{r}", oname + ".npy")
            if not os.path.exists(f):
                return f"rank {r}: missing output {oname}"
            got = np.load(f)
            if dt == "bf16":
                got = reference.from_bf16_bits(got)
            want = np.asarray(want)
            if got.shape != want.shape:
                return f"rank {r}, {oname}: shape {got.shape} != {want.shape}"
            if dt in TOL:
                rtol, atol = TOL[dt]
                ok = np.allclose(got.astype(np.float64), want.astype(np.float64),
                                 rtol=rtol, atol=atol, equal_nan=True)
            else:
                ok = np.array_equal(got, want.astype(got.dtype))
            if not ok:
                return f"rank {r}, {oname} ({dt}): got {got.ravel()[:6]} want {want.ravel()[:6]}"
    return None


def main():
    rankc, workdir = sys.argv[1], sys.argv[2]
    args = sys.argv[3:]
    seed = 0
    randoms = 0
    steps = 1
    lib = "--lib" in args
    if lib:
        args.remove("--lib")
    if "--steps" in args:
        i = args.index("--steps")
        steps = int(args[i + 1])
        del args[i:i + 2]
    for flag in ("--cpu", "--threads"):
        if flag in args:
            i = args.index(flag)
            FLAGS.extend([flag, args[i + 1]])
            del args[i:i + 2]
    if "--seed" in args:
        i = args.index("--seed")
        seed = int(args[i + 1])
        del args[i:i + 2]
    if "--random" in args:
        i = args.index("--random")
        randoms = int(args[i + 1])
        del args[i:i + 2]
    os.makedirs(workdir, exist_ok=True)
    if randoms:
        import random
        import random_dags
        rng = random.Random(seed)
        for i in range(randoms):
            b = random_dags.Builder(rng, rng.randint(1, 4))
            b.valid_traffic(rng.randint(3, 20))
            path = os.path.join(workdir, f"random{i}.json")
            with open(path, "w") as f:
                json.dump(b.document(), f)
            args.append(path)
    passed = failed = 0
    for path in args:
        why = check(rankc, workdir, path, seed, steps, lib)
        print(("PASS: " if why is None else "FAIL: ") + os.path.basename(path) +
              ("" if why is None else ": " + why))
        if why is None:
            passed += 1
        else:
            failed += 1
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
