// RUN: rankc-opt %s -rankc-results-through-memory=max-fields=2 | FileCheck %s
// RUN: not rankc-opt %s -rankc-results-through-memory=max-fields=0 2>&1 | FileCheck %s --check-prefix=ERR

// @three returns a struct of three descriptors (more than max-fields): it
// takes a pointer to that struct first and stores each field, read off
// the insertvalue chain that built the result, at its return.
// CHECK-LABEL: llvm.func @three(
// CHECK-SAME:    %[[OUT:.*]]: !llvm.ptr, %[[A:.*]]: !llvm.struct<(ptr, i64)>, %[[B:.*]]: !llvm.struct<(ptr, i64)>)
// CHECK-NOT:     llvm.insertvalue
// CHECK:         %[[P0:.*]] = llvm.getelementptr %[[OUT]][0, 0]
// CHECK-NEXT:    llvm.store %[[A]], %[[P0]]
// CHECK-NEXT:    %[[P1:.*]] = llvm.getelementptr %[[OUT]][0, 1]
// CHECK-NEXT:    llvm.store %[[B]], %[[P1]]
// CHECK-NEXT:    %[[P2:.*]] = llvm.getelementptr %[[OUT]][0, 2]
// CHECK-NEXT:    llvm.store %[[A]], %[[P2]]
// CHECK-NEXT:    llvm.return{{$}}
!d = !llvm.struct<(ptr, i64)>
!r = !llvm.struct<(!d, !d, !d)>
llvm.func @three(%a: !d, %b: !d) -> !r {
  %u = llvm.mlir.poison : !r
  %0 = llvm.insertvalue %a, %u[0] : !r
  %1 = llvm.insertvalue %b, %0[1] : !r
  %2 = llvm.insertvalue %a, %1[2] : !r
  llvm.return %2 : !r
}

llvm.func @use(i64)
llvm.func @keep(!r)

// The caller passes a struct of its own stack (in its entry block) and
// loads each part right before what reads it, through the extractvalue
// ops: field 1 of result 0 before the first call of @use, field 1 of
// result 2 before the second; a reader of the whole struct (@keep) in
// another block loads it whole right after the call.
// CHECK-LABEL: llvm.func @caller(
// CHECK:         %[[S:.*]] = llvm.alloca %{{.*}} x !llvm.struct<(struct<(ptr, i64)>, struct<(ptr, i64)>, struct<(ptr, i64)>)>
// CHECK:         llvm.call @three(%[[S]], %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.struct<(ptr, i64)>, !llvm.struct<(ptr, i64)>) -> ()
// CHECK-NEXT:    %[[PW:.*]] = llvm.getelementptr %[[S]][0]
// CHECK-NEXT:    %[[W:.*]] = llvm.load %[[PW]]
// CHECK-NEXT:    %[[PX:.*]] = llvm.getelementptr %[[S]][0, 0, 1]
// CHECK-NEXT:    %[[X:.*]] = llvm.load %[[PX]] : !llvm.ptr -> i64
// CHECK-NEXT:    llvm.call @use(%[[X]])
// CHECK-NEXT:    %[[PY:.*]] = llvm.getelementptr %[[S]][0, 2, 1]
// CHECK-NEXT:    %[[Y:.*]] = llvm.load %[[PY]] : !llvm.ptr -> i64
// CHECK-NEXT:    llvm.call @use(%[[Y]])
// CHECK:         llvm.call @keep(%[[W]])
llvm.func @caller(%a: !d) {
  %r = llvm.call @three(%a, %a) : (!d, !d) -> !r
  %d0 = llvm.extractvalue %r[0] : !r
  %d2 = llvm.extractvalue %r[2] : !r
  %x = llvm.extractvalue %d0[1] : !d
  llvm.call @use(%x) : (i64) -> ()
  %y = llvm.extractvalue %d2[1] : !d
  llvm.call @use(%y) : (i64) -> ()
  llvm.br ^next
^next:
  llvm.call @keep(%r) : (!r) -> ()
  llvm.return
}

// Left alone: a struct of at most max-fields fields, and a function whose
// address is taken or that nothing here calls (an entry point).
// CHECK-LABEL: llvm.func @two(
// CHECK-SAME:    -> !llvm.struct<(i64, i64)>
llvm.func @two(%a: i64) -> !llvm.struct<(i64, i64)> {
  %u = llvm.mlir.poison : !llvm.struct<(i64, i64)>
  %0 = llvm.insertvalue %a, %u[0] : !llvm.struct<(i64, i64)>
  %1 = llvm.insertvalue %a, %0[1] : !llvm.struct<(i64, i64)>
  llvm.return %1 : !llvm.struct<(i64, i64)>
}
// CHECK-LABEL: llvm.func @taken(
// CHECK-SAME:    -> !llvm.struct<(i64, i64, i64)>
llvm.func @taken(%a: i64) -> !llvm.struct<(i64, i64, i64)> {
  %u = llvm.mlir.poison : !llvm.struct<(i64, i64, i64)>
  llvm.return %u : !llvm.struct<(i64, i64, i64)>
}
llvm.func @address() -> !llvm.ptr {
  %p = llvm.mlir.addressof @taken : !llvm.ptr
  llvm.return %p : !llvm.ptr
}
// CHECK-LABEL: llvm.func @entry(
// CHECK-SAME:    -> !llvm.struct<(i64, i64, i64)>
llvm.func @entry(%a: i64) -> !llvm.struct<(i64, i64, i64)> {
  %u = llvm.mlir.poison : !llvm.struct<(i64, i64, i64)>
  llvm.return %u : !llvm.struct<(i64, i64, i64)>
}

// ERR: error: rankc-results-through-memory: max-fields must be at least 1
