#!/usr/bin/env python3
"""Random programs of row ops for the row chains (lib/Codegen/CUDA/RowChains.h).

    row_chains_random.py SEED
    row_chains_random.py --check FIRST:END RUNNER_UTILS C_RUNNER_UTILS

The first prints an MLIR module: a function of row reductions (sums and maxes, each
after a fill of its neutral element; sums whose bodies read a table and
store into a record of their own), values per row, elementwise ops over
rows and copies, on views of one block placed at random offsets (so that
buffers overlap often: the chains' hazards), and a main that runs it on
fixed inputs and prints the block and the inputs. Run once through
upstream's linalg-to-loops and once with the chains lowered one lane per
row (rankc-linalg-to-gpu-loops row-chains=1 row-chain-lanes=1), the two
must print the same bits: with neutral fills, a chain's reduction combines
its row in upstream's order. The second does so for seeds FIRST..END-1
(rankc-opt, mlir-opt and mlir-runner from PATH) and prints how many
seeds formed a chain and how many differed.
"""
import random
import subprocess
import sys

LOWER = ("-convert-linalg-to-loops -convert-scf-to-cf -expand-strided-metadata -lower-affine "
         "-finalize-memref-to-llvm -convert-math-to-llvm -convert-arith-to-llvm "
         "-convert-cf-to-llvm -convert-func-to-llvm -convert-index-to-llvm "
         "-reconcile-unrealized-casts").split()

R, L = 32, 64  # rows (warp-sized: a row of at least 64), elements a row
FULL, ROW = R * L * 4, R * 4
BLOCK = 3 * FULL


def over_rows(x, rows, out, kind, name, scale, step, tail, head=""):
    """A linalg.generic over [R, L] reading x and values per row `rows`,
    writing `out` (a value per row, reduced along the row, or a full
    buffer): its body, after `head`, scales x by `scale`, folds the row
    values in with `step`, then `tail` (formatted with the last value)
    ends it."""
    ins = [x] + rows
    maps = ["#full"] + ["#row"] * len(rows) + ["#row" if kind == "row" else "#full"]
    types = [f"memref<{R}x{L}xf32>"] + [f"memref<{R}xf32>"] * len(rows)
    args = ", ".join(f"%a{i}: f32" for i in range(len(ins)))
    body = f"{head}    {name} = arith.mulf %a0, {scale} : f32\n"
    for i in range(1, len(ins)):
        body += f"    {name}{i} = {step} {name}{'' if i == 1 else i - 1}, %a{i} : f32\n"
    last = name if len(ins) == 1 else f"{name}{len(ins) - 1}"
    iterators = '"parallel", "reduction"' if kind == "row" else '"parallel", "parallel"'
    out_type = f"memref<{R}xf32>" if kind == "row" else f"memref<{R}x{L}xf32>"
    return (f"  linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = "
            f"[{iterators}]}} ins({', '.join(ins)} : {', '.join(types)}) "
            f"outs({out} : {out_type}) {{\n  ^bb0({args}, %o: f32):\n{body}"
            f"{tail.format(last)}\n  }}")


def with_body_accesses(x, rows, out, table, record):
    """A sum over the rows of x whose body reads `table` (a value per row
    view) at the column mod R and, with a `record`, stores its term there:
    accesses of its own, which its operands do not show (cross-entropy's
    pick reads a class table and claims the index record so)."""
    head = (f"    %j = linalg.index 1 : index\n    %cR = arith.constant {R} : index\n"
            f"    %k = arith.remui %j, %cR : index\n"
            f"    %tv = memref.load {table}[%k] : memref<{R}xf32>\n")
    store = f"    memref.store {{0}}, {record}[%k] : memref<{R}xf32>\n" if record else ""
    return over_rows(x, rows, out, "row", "%g", "%tv", "arith.subf",
                     store + "    %r = arith.addf %o, {0} : f32\n    linalg.yield %r : f32",
                     head)


def check(seeds, libs):
    """Each seed's program run as written and with its chains: 0 on the
    same output for every seed."""
    first, end = map(int, seeds.split(":"))
    runner = ["mlir-runner", "-e", "main", "-entry-point-result=void",
              "-shared-libs=" + ",".join(libs)]
    chained = differ = 0
    for seed in range(first, end):
        program = subprocess.run([sys.executable, __file__, str(seed)], check=True,
                                 capture_output=True, text=True).stdout
        outs = []
        for passes in ([], ["-rankc-linalg-to-gpu-loops=row-chains=1 row-chain-lanes=1 threads=16"]):
            text = program
            if passes:
                text = subprocess.run(["rankc-opt"] + passes, input=text, check=True,
                                      capture_output=True, text=True).stdout
                chained += "scf.parallel" in text and "to (%c32, %c1)" in text
            low = subprocess.run(["mlir-opt"] + LOWER, input=text, check=True,
                                 capture_output=True, text=True).stdout
            run = subprocess.run(runner, input=low, check=True, capture_output=True,
                                 text=True).stdout
            outs.append([x for x in run.splitlines() if "base@" not in x])
        if outs[0] != outs[1]:
            differ += 1
            print(f"seed {seed}: the chained program prints other values")
    print(f"{end - first} seeds, {chained} with a chain, {differ} differ")
    return 1 if differ else 0


def main():
    if sys.argv[1] == "--check":
        sys.exit(check(sys.argv[2], sys.argv[3:]))
    rng = random.Random(int(sys.argv[1]))
    lines = []
    views = {}  # name -> ("full" | "row")
    place = {}  # name -> (first byte, end)
    count = [0]

    def view(kind):
        size = FULL if kind == "full" else ROW
        off = rng.randrange(0, (BLOCK - size) // 256 + 1) * 256
        count[0] += 1
        name = f"%v{count[0]}"
        shape = f"{R}x{L}xf32" if kind == "full" else f"{R}xf32"
        lines.append(f"  {name} = memref.view %blk[%c{off}][] : memref<{BLOCK}xi8> to memref<{shape}>")
        consts.add(off)
        views[name] = kind
        place[name] = (off, off + size)
        return name

    def apart(out, ins):
        """An op's output shares no bytes with its inputs (bufferization's
        ops never do, but for an output that is an input: not made here)."""
        a, b = place.get(out, (-1, -1))
        return all(not (v in place and place[v][0] < b and a < place[v][1]) for v in ins)

    def pick(kind):
        have = [v for v, k in views.items() if k == kind]
        if kind == "full":
            have += ["%x0", "%x1"]
        return rng.choice(have) if have and rng.random() < 0.8 else view(kind)

    consts = set()
    for _ in range(rng.randrange(4, 9)):
        what = rng.choice(["sum", "max", "sum", "row", "elem", "elem", "copy", "body"])
        if what == "body":
            x = pick("full")
            extra = [pick("row") for _ in range(rng.randrange(0, 2))]
            table = pick("row")
            record = pick("row") if rng.random() < 0.6 else None
            out = pick("row") if rng.random() < 0.5 else view("row")
            # Its own accesses apart from one another (as a bufferized
            # op's are); not from the other ops': their hazards.
            if not apart(out, [x, table] + extra + ([record] if record else [])) or \
                    (record and not apart(record, [x, table] + extra)):
                continue
            n = len(lines)
            lines.append(f"  %n{n} = arith.constant 0.0 : f32")
            lines.append(f"  linalg.fill ins(%n{n} : f32) outs({out} : memref<{R}xf32>)")
            lines.append(with_body_accesses(x, extra, out, table, record))
        elif what in ("sum", "max"):
            x = pick("full")
            extra = [pick("row") for _ in range(rng.randrange(0, 2))]
            out = pick("row") if rng.random() < 0.5 else view("row")
            if not apart(out, [x] + extra):
                continue
            neutral = "0.0" if what == "sum" else "0xFF800000"
            n = len(lines)
            lines.append(f"  %n{n} = arith.constant {neutral} : f32")
            lines.append(f"  linalg.fill ins(%n{n} : f32) outs({out} : memref<{R}xf32>)")
            combine = "arith.addf" if what == "sum" else "arith.maximumf"
            lines.append(over_rows(x, extra, out, "row", "%t", "%c001", "arith.subf",
                                   f"    %r = {combine} %o, {{}} : f32\n"
                                   "    linalg.yield %r : f32"))
        elif what == "row":
            x, out = pick("row"), pick("row") if rng.random() < 0.5 else view("row")
            if not apart(out, [x]):
                continue
            lines.append(
                f"  linalg.generic {{indexing_maps = [#one, #one], iterator_types = [\"parallel\"]}} "
                f"ins({x} : memref<{R}xf32>) outs({out} : memref<{R}xf32>) {{\n"
                f"  ^bb0(%a: f32, %o: f32):\n    %h = arith.mulf %a, %half : f32\n"
                f"    %s = arith.addf %h, %one : f32\n    linalg.yield %s : f32\n  }}")
        elif what == "elem":
            x = pick("full")
            rows = [pick("row") for _ in range(rng.randrange(1, 3))]
            out = pick("full") if rng.random() < 0.4 else view("full")
            if not apart(out, [x] + rows):
                continue
            lines.append(over_rows(x, rows, out, "full", "%e", "%half", "arith.addf",
                                   "    linalg.yield {} : f32"))
        else:
            kind = rng.choice(["full", "row"])
            src, dst = pick(kind), view(kind) if rng.random() < 0.5 else pick(kind)
            if dst in ("%x0", "%x1") or not apart(dst, [src]):
                continue
            t = f"memref<{R}x{L}xf32>" if kind == "full" else f"memref<{R}xf32>"
            lines.append(f"  linalg.copy ins({src} : {t}) outs({dst} : {t})")

    print("#full = affine_map<(d0, d1) -> (d0, d1)>")
    print("#row = affine_map<(d0, d1) -> (d0)>")
    print("#one = affine_map<(d0) -> (d0)>")
    print(f"func.func @chain(%x0: memref<{R}x{L}xf32>, %x1: memref<{R}x{L}xf32>, "
          f"%blk: memref<{BLOCK}xi8> {{rankc.scratch_bytes = {BLOCK} : i64}}) {{")
    for off in sorted(consts):
        print(f"  %c{off} = arith.constant {off} : index")
    print("  %c001 = arith.constant 0.01 : f32")
    print("  %half = arith.constant 0.5 : f32")
    print("  %one = arith.constant 1.0 : f32")
    print("\n".join(lines))
    print("  return\n}")
    print(f"""
func.func private @printMemrefF32(memref<*xf32>)

func.func @init(%x: memref<{R}x{L}xf32>, %k: f32) {{
  linalg.generic {{indexing_maps = [#full], iterator_types = ["parallel", "parallel"]}}
      outs(%x : memref<{R}x{L}xf32>) {{
  ^bb0(%o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %c5 = arith.constant 5 : index
    %a = arith.muli %i, %c5 : index
    %n = arith.addi %a, %j : index
    %ni = arith.index_cast %n : index to i64
    %f = arith.sitofp %ni : i64 to f32
    %g = arith.mulf %f, %k : f32
    %s = math.sin %g : f32
    linalg.yield %s : f32
  }}
  return
}}

func.func @main() {{
  %x0 = memref.alloc() : memref<{R}x{L}xf32>
  %x1 = memref.alloc() : memref<{R}x{L}xf32>
  %k0 = arith.constant 0.7 : f32
  %k1 = arith.constant 1.3 : f32
  call @init(%x0, %k0) : (memref<{R}x{L}xf32>, f32) -> ()
  call @init(%x1, %k1) : (memref<{R}x{L}xf32>, f32) -> ()
  %blk = memref.alloc() : memref<{BLOCK}xi8>
  %c0 = arith.constant 0 : index
  %all = memref.view %blk[%c0][] : memref<{BLOCK}xi8> to memref<{BLOCK // 4}xf32>
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%all : memref<{BLOCK // 4}xf32>)
  call @chain(%x0, %x1, %blk) : (memref<{R}x{L}xf32>, memref<{R}x{L}xf32>, memref<{BLOCK}xi8>) -> ()
  %u = memref.cast %all : memref<{BLOCK // 4}xf32> to memref<*xf32>
  call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  %u0 = memref.cast %x0 : memref<{R}x{L}xf32> to memref<*xf32>
  call @printMemrefF32(%u0) : (memref<*xf32>) -> ()
  %u1 = memref.cast %x1 : memref<{R}x{L}xf32> to memref<*xf32>
  call @printMemrefF32(%u1) : (memref<*xf32>) -> ()
  return
}}""")


if __name__ == "__main__":
    main()
