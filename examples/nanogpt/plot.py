#!/usr/bin/env python3
"""The loss curve of a run, from launch --metrics, as an SVG picture.

    plot.py WORK/metrics.jsonl OUT.svg [--every K]

One point per optimizer step (every K-th micro-step's line, K given or read
from the lines' count of equal gradient norms): the loss averaged over the
ranks (`global_loss`, else `loss`). Needs nothing but Python."""
import json
import sys


def main():
    src, out = sys.argv[1], sys.argv[2]
    every = int(sys.argv[sys.argv.index("--every") + 1]) if "--every" in sys.argv else 1
    lines = [json.loads(line) for line in open(src)]
    pts = [(r["step"], r.get("global_loss", r.get("loss"))) for r in lines
           if r["step"] % every == 0]
    W, H, M = 640, 360, 48
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
    sx = lambda x: M + (W - 2 * M) * (x - x0) / max(x1 - x0, 1)  # noqa: E731
    sy = lambda y: H - M - (H - 2 * M) * (y - y0) / max(y1 - y0, 1e-12)  # noqa: E731
    path = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pts)
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<line x1="{M}" y1="{H - M}" x2="{W - M}" y2="{H - M}" stroke="black"/>',
           f'<line x1="{M}" y1="{M}" x2="{M}" y2="{H - M}" stroke="black"/>',
           f'<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{path}"/>',
           f'<text x="{W / 2}" y="{H - 12}" text-anchor="middle">micro-step</text>',
           f'<text x="{M}" y="{M - 12}">loss (mean over ranks)</text>',
           f'<text x="{M - 6}" y="{sy(y1) + 4:.1f}" text-anchor="end">{y1:.2f}</text>',
           f'<text x="{M - 6}" y="{sy(y0) + 4:.1f}" text-anchor="end">{y0:.2f}</text>',
           f'<text x="{sx(x0):.1f}" y="{H - M + 16}" text-anchor="middle">{x0}</text>',
           f'<text x="{sx(x1):.1f}" y="{H - M + 16}" text-anchor="middle">{x1}</text>',
           "</svg>"]
    open(out, "w").write("\n".join(svg) + "\n")


if __name__ == "__main__":
    main()
