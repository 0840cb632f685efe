// RUN: rankc-opt %s -rankc-split-glue-functions=max-ops=4 | FileCheck %s
// RUN: not rankc-opt %s -rankc-split-glue-functions=max-ops=0 2>&1 | FileCheck %s --check-prefix=ERR

// A glue function (optnone) of chained blocks: the runs ^b1, ^b2 and ^b4
// move into functions of their own; ^b3 (an alloca) and the return block
// stay. What crosses goes through a frame on the caller's stack: %a (an
// argument, read by two runs), %z and %x (from the first run to the
// second), %v (from the second run to ^b3 and the third run), %r (from
// the third run to the return). The constant is copied, not passed.

llvm.func @use(i64) -> i64

// CHECK-LABEL: llvm.func @schedule(
// CHECK-SAME:    %[[A:.*]]: i64) -> i64
// CHECK:         %[[FRAME:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(i64, i64, i64, i64, i64)>
// CHECK:         %[[SA:.*]] = llvm.getelementptr %[[FRAME]][0, 0]
// CHECK:         llvm.store %[[A]], %[[SA]]
// CHECK:       ^bb1:
// CHECK-NEXT:    llvm.call @schedule_run0(%[[FRAME]]) : (!llvm.ptr) -> ()
// CHECK-NEXT:    llvm.br ^bb2
// CHECK:       ^bb2:
// CHECK-NEXT:    llvm.call @schedule_run1(%[[FRAME]])
// CHECK-NEXT:    llvm.br ^bb3
// CHECK:       ^bb3:
// CHECK-NEXT:    %[[S:.*]] = llvm.alloca
// CHECK-NEXT:    %[[SV:.*]] = llvm.getelementptr %[[FRAME]][0, 3]
// CHECK-NEXT:    %[[V:.*]] = llvm.load %[[SV]] : !llvm.ptr -> i64
// CHECK-NEXT:    llvm.store %[[V]], %[[S]]
// CHECK:       ^bb4:
// CHECK-NEXT:    llvm.call @schedule_run2(%[[FRAME]])
// CHECK-NEXT:    llvm.br ^bb5
// CHECK:       ^bb5:
// CHECK-NEXT:    %[[SR:.*]] = llvm.getelementptr %[[FRAME]][0, 4]
// CHECK-NEXT:    %[[R:.*]] = llvm.load %[[SR]]
// CHECK-NEXT:    llvm.return %[[R]] : i64

// CHECK-LABEL: llvm.func internal @schedule_run0(
// CHECK-SAME:    %[[F0:.*]]: !llvm.ptr) attributes {passthrough = ["noinline", "optnone"]}
// CHECK-NEXT:    %[[C1:.*]] = llvm.mlir.constant(1 : i64)
// CHECK-NEXT:    llvm.br ^bb1
// CHECK-NEXT:  ^bb1:
// CHECK-NEXT:    %[[P0:.*]] = llvm.getelementptr %[[F0]][0, 0]
// CHECK-NEXT:    %[[A0:.*]] = llvm.load %[[P0]]
// CHECK-NEXT:    %[[X:.*]] = llvm.call @use(%[[A0]])
// CHECK-NEXT:    %[[PX:.*]] = llvm.getelementptr %[[F0]][0, 2]
// CHECK-NEXT:    llvm.store %[[X]], %[[PX]]
// CHECK-NEXT:    %[[Y:.*]] = llvm.add %[[X]], %[[C1]]
// CHECK-NEXT:    %[[Z:.*]] = llvm.call @use(%[[Y]])
// CHECK-NEXT:    %[[PZ:.*]] = llvm.getelementptr %[[F0]][0, 1]
// CHECK-NEXT:    llvm.store %[[Z]], %[[PZ]]
// CHECK-NEXT:    llvm.return

// CHECK-LABEL: llvm.func internal @schedule_run1(
// CHECK-SAME:    %[[F1:.*]]: !llvm.ptr)
// CHECK:         %[[Z1:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK-NEXT:    %[[W:.*]] = llvm.call @use(%[[Z1]])
// CHECK-NEXT:    llvm.getelementptr
// CHECK-NEXT:    %[[X1:.*]] = llvm.load %{{.*}} : !llvm.ptr -> i64
// CHECK-NEXT:    %[[V1:.*]] = llvm.mul %[[W]], %[[X1]]
// CHECK-NEXT:    %[[PV:.*]] = llvm.getelementptr %[[F1]][0, 3]
// CHECK-NEXT:    llvm.store %[[V1]], %[[PV]]
// CHECK-NEXT:    llvm.return

// CHECK-LABEL: llvm.func internal @schedule_run2(
// CHECK:         llvm.call @use
// CHECK:         llvm.add
// CHECK:         %[[R2:.*]] = llvm.call @use
// CHECK-NEXT:    %[[PR:.*]] = llvm.getelementptr %{{.*}}[0, 4]
// CHECK-NEXT:    llvm.store %[[R2]], %[[PR]]
// CHECK-NEXT:    llvm.return
llvm.func @schedule(%a: i64) -> i64 attributes {passthrough = ["noinline", "optnone"]} {
  %c1 = llvm.mlir.constant(1 : i64) : i64
  %slot = llvm.alloca %c1 x i64 : (i64) -> !llvm.ptr
  llvm.br ^b1
^b1:
  %x = llvm.call @use(%a) : (i64) -> i64
  %y = llvm.add %x, %c1 : i64
  %z = llvm.call @use(%y) : (i64) -> i64
  llvm.br ^b2
^b2:
  %w = llvm.call @use(%z) : (i64) -> i64
  %v = llvm.mul %w, %x : i64
  llvm.br ^b3
^b3:
  %s = llvm.alloca %c1 x i64 : (i64) -> !llvm.ptr
  llvm.store %v, %s : i64, !llvm.ptr
  llvm.br ^b4
^b4:
  %u = llvm.call @use(%v) : (i64) -> i64
  %t = llvm.add %u, %a : i64
  %r = llvm.call @use(%t) : (i64) -> i64
  llvm.br ^b5
^b5:
  llvm.return %r : i64
}

// Optimized code is left alone, however long: LLVM merges its blocks.
// CHECK-LABEL: llvm.func @kernel(
// CHECK-NOT:     llvm.call @kernel_run
// CHECK:         llvm.return
llvm.func @kernel(%a: i64) -> i64 {
  llvm.br ^b1
^b1:
  %x = llvm.call @use(%a) : (i64) -> i64
  %y = llvm.add %x, %a : i64
  %z = llvm.call @use(%y) : (i64) -> i64
  llvm.br ^b2
^b2:
  %w = llvm.mul %z, %x : i64
  %v = llvm.call @use(%w) : (i64) -> i64
  llvm.return %v : i64
}

// A glue function within max-ops stays whole.
// CHECK-LABEL: llvm.func @short(
// CHECK-NEXT:    llvm.br ^bb1
// CHECK-NEXT:  ^bb1:
// CHECK-NEXT:    llvm.call @use
// CHECK-NEXT:    llvm.return
llvm.func @short(%a: i64) -> i64 attributes {passthrough = ["noinline", "optnone"]} {
  llvm.br ^b1
^b1:
  %x = llvm.call @use(%a) : (i64) -> i64
  llvm.return %x : i64
}

// A value is loaded right before the first operation of a run that reads
// it, not at the run's entry: %b only where ^b2 adds it (a run reading a
// thousand values made one block of a thousand loads of the frame, which
// SelectionDAG's load clustering takes a time quadratic in).
// CHECK-LABEL: llvm.func @late(
// CHECK:         llvm.call @late_run0
// CHECK-LABEL: llvm.func internal @late_run0(
// CHECK-SAME:    %[[F:.*]]: !llvm.ptr)
// CHECK-NEXT:    llvm.br ^bb1
// CHECK-NEXT:  ^bb1:
// CHECK-NEXT:    %[[PA:.*]] = llvm.getelementptr %[[F]][0, 0]
// CHECK-NEXT:    %[[LA:.*]] = llvm.load %[[PA]]
// CHECK-NEXT:    %[[LX:.*]] = llvm.call @use(%[[LA]])
// CHECK-NEXT:    llvm.br ^bb2
// CHECK-NEXT:  ^bb2:
// CHECK-NEXT:    %[[PB:.*]] = llvm.getelementptr %[[F]][0, 1]
// CHECK-NEXT:    %[[LB:.*]] = llvm.load %[[PB]]
// CHECK-NEXT:    llvm.add %[[LX]], %[[LB]]
llvm.func @late(%a: i64, %b: i64) -> i64 attributes {passthrough = ["noinline", "optnone"]} {
  llvm.br ^b1
^b1:
  %x = llvm.call @use(%a) : (i64) -> i64
  llvm.br ^b2
^b2:
  %y = llvm.add %x, %b : i64
  llvm.br ^b3
^b3:
  llvm.return %y : i64
}

// CHECK-NOT: llvm.func internal @kernel_run
// CHECK-NOT: llvm.func internal @short_run

// ERR: error: rankc-split-glue-functions: max-ops must be at least 1
