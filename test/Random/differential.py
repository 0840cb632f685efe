#!/usr/bin/env python3
"""Differential test: random valid programs (programs.py) checked,
compiled, run under mpiexec and compared with the NumPy reference.

    differential.py RANKC WORKDIR --seeds A:B [--limit N] [--cuda] [--keep]

For every seed in [A, B): the document is written to WORKDIR/s<seed>.json;
`rankc check` must pass; `rankc compile` (CPU) must build; OUT/launch runs
it on inputs drawn here (indices in range) and every rank's outputs must
equal the reference's (floats within the dtype's tolerance, scaled by the
output's magnitude, everything else bit for bit). With --cuda
`rankc compile --target cuda --emit ptx -o -` must produce PTX as well.
--limit N checks the first N seeds of the range only. Prints a line per failing seed (with the command to reproduce it) and
"N passed, M failed"; exits 1 on any failure. Passing seeds' files are
removed unless --keep."""
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MACHINES = os.path.join(HERE, "..", "DataParallel", "Inputs")  # rankc calibrate's files
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "E2E"))
import programs  # noqa: E402
import reference  # noqa: E402

def make_inputs(doc, ranges, seed):
    rng = np.random.default_rng(seed)
    ws = doc["world_size"]
    inputs = {r: {} for r in range(ws)}
    for prog in doc["programs"]:
        for r in (range(ws) if prog["ranks"] == "all" else prog["ranks"]):
            for node in prog["nodes"]:
                if node["op"] not in ("input", "param"):
                    continue
                shape, dt = node["shape"], node["dtype"]
                if dt in programs.FLOATS:
                    v = rng.uniform(0.1, 1.0, size=shape) * rng.choice([-1, 1], size=shape)
                    v = reference.round_bf16(v) if dt == "bf16" else v.astype(reference.DT[dt])
                elif dt == "bool":
                    v = rng.random(size=shape) < 0.5
                else:
                    lo, hi = ranges.get(node["id"], (-8, 8))
                    v = rng.integers(lo, hi + 1, size=shape).astype(reference.DT[dt])
                inputs[r][node["id"]] = v
    return inputs


def save_inputs(inputs, doc, folder):
    types = {}
    for prog in doc["programs"]:
        for node in prog["nodes"]:
            if node["op"] in ("input", "param"):
                types[node["id"]] = node["dtype"]
    for r, vals in inputs.items():
        os.makedirs(os.path.join(folder, f"rank{r}"), exist_ok=True)
        for nid, v in vals.items():
            np.save(os.path.join(folder, f"rank{r}", nid + ".npy"),
                    reference.to_bf16_bits(v) if types[nid] == "bf16" else v)


def compare(got, want, dt, eps):
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    if dt == "bf16":
        got = reference.from_bf16_bits(np.atleast_1d(got)).reshape(got.shape)
    if dt in programs.EPS:
        # Relative to the output's largest element too: a sum that cancels
        # keeps the error of its larger terms.
        g, w = got.astype(np.float64), np.asarray(want).astype(np.float64)
        scale = max(1.0, float(np.max(np.abs(w[np.isfinite(w)]), initial=0)))
        ok = np.isclose(g, w, rtol=eps, atol=eps * scale, equal_nan=True)
        if ok.all():
            return None
        i = np.argmin(ok.ravel())
        return f"got {g.ravel()[i]!r} want {w.ravel()[i]!r} at flat index {i}"
    if np.array_equal(got, np.asarray(want).astype(got.dtype)):
        return None
    return f"got {got.ravel()[:6]} want {np.asarray(want).ravel()[:6]}"


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def check_seed(rankc, workdir, seed, cuda):
    doc, ranges, eps = programs.make_program(seed)
    base = os.path.join(workdir, f"s{seed}")
    shutil.rmtree(base, ignore_errors=True)
    os.makedirs(base)
    path = base + ".json"
    with open(path, "w") as f:
        json.dump(doc, f)
    p = run([rankc, "check", path])
    if p.returncode != 0:
        return f"check failed ({p.returncode}): {p.stderr.strip()[:400]}"
    out = os.path.join(base, "exe")
    # Half the training documents have their buckets chosen by a machine
    # model (--bucket-cap-mb auto, issue 41): the same values either way.
    extra = []
    if doc.get("data_parallel") and seed % 2:
        machine = "machine-bandwidth.json" if seed % 4 == 1 else "machine-latency.json"
        extra = ["--bucket-cap-mb", "auto", "--machine", os.path.join(MACHINES, machine)]
    p = run([rankc, "compile", path, "-o", out] + extra, timeout=600)
    if p.returncode != 0:
        return f"compile{' ' + ' '.join(extra) if extra else ''} failed ({p.returncode}): " \
            f"{p.stderr.strip()[-400:]}"
    if cuda:
        p = run([rankc, "compile", path, "--target", "cuda", "--emit", "ptx", "-o", "-"],
                timeout=600)
        if p.returncode != 0:  # (a program of messages only has no kernels)
            return f"cuda compile failed ({p.returncode}): {p.stderr.strip()[-400:]}"
    inputs = make_inputs(doc, ranges, seed)
    save_inputs(inputs, doc, os.path.join(base, "in"))
    res = os.path.join(base, "res")
    # A training document runs two updates (of `accumulate` micro-steps).
    dp = doc.get("data_parallel")
    steps = 2 * dp.get("accumulate", 1) if dp else 1
    p = run([os.path.join(out, "launch"), "--inputs", os.path.join(base, "in"),
             "--outputs", res, "--timeout", "120", "--steps", str(steps)], timeout=300)
    if p.returncode != 0:
        return f"run failed ({p.returncode}): {p.stderr.strip()[-400:]}"
    expected = (reference.evaluate_steps(doc, inputs, steps) if dp
                else reference.evaluate(doc, inputs))
    prog_of = {r: prog for prog in doc["programs"]
               for r in (range(doc["world_size"]) if prog["ranks"] == "all" else prog["ranks"])}
    for r, outs in expected.items():
        for name, (want, dt) in outs.items():
            target = prog_of[r]["outputs"].get(name)
            if target is None or name == "g":
                # The updated param, the gradient (clipped: the norm's
                # rounding too) and the total norm: as good as the gradient.
                g = prog_of[r]["outputs"]["g"]["node"]
                tol = 8 * eps[g]
            else:
                tol = eps[target if isinstance(target, str) else target["node"]]
            f = os.path.join(res, f"rank{r}", name + ".npy")
            if not os.path.exists(f):
                return f"rank {r}: missing output {name}"
            why = compare(np.load(f), want, dt, tol)
            if why:
                return f"rank {r}, output {name} ({dt}): {why}"
    return None


def main():
    args = sys.argv[1:]
    rankc, workdir = args[0], args[1]
    lo, hi = (int(x) for x in args[args.index("--seeds") + 1].split(":"))
    if "--limit" in args:
        hi = min(hi, lo + int(args[args.index("--limit") + 1]))
    cuda, keep = "--cuda" in args, "--keep" in args
    os.makedirs(workdir, exist_ok=True)
    passed = failed = 0
    for seed in range(lo, hi):
        try:
            why = check_seed(rankc, workdir, seed, cuda)
        except subprocess.TimeoutExpired as e:
            why = f"timed out: {e.cmd}"
        if why is None:
            passed += 1
            if not keep:
                shutil.rmtree(os.path.join(workdir, f"s{seed}"), ignore_errors=True)
                os.remove(os.path.join(workdir, f"s{seed}.json"))
        else:
            failed += 1
            print(f"FAIL: seed {seed}: {why}\n  reproduce: {rankc} compile "
                  f"{os.path.join(workdir, f's{seed}.json')} -o /tmp/s{seed}", flush=True)
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
