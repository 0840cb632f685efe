#!/usr/bin/env python3
"""DAGs for bench/overlap.sh, where communication and computation are of
comparable cost.

  gen_overlap.py stencil RANKS ROWS COLS STEPS WORK OUT.json
      2-D heat equation, rows split over RANKS (SPMD, periodic): each step
      sends its first and last rows to its neighbours and updates its
      interior, which needs no halo, WORK extra tanh passes deep.
  gen_overlap.py heat RANKS ROWS COLS WORK DTYPE OUT.json
      One step of the same stencil as a time-stepping program (version 2):
      the new field is carried into the next step as `state`, and the total
      heat is an allreduce output. Run it with launch --steps N.
  gen_overlap.py pipeline RANKS MICROBATCHES BATCH WIDTH OUT.json
      A ring pipeline: rank 0 feeds MICROBATCHES [BATCH, WIDTH] blocks
      through one tanh(x @ W) stage per rank and back to rank 0."""
import json
import sys


def stencil(ranks, rows, cols, steps, work, dtype="f32"):
    n = [{"id": "u0", "op": "input", "shape": [rows, cols], "dtype": dtype},
         {"id": "k", "op": "constant", "value": 0.1, "dtype": dtype},
         {"id": "two", "op": "constant", "value": 2.0, "dtype": dtype}]
    u = "u0"

    def sl(id_, src, b, e):
        n.append({"id": id_, "op": "slice", "args": [src], "begin": [b, 0],
                  "end": [e, cols], "step": [1, 1]})

    def update(p, mid, up, down):
        n.extend([{"id": p + "s", "op": "add", "args": [up, down]},
                  {"id": p + "m2", "op": "mul", "args": ["two", mid]},
                  {"id": p + "lap", "op": "sub", "args": [p + "s", p + "m2"]},
                  {"id": p + "d", "op": "mul", "args": ["k", p + "lap"]},
                  {"id": p + "new", "op": "add", "args": [mid, p + "d"]}])
        return p + "new"

    for s in range(steps):
        p = f"s{s}_"
        sl(p + "top", u, 0, 1)
        sl(p + "bot", u, rows - 1, rows)
        n += [{"id": p + "send_up", "op": "send", "args": [p + "top"], "dest": {"offset": -1}, "tag": f"up{s}"},
              {"id": p + "send_down", "op": "send", "args": [p + "bot"], "dest": {"offset": 1}, "tag": f"down{s}"},
              {"id": p + "halo_up", "op": "recv", "src": {"offset": -1}, "tag": f"down{s}", "shape": [1, cols], "dtype": dtype},
              {"id": p + "halo_down", "op": "recv", "src": {"offset": 1}, "tag": f"up{s}", "shape": [1, cols], "dtype": dtype}]
        sl(p + "imid", u, 1, rows - 1)
        sl(p + "iup", u, 0, rows - 2)
        sl(p + "idown", u, 2, rows)
        interior = update(p + "i_", p + "imid", p + "iup", p + "idown")
        for w in range(work):
            n.append({"id": f"{p}w{w}", "op": "tanh", "args": [interior]})
            interior = f"{p}w{w}"
        sl(p + "second", u, 1, 2)
        sl(p + "penult", u, rows - 2, rows - 1)
        top = update(p + "t_", p + "top", p + "halo_up", p + "second")
        bot = update(p + "b_", p + "bot", p + "penult", p + "halo_down")
        n.append({"id": p + "u", "op": "concat", "args": [top, interior, bot], "axis": 0})
        u = p + "u"
    return {"format": "rankc-dag", "version": 1, "world_size": ranks,
            "programs": [{"ranks": "all", "nodes": n, "outputs": {"u": u}}]}


def heat(ranks, rows, cols, work, dtype):
    doc = stencil(ranks, rows, cols, 1, work, dtype)
    prog = doc["programs"][0]
    prog["nodes"] += [{"id": "local", "op": "sum", "args": [prog["outputs"]["u"]]},
                      {"id": "total", "op": "allreduce", "args": ["local"], "reduce": "sum", "tag": "total"}]
    prog["outputs"]["total"] = "total"
    prog["state"] = {"u0": "u"}
    doc["version"] = 2
    return doc


def pipeline(ranks, micro, batch, width):
    progs = []
    for r in range(ranks):
        n = [{"id": "w", "op": "param", "shape": [width, width], "dtype": "f32"}]
        outs = {}
        for m in range(micro):
            if r == 0:
                n.append({"id": f"x{m}", "op": "input", "shape": [batch, width], "dtype": "f32"})
                src = f"x{m}"
            else:
                n.append({"id": f"in{m}", "op": "recv", "src": r - 1, "tag": f"mb{m}.{r}",
                          "shape": [batch, width], "dtype": "f32"})
                src = f"in{m}"
            n += [{"id": f"h{m}", "op": "matmul", "args": [src, "w"]},
                  {"id": f"a{m}", "op": "tanh", "args": [f"h{m}"]},
                  {"id": f"s{m}", "op": "send", "args": [f"a{m}"], "dest": (r + 1) % ranks,
                   "tag": f"mb{m}.{(r + 1) % ranks}"}]
            if r == 0:
                n.append({"id": f"back{m}", "op": "recv", "src": ranks - 1, "tag": f"mb{m}.0",
                          "shape": [batch, width], "dtype": "f32"})
                n.append({"id": f"y{m}", "op": "sum", "args": [f"back{m}"]})
                outs[f"y{m}"] = f"y{m}"
        progs.append({"ranks": [r], "nodes": n, "outputs": outs})
    return {"format": "rankc-dag", "version": 1, "world_size": ranks, "programs": progs}


if __name__ == "__main__":
    kind, args = sys.argv[1], sys.argv[2:]
    if kind == "stencil":
        doc = stencil(*map(int, args[:5]))
    elif kind == "heat":
        doc = heat(*map(int, args[:4]), args[4])
    else:
        doc = pipeline(*map(int, args[:4]))
    json.dump(doc, open(args[-1], "w"), indent=1)
