// RUN: rankc-opt %s -comm-verify-ranks -comm-partition | FileCheck %s
// RUN: rankc-opt %s -comm-partition | rankc-opt -comm-partition | FileCheck %s

// Rank 0 computes %a for rank 1 and %b only from its input; it needs rank 1's
// answer only for %c. The send must leave before the wait, and the work that
// only the output needs must come after the send (and before the wait, to
// overlap it: a log per element is worth it; a cheap op is not, see
// partition-sink-elementwise.mlir).
// CHECK: module attributes {comm.partitioned
// CHECK-LABEL: func.func @rank0(
// CHECK-NEXT: %[[A:.*]] = call @rank0_part0(%arg0)
// CHECK-NEXT: comm.send %[[A]] to rank 1 tag 1
// CHECK-NEXT: %[[B:.*]] = call @rank0_part1(%arg0)
// CHECK-NEXT: %[[R:.*]] = comm.recv from rank 1 tag 2
// CHECK-NEXT: %[[C:.*]] = call @rank0_part2(%[[R]], %[[B]])
// CHECK-NEXT: return %[[C]], %[[R]]
// CHECK: func.func private @rank0_part0(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {comm.part_of = "rank0"}
// CHECK-NEXT: tensor.empty
// CHECK-NEXT: linalg.exp
// CHECK: func.func private @rank0_part1(
// CHECK: linalg.log
// CHECK: func.func private @rank0_part2(
// The constant is cloned into the part that uses it.
// CHECK: arith.constant dense<2.0
// CHECK: linalg.add
// CHECK: linalg.mul
// Rank 1 forwards what it receives: no part between its recv and send.
// CHECK-LABEL: func.func @rank1(
// CHECK-NEXT: %[[X:.*]] = comm.recv from rank 0 tag 1
// CHECK-NEXT: comm.send %[[X]] to rank 0 tag 2
// CHECK-NEXT: return
// A program without communication is one part.
// CHECK-LABEL: func.func @rank2(
// CHECK-NEXT: call @rank2_part0(%arg0)
// CHECK-NEXT: return
module attributes {comm.world_size = 3 : i64} {
  func.func @rank0(%x: tensor<4xf32> {comm.input = "x"})
      -> (tensor<4xf32> {comm.outputs = ["c"]}, tensor<4xf32> {comm.outputs = ["r", "r_again"]})
      attributes {comm.ranks = array<i64: 0>} {
    %two = arith.constant dense<2.0> : tensor<4xf32>
    %e0 = tensor.empty() : tensor<4xf32>
    %a = linalg.exp ins(%x : tensor<4xf32>) outs(%e0 : tensor<4xf32>) -> tensor<4xf32>
    %e1 = tensor.empty() : tensor<4xf32>
    %b = linalg.log ins(%x : tensor<4xf32>) outs(%e1 : tensor<4xf32>) -> tensor<4xf32>
    %r = comm.recv from rank 1 tag 2 : tensor<4xf32>
    %e2 = tensor.empty() : tensor<4xf32>
    %s = linalg.add ins(%r, %b : tensor<4xf32>, tensor<4xf32>) outs(%e2 : tensor<4xf32>) -> tensor<4xf32>
    %e3 = tensor.empty() : tensor<4xf32>
    %c = linalg.mul ins(%s, %two : tensor<4xf32>, tensor<4xf32>) outs(%e3 : tensor<4xf32>) -> tensor<4xf32>
    comm.send %a to rank 1 tag 1 : tensor<4xf32>
    return %c, %r : tensor<4xf32>, tensor<4xf32>
  }
  func.func @rank1() attributes {comm.ranks = array<i64: 1>} {
    %x = comm.recv from rank 0 tag 1 : tensor<4xf32>
    comm.send %x to rank 0 tag 2 : tensor<4xf32>
    return
  }
  func.func @rank2(%x: tensor<4xf32> {comm.input = "x"}) -> (tensor<4xf32> {comm.outputs = ["y"]})
      attributes {comm.ranks = array<i64: 2>} {
    %e = tensor.empty() : tensor<4xf32>
    %y = linalg.exp ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    return %y : tensor<4xf32>
  }
}
