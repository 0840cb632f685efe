// RUN: rankc-opt %s -split-input-file -pass-pipeline='builtin.module(llvm.func(rankc-split-glue-blocks{max-ops=3}))' | FileCheck %s
// RUN: rankc-opt %s -split-input-file -pass-pipeline='builtin.module(llvm.func(rankc-split-glue-blocks{max-ops=3}))' | mlir-translate --mlir-to-llvmir -split-input-file | FileCheck %s --check-prefix=IR
// RUN: not rankc-opt %s -split-input-file -pass-pipeline='builtin.module(llvm.func(rankc-split-glue-blocks{max-ops=0}))' 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: error: rankc-split-glue-blocks: max-ops must be at least 1

// A glue function (optnone) of one block of 8 operations: cut every 3,
// each piece ending in a branch to the next; the order of the calls, and
// what they compute, is unchanged. The entry block's allocas stay in it
// (static stack slots), even one after other operations.
// CHECK-LABEL: llvm.func @schedule(
// CHECK-NEXT: llvm.mlir.constant
// CHECK-NEXT: %[[A:.*]] = llvm.alloca
// CHECK-NEXT: %[[B:.*]] = llvm.alloca
// CHECK-NEXT: llvm.call @step(%arg0)
// CHECK-NEXT: %[[C:.*]] = llvm.alloca
// CHECK-NEXT: %[[X:.*]] = llvm.call @step(%arg0)
// CHECK-NEXT: %[[Y:.*]] = llvm.call @step(%[[X]])
// CHECK-NEXT: llvm.call @step(%[[Y]])
// CHECK-NEXT: llvm.br ^[[BB1:.*]]
// CHECK-NEXT: ^[[BB1]]:
// CHECK-NEXT: llvm.call @step(%[[Y]])
// CHECK-NEXT: llvm.call @step(%[[X]])
// CHECK-NEXT: llvm.call @step(%[[Y]])
// CHECK-NEXT: llvm.br ^[[BB2:.*]]
// CHECK-NEXT: ^[[BB2]]:
// CHECK-NEXT: llvm.store %[[X]], %[[C]]
// CHECK-NEXT: llvm.return %[[Y]]
// IR-LABEL: define i64 @schedule(
// IR-COUNT-3: alloca
// IR-NOT: alloca
// IR: br label
// IR: br label
// IR: ret i64
llvm.func @step(i64) -> i64
llvm.func @schedule(%arg0: i64) -> i64 attributes {passthrough = ["noinline", "optnone"]} {
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %a = llvm.alloca %c1 x i64 : (i64) -> !llvm.ptr
  %b = llvm.alloca %c1 x i64 : (i64) -> !llvm.ptr
  %0 = llvm.call @step(%arg0) : (i64) -> i64
  %c = llvm.alloca %c1 x i64 : (i64) -> !llvm.ptr
  %1 = llvm.call @step(%arg0) : (i64) -> i64
  %2 = llvm.call @step(%1) : (i64) -> i64
  %3 = llvm.call @step(%2) : (i64) -> i64
  %4 = llvm.call @step(%2) : (i64) -> i64
  %5 = llvm.call @step(%1) : (i64) -> i64
  %6 = llvm.call @step(%2) : (i64) -> i64
  llvm.store %1, %c : i64, !llvm.ptr
  llvm.return %2 : i64
}

// -----

// Blocks of a loop (the glue of a part): the header, with its block
// argument, is cut after its first 3 operations; the short exit block is
// left as it is.
// CHECK-LABEL: llvm.func @loop(
// CHECK: ^[[HEAD:bb[0-9]+]](%[[I:.*]]: i64):
// CHECK-NEXT: llvm.add %[[I]]
// CHECK-NEXT: llvm.add
// CHECK-NEXT: llvm.add
// CHECK-NEXT: llvm.br ^[[REST:bb[0-9]+]]
// CHECK-NEXT: ^[[REST]]:
// CHECK-NEXT: %[[NEXT:.*]] = llvm.add
// CHECK-NEXT: %[[DONE:.*]] = llvm.icmp
// CHECK-NEXT: llvm.cond_br %[[DONE]], ^[[EXIT:bb[0-9]+]], ^[[HEAD]](%[[NEXT]] : i64)
// CHECK-NEXT: ^[[EXIT]]:
// CHECK-NEXT: llvm.return
llvm.func @loop(%n: i64) attributes {passthrough = ["noinline", "optnone"]} {
  %c0 = llvm.mlir.constant(0 : i64) : i64
  llvm.br ^head(%c0 : i64)
^head(%i: i64):
  %a = llvm.add %i, %i : i64
  %b = llvm.add %a, %i : i64
  %c = llvm.add %b, %a : i64
  %next = llvm.add %i, %c : i64
  %done = llvm.icmp "sge" %next, %n : i64
  llvm.cond_br %done, ^exit, ^head(%next : i64)
^exit:
  llvm.return
}

// -----

// A function LLVM optimizes is left as it is: -O3 would merge the blocks.
// CHECK-LABEL: llvm.func @kernel(
// CHECK-NOT: llvm.br
// CHECK: llvm.return
llvm.func @kernel(%x: i64) -> i64 {
  %a = llvm.add %x, %x : i64
  %b = llvm.add %a, %x : i64
  %c = llvm.add %b, %a : i64
  %d = llvm.add %c, %b : i64
  %e = llvm.add %d, %c : i64
  llvm.return %e : i64
}
