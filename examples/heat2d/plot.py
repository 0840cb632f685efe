#!/usr/bin/env python3
"""Pictures of the heat example's field from launch --save-every snapshots.

    plot.py RES GRID OUT_DIR        e.g. plot.py res 2,2 pictures

For every RES/step<k>/ (and the final RES/rank<r>/), joins the ranks' blocks
u.npy into the whole field (rank r is block np.unravel_index(r, GRID) of the
process grid) and writes OUT_DIR/step<k>.png: a grey-scale image, white the
hottest value of the whole run. 3-D fields are cut through their middle.
Needs only NumPy (the PNG is written with zlib)."""
import glob
import os
import re
import struct
import sys
import zlib

import numpy as np


def field(folder, grid):
    blocks = {}
    for r in range(int(np.prod(grid))):
        blocks[np.unravel_index(r, grid)] = np.load(os.path.join(folder, f"rank{r}", "u.npy"))
    whole = np.block(_nest(blocks, grid, ()))
    while whole.ndim > 2:  # a cut through the middle
        whole = whole[whole.shape[0] // 2]
    return whole


def _nest(blocks, grid, at):
    if len(at) == len(grid):
        return blocks[at]
    return [_nest(blocks, grid, at + (i,)) for i in range(grid[len(at)])]


def write_png(path, image):
    """8-bit grey PNG of a 2-D array in [0, 1], scaled up to at least 256 px."""
    scale = max(1, 256 // max(image.shape))
    pixels = np.kron(np.clip(image, 0, 1), np.ones((scale, scale)))
    rows = (pixels * 255).astype(np.uint8)
    raw = b"".join(b"\x00" + row.tobytes() for row in rows)
    chunk = lambda kind, data: (struct.pack(">I", len(data)) + kind + data +
                                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    h, w = rows.shape
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def main(res, grid, out):
    grid = [int(x) for x in grid.split(",")]
    os.makedirs(out, exist_ok=True)
    steps = sorted(glob.glob(os.path.join(res, "step*")),
                   key=lambda p: int(re.sub(r"\D", "", os.path.basename(p))))
    fields = [(os.path.basename(s), field(s, grid)) for s in steps]
    if not fields:
        sys.exit(f"no snapshots in {res}: run launch with --save-every K --outputs {res}")
    hottest = max(f.max() for _, f in fields) or 1.0
    for name, f in fields:
        # (a square root: the faint edges of the plume stay visible)
        write_png(os.path.join(out, name + ".png"), np.sqrt(np.clip(f / hottest, 0, 1)))
    print(f"wrote {len(fields)} pictures to {out} (hottest value {hottest:.4g})")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
