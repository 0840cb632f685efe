#!/usr/bin/env python3
"""The project's layout rules, checked (ctest runs this as `layout`):

- no file under lib/, dialects/, runtime/ or tools/ is over 600 lines;
- lib/Transforms holds target-independent passes only: no pass of a
  backend (GPU, CPU, LLVM, NVVM) and no include of one;
- no layer includes a header of a layer above it (the table below).

Usage: check-layout.py [SOURCE_DIR]; exit 1 with one line per breach.
"""
import pathlib
import re
import sys

MAX_LINES = 600

# Layers, lowest first: (name, source folders, header folders under
# include/rankc, layers it may include besides itself).
LAYERS = [
    ("support", ["lib/Support"], ["Support"], []),
    ("comm", ["dialects/comm/IR"], ["Dialect/Comm"], ["support"]),
    ("analysis", ["lib/Analysis"], ["Analysis"], ["support", "comm"]),
    ("comm-transforms", ["dialects/comm/Transforms"],
     ["Dialect/Comm/Transforms"], ["support", "comm", "analysis"]),
    ("tensor", ["lib/Transforms"], ["Transforms"], ["support"]),
    ("frontend", ["lib/Frontend"], ["Frontend"],
     ["support", "comm", "analysis"]),
    ("conversion", ["lib/Conversion"], ["Conversion"],
     ["support", "comm", "analysis"]),
    ("codegen-common", ["lib/Codegen/Common"], ["Codegen/Common"],
     ["support", "comm", "analysis", "tensor", "conversion"]),
    ("codegen-cpu", ["lib/Codegen/CPU"], ["Codegen/CPU"],
     ["support", "comm", "analysis", "comm-transforms", "tensor",
      "conversion", "codegen-common"]),
    ("codegen-cuda", ["lib/Codegen/CUDA"], ["Codegen/CUDA"],
     ["support", "comm", "analysis", "comm-transforms", "tensor",
      "conversion", "codegen-common"]),
    ("registration", ["lib/Registration"], ["InitAll.h"], ["comm"]),
    ("pipelines", ["lib/Pipelines"], ["Pipelines"],
     ["support", "comm", "analysis", "comm-transforms", "tensor",
      "conversion", "codegen-common", "codegen-cpu", "codegen-cuda"]),
    ("target", ["lib/Target"], ["Target"],
     ["support", "comm", "analysis", "comm-transforms", "tensor",
      "conversion", "codegen-common", "codegen-cpu", "codegen-cuda",
      "pipelines"]),
    ("driver", ["lib/Driver"], ["Driver"],
     ["support", "comm", "analysis", "comm-transforms", "tensor",
      "frontend", "conversion", "codegen-common", "codegen-cpu",
      "codegen-cuda", "pipelines", "registration", "target"]),
    ("tools", ["tools"], [], None),  # may include every layer
    ("runtime", ["runtime"], [], []),  # a world of its own
]

BACKEND = re.compile(r"Gpu|Cpu|Cuda|LLVM|NVVM|Nvvm", re.I)


def layer_of_path(rel, by_folder):
    best = None
    for folder, name in by_folder:
        if rel == folder or rel.startswith(folder + "/"):
            if best is None or len(folder) > len(best[0]):
                best = (folder, name)
    return best[1] if best else None


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    errors = []
    sources = [(f, n) for n, fs, _, _ in LAYERS for f in fs]
    headers = [("include/rankc/" + h, n) for n, _, hs, _ in LAYERS for h in hs]
    allowed = {n: (None if a is None else set(a) | {n})
               for n, _, _, a in LAYERS}

    for top in ["lib", "dialects", "runtime", "tools"]:
        for path in sorted((root / top).rglob("*")):
            if not path.is_file():
                continue
            lines = path.read_bytes().count(b"\n")
            if lines > MAX_LINES:
                errors.append(f"{path.relative_to(root)}: {lines} lines "
                              f"(at most {MAX_LINES}: split it by job)")

    code = [p for top in ["lib", "dialects", "tools", "runtime", "include"]
            for p in sorted((root / top).rglob("*"))
            if p.suffix in (".cpp", ".h", ".td") and p.is_file()]
    include = re.compile(r'^\s*#include\s+"rankc/([^"]+)"|^include "rankc/([^"]+)"')
    for path in code:
        rel = str(path.relative_to(root))
        layer = layer_of_path(rel, sources + headers)
        if layer is None or allowed[layer] is None:
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            m = include.match(line)
            if not m:
                continue
            target = "include/rankc/" + (m.group(1) or m.group(2))
            # Generated files (Passes.h.inc, ...) belong to their folder.
            target_layer = layer_of_path(re.sub(r"\.inc$", "", target), headers)
            if target_layer is None:
                errors.append(f"{rel}:{number}: includes rankc/{m.group(1) or m.group(2)}, "
                              "which belongs to no layer (add it to scripts/check-layout.py)")
            elif target_layer not in allowed[layer]:
                errors.append(f"{rel}:{number}: the {layer} layer includes "
                              f"rankc/{m.group(1) or m.group(2)} of the {target_layer} layer above it")

    tensor = ["include/rankc/Transforms/Passes.td"]
    for td in tensor:
        for m in re.finditer(r'^def (\w+) : Pass<"([^"]+)"',
                             (root / td).read_text(), re.M):
            if BACKEND.search(m.group(1)) or BACKEND.search(m.group(2)):
                errors.append(f"{td}: pass {m.group(2)} is a backend's: it "
                              "belongs in lib/Codegen")
    for path in sorted((root / "lib/Transforms").rglob("*")):
        if path.is_file() and BACKEND.search(path.name):
            errors.append(f"{path.relative_to(root)}: a backend's file in "
                          "lib/Transforms: it belongs in lib/Codegen")
        if path.suffix in (".cpp", ".h"):
            for m in re.finditer(r'#include "mlir/(Dialect/(GPU|LLVMIR|NVVM)|Conversion/\w*To(LLVM|NVVM|GPU))',
                                 path.read_text()):
                errors.append(f"{path.relative_to(root)}: includes a "
                              f"backend's dialect ({m.group(0)[10:]}): "
                              "target-independent passes must not")

    for e in errors:
        print("error: " + e)
    if not errors:
        print(f"layout: {len(code)} files in {len(LAYERS)} layers, none over "
              f"{MAX_LINES} lines, no include of a higher layer")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
