// RUN: rankc-opt %s -rankc-arguments-through-memory=max-arguments=2 | FileCheck %s
// RUN: rankc-opt %s -rankc-arguments-through-memory=max-arguments=2 \
// RUN:   -finalize-memref-to-llvm -convert-func-to-llvm -reconcile-unrealized-casts \
// RUN:   | FileCheck %s --check-prefix=LLVM
// RUN: not rankc-opt %s -rankc-arguments-through-memory=max-arguments=-1 2>&1 | FileCheck %s --check-prefix=ERR

// @part takes three plain buffers (more than max-arguments) and a scratch
// buffer with an attribute: the two come in one struct, loaded at its
// entry and cast back to memrefs; the scratch buffer stays an argument.
// CHECK-LABEL: func.func private @part(
// CHECK-SAME:    %[[F:.*]]: !llvm.ptr, %[[S:.*]]: memref<8xi8> {rankc.scratch_bytes = 8 : i64})
// CHECK:         %[[P0:.*]] = llvm.getelementptr inbounds %[[F]][0] : (!llvm.ptr) -> !llvm.ptr, i8
// CHECK-NEXT:    %[[D0:.*]] = llvm.load %[[P0]] : !llvm.ptr -> !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-NEXT:    %[[A:.*]] = builtin.unrealized_conversion_cast %[[D0]] : {{.*}} to memref<4xf32>
// CHECK-NEXT:    %[[P1:.*]] = llvm.getelementptr inbounds %[[F]][40]
// CHECK-NEXT:    %[[D1:.*]] = llvm.load %[[P1]]
// CHECK-NEXT:    %[[B:.*]] = builtin.unrealized_conversion_cast %[[D1]] : {{.*}} to memref<2x3xf32>
// CHECK-NEXT:    %[[P2:.*]] = llvm.getelementptr inbounds %[[F]][96]
// CHECK-NEXT:    %[[D2:.*]] = llvm.load %[[P2]]
// CHECK-NEXT:    %[[C:.*]] = builtin.unrealized_conversion_cast %[[D2]] : {{.*}} to memref<4xf32>
// CHECK:         memref.load %[[A]]
// CHECK:         memref.store %{{.*}}, %[[B]]
// CHECK:         memref.store %{{.*}}, %[[C]]
// CHECK:         memref.store %{{.*}}, %[[S]]
func.func private @part(%a: memref<4xf32>, %b: memref<2x3xf32>, %c: memref<4xf32>,
                        %s: memref<8xi8> {rankc.scratch_bytes = 8 : i64}) {
  %c0 = arith.constant 0 : index
  %v = memref.load %a[%c0] : memref<4xf32>
  memref.store %v, %b[%c0, %c0] : memref<2x3xf32>
  memref.store %v, %c[%c0] : memref<4xf32>
  %z = arith.constant 0 : i8
  memref.store %z, %s[%c0] : memref<8xi8>
  return
}

// The caller fills a block of its entry block's stack (17 words) right
// before each call (here twice, into the same block: the callee reads it
// whole at its entry).
// CHECK-LABEL: func.func private @sched(
// CHECK-SAME:    %[[X:.*]]: memref<4xf32>, %[[Y:.*]]: memref<2x3xf32>)
// CHECK:         %[[ONE:.*]] = llvm.mlir.constant(1 : i64)
// CHECK:         %[[FRAME:.*]] = llvm.alloca %[[ONE]] x !llvm.array<17 x i64>
// CHECK:         %[[SCRATCH:.*]] = memref.alloc
// CHECK:         %[[DX:.*]] = builtin.unrealized_conversion_cast %[[X]] : memref<4xf32> to
// CHECK-NEXT:    %[[Q0:.*]] = llvm.getelementptr inbounds %[[FRAME]][0]
// CHECK-NEXT:    llvm.store %[[DX]], %[[Q0]]
// CHECK-NEXT:    %[[DY:.*]] = builtin.unrealized_conversion_cast %[[Y]] : memref<2x3xf32> to
// CHECK-NEXT:    %[[Q1:.*]] = llvm.getelementptr inbounds %[[FRAME]][40]
// CHECK-NEXT:    llvm.store %[[DY]], %[[Q1]]
// CHECK-NEXT:    %[[DX2:.*]] = builtin.unrealized_conversion_cast %[[X]] : memref<4xf32> to
// CHECK-NEXT:    %[[Q2:.*]] = llvm.getelementptr inbounds %[[FRAME]][96]
// CHECK-NEXT:    llvm.store %[[DX2]], %[[Q2]]
// CHECK-NEXT:    call @part(%[[FRAME]], %[[SCRATCH]]) : (!llvm.ptr, memref<8xi8>) -> ()
// CHECK:         llvm.store %{{.*}}, %{{.*}} :
// CHECK:         call @part(%[[FRAME]], %[[SCRATCH]])
func.func private @sched(%x: memref<4xf32>, %y: memref<2x3xf32>) {
  %s = memref.alloc() : memref<8xi8>
  call @part(%x, %y, %x, %s) : (memref<4xf32>, memref<2x3xf32>, memref<4xf32>, memref<8xi8>) -> ()
  call @part(%x, %y, %x, %s) : (memref<4xf32>, memref<2x3xf32>, memref<4xf32>, memref<8xi8>) -> ()
  memref.dealloc %s : memref<8xi8>
  return
}

// Public (an entry point: its ABI is not ours): unchanged, though it
// takes two buffers; so is @unused, called from nowhere here, and @sched
// above, which takes no more than max-arguments.
// CHECK-LABEL: func.func @entry(%{{.*}}: memref<4xf32>, %{{.*}}: memref<2x3xf32>)
func.func @entry(%x: memref<4xf32>, %y: memref<2x3xf32>) {
  call @sched(%x, %y) : (memref<4xf32>, memref<2x3xf32>) -> ()
  return
}
// CHECK-LABEL: func.func private @unused(%{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>, %{{.*}}: memref<4xf32>)
func.func private @unused(%x: memref<4xf32>, %y: memref<4xf32>, %z: memref<4xf32>) {
  return
}

// Results too: @three returns three buffers (more than max-arguments):
// it stores their descriptors into a block its caller passes first, and
// returns nothing; the caller loads them right after the call.
// CHECK-LABEL: func.func private @three(
// CHECK-SAME:    %[[R:.*]]: !llvm.ptr, %[[X:.*]]: memref<4xf32>) {
// CHECK:         %[[D0:.*]] = builtin.unrealized_conversion_cast %[[X]] : memref<4xf32> to
// CHECK-NEXT:    %[[S0:.*]] = llvm.getelementptr inbounds %[[R]][0]
// CHECK-NEXT:    llvm.store %[[D0]], %[[S0]]
// CHECK:         llvm.getelementptr inbounds %[[R]][40]
// CHECK:         llvm.getelementptr inbounds %[[R]][80]
// CHECK:         return{{$}}
func.func private @three(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  return %x, %x, %x : memref<4xf32>, memref<4xf32>, memref<4xf32>
}
// CHECK-LABEL: func.func @calls_three(
// CHECK:         %[[BLOCK:.*]] = llvm.alloca %{{.*}} x !llvm.array<15 x i64>
// CHECK:         call @three(%[[BLOCK]], %{{.*}}) : (!llvm.ptr, memref<4xf32>) -> ()
// CHECK-NEXT:    %[[Q0:.*]] = llvm.getelementptr inbounds %[[BLOCK]][0]
// CHECK-NEXT:    %[[L0:.*]] = llvm.load %[[Q0]]
// CHECK-NEXT:    %[[M0:.*]] = builtin.unrealized_conversion_cast %[[L0]] : {{.*}} to memref<4xf32>
// CHECK:         return %[[M0]], %{{.*}}, %{{.*}} :
func.func @calls_three(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %r:3 = call @three(%x) : (memref<4xf32>) -> (memref<4xf32>, memref<4xf32>, memref<4xf32>)
  return %r#0, %r#1, %r#2 : memref<4xf32>, memref<4xf32>, memref<4xf32>
}

// After func-to-llvm, the casts meet memref-to-llvm's and fold away: the
// callee reads its descriptors straight from the block.
// LLVM-LABEL: llvm.func @part(
// LLVM-SAME:    %[[F:arg0]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// LLVM:         %[[P0:.*]] = llvm.getelementptr inbounds %[[F]][0]
// LLVM-NEXT:    %[[D0:.*]] = llvm.load %[[P0]]
// LLVM-NOT:     unrealized_conversion_cast {{.*}}memref
// LLVM:         llvm.extractvalue %[[D0]][1]

// ERR: rankc-arguments-through-memory: max-arguments must be at least 0
