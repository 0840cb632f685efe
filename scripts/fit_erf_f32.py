#!/usr/bin/env python3
"""The f32 erf polynomials of rankc-cpu-math-approximations
(lib/Transforms/CpuMathApproximations.cpp), fitted and checked here.

    /usr/bin/python3 scripts/fit_erf_f32.py

erf(x) for t = |x|:
  t < 0.9:          x + x * Q(x^2)            (Q of degree 7)
  0.9 <= t < 3.93:  sign(x) * (1 - P_i(t - c_i)) on [0.9, 1.75), [1.75, 2.8),
                    [2.8, 3.93) (P_i of degree 9 approximating erfc)
  t >= 3.93:        sign(x) (erf rounds to 1 in f32 there)
Each polynomial is a weighted least-squares fit refined towards minimax
(Lawson's reweighting), its error measured in ulps of the f32 result, with
the coefficients rounded to f32 and evaluated as the compiled code does
(Horner's rule with fused multiply-adds, each rounded to f32). Prints the
coefficients (highest degree first) and the worst error of each piece over
a dense grid; the compiled result is checked against libm's bound in
test/E2E/math-accuracy.test."""
import math

import numpy as np

F32 = np.float32
erf = np.vectorize(math.erf)
erfc = np.vectorize(math.erfc)


def fma(a, b, c):
    # a*b of two f32 is exact in f64; one rounding to f32 after the add
    # (the double rounding is below what is measured here).
    return (np.float64(a) * np.float64(b) + np.float64(c)).astype(F32)


def horner(coefs, t):
    r = np.full_like(t, coefs[0], dtype=F32)
    for c in coefs[1:]:
        r = fma(r, t, F32(c))
    return r


def ulp(r):
    return np.maximum(np.spacing(np.abs(r).astype(F32)).astype(np.float64), 1e-45)


def fit(u, y, weight, degree):
    v = np.vander(u, degree + 1)
    w = weight.copy()
    for _ in range(40):
        c, *_ = np.linalg.lstsq(v * w[:, None], y * w, rcond=None)
        e = np.abs(v @ c - y) * weight
        w = w * (1 + (e / e.max()) ** 2)
        w /= w.max()
    return [F32(x) for x in c]


def main():
    worst = 0.0
    # Near zero: erf(x) / x - 1 as a polynomial in s = x^2.
    x = np.linspace(1e-4, 0.9, 200001)
    q = fit(x * x, erf(x) / x - 1, x / ulp(erf(x)), 7)
    xt = np.linspace(0, 0.9, 2000001).astype(F32)
    r = fma(xt, horner(q, (xt * xt).astype(F32)), xt)
    e = (np.abs(r - erf(xt.astype(np.float64))) / ulp(erf(xt.astype(np.float64)))).max()
    worst = max(worst, e)
    print(f"[0, 0.9): Q = {[float(c) for c in q]}  worst {e:.3f} ulps")
    # The tail: 1 - erfc(t), erfc as a polynomial in t - c.
    for lo, hi in ((0.9, 1.75), (1.75, 2.8), (2.8, 3.93)):
        mid = F32((lo + hi) / 2)
        x = np.linspace(lo, hi, 100001)
        p = fit(x - float(mid), erfc(x), 1 / ulp(erf(x)), 9)
        xt = np.linspace(lo, hi, 1000001).astype(F32)
        r = (F32(1) - horner(p, (xt - mid).astype(F32))).astype(F32)
        ref = erf(xt.astype(np.float64))
        e = (np.abs(r - ref) / ulp(ref)).max()
        worst = max(worst, e)
        print(f"[{lo}, {hi}): c = {float(mid)}, P = {[float(c) for c in p]}  worst {e:.3f} ulps")
    print(f"worst {worst:.3f} ulps")


if __name__ == "__main__":
    main()
