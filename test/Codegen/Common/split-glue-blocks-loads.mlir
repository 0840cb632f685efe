// RUN: rankc-opt %s -pass-pipeline='builtin.module(llvm.func(rankc-split-glue-blocks{max-ops=100 max-loads=2}))' | FileCheck %s
// RUN: not rankc-opt %s -pass-pipeline='builtin.module(llvm.func(rankc-split-glue-blocks{max-loads=0}))' 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: rankc-split-glue-blocks: max-loads must be at least 1

// Loads between two calls or stores hang off one chain in SelectionDAG,
// which clusters those of one base address in quadratic time: a glue
// block is cut before the third load since the last call or store. The
// call resets the count (two loads before it, two after: no cut there);
// the five loads before the store are cut into 2 + 2 + 1.
// CHECK-LABEL: llvm.func @frame(
// CHECK-NEXT:    %[[A:.*]] = llvm.load %arg0
// CHECK-NEXT:    %[[B:.*]] = llvm.load %arg0
// CHECK-NEXT:    llvm.call @use(%[[A]], %[[B]])
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    llvm.br ^[[B1:bb[0-9]+]]
// CHECK-NEXT:  ^[[B1]]:
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    llvm.br ^[[B2:bb[0-9]+]]
// CHECK-NEXT:  ^[[B2]]:
// CHECK-NEXT:    llvm.load
// CHECK-NEXT:    llvm.store
// CHECK-NEXT:    llvm.return
llvm.func @use(i64, i64)
llvm.func @frame(%p: !llvm.ptr) attributes {passthrough = ["noinline", "optnone"]} {
  %a = llvm.load %p : !llvm.ptr -> i64
  %b = llvm.load %p : !llvm.ptr -> i64
  llvm.call @use(%a, %b) : (i64, i64) -> ()
  %c = llvm.load %p : !llvm.ptr -> i64
  %d = llvm.load %p : !llvm.ptr -> i64
  %e = llvm.load %p : !llvm.ptr -> i64
  %f = llvm.load %p : !llvm.ptr -> i64
  %g = llvm.load %p : !llvm.ptr -> i64
  llvm.store %g, %p : i64, !llvm.ptr
  llvm.return
}

// Optimized code is left alone.
// CHECK-LABEL: llvm.func @kernel(
// CHECK-NOT:     llvm.br
// CHECK:         llvm.return
llvm.func @kernel(%p: !llvm.ptr) -> i64 {
  %a = llvm.load %p : !llvm.ptr -> i64
  %b = llvm.load %p : !llvm.ptr -> i64
  %c = llvm.load %p : !llvm.ptr -> i64
  %s = llvm.add %a, %b : i64
  %t = llvm.add %s, %c : i64
  llvm.return %t : i64
}
