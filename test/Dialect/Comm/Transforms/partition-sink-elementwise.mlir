// RUN: rankc-opt %s -comm-partition | FileCheck %s
// A cheap elementwise op (a few arith ops per element) whose users are all
// elementwise work after a wait is computed with them, not before the wait:
// stored and loaded across the parts' boundary it would cost more than the
// overlap buys, while in its users' part it fuses into their loop.

// %twice feeds only the update that needs the halo: it moves after the
// wait, into the part of its user. %scaled is sent: it stays before.
// %expd (a math function per element) is worth overlapping: it stays.
// %total is a reduction's input, not an elementwise user's: it stays.
// CHECK-LABEL: func.func @ranks(
// CHECK: %[[S:.*]] = call @ranks_part0(%arg0)
// CHECK-NEXT: comm.send %[[S]]
// CHECK-NEXT: %[[P1:.*]]:2 = call @ranks_part1(%arg0)
// CHECK-NEXT: %[[H:.*]] = comm.recv
// CHECK-NEXT: call @ranks_part2(%arg0, %[[H]], %[[P1]]#0)
// CHECK-LABEL: func.func private @ranks_part0(
// CHECK: linalg.mul
// CHECK-NOT: linalg.add
// CHECK: return
// CHECK-LABEL: func.func private @ranks_part1(
// CHECK-DAG: linalg.exp
// CHECK-DAG: linalg.reduce
// CHECK: return
// CHECK-LABEL: func.func private @ranks_part2(
// CHECK: %[[T:.*]] = linalg.add
// CHECK: linalg.sub ins(%{{.*}}, %[[T]]
// CHECK: linalg.mul
// CHECK: return
module attributes {comm.world_size = 2 : i64} {
  func.func @ranks(%u: tensor<8xf32> {comm.input = "u"})
      -> (tensor<8xf32> {comm.outputs = ["next"]}, tensor<f32> {comm.outputs = ["total"]})
      attributes {comm.ranks = "all"} {
    %e = tensor.empty() : tensor<8xf32>
    %scaled = linalg.mul ins(%u, %u : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    comm.send %scaled to offset 1 tag 1 : tensor<8xf32>
    %twice = linalg.add ins(%u, %u : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    %expd = linalg.exp ins(%u : tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    %sq = linalg.add ins(%u, %u : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    %z = arith.constant 0.0 : f32
    %e0 = tensor.empty() : tensor<f32>
    %acc = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %total = linalg.reduce ins(%sq : tensor<8xf32>) outs(%acc : tensor<f32>) dimensions = [0]
      (%in: f32, %init: f32) {
        %s = arith.addf %in, %init : f32
        linalg.yield %s : f32
      }
    %h = comm.recv from offset -1 tag 1 : tensor<8xf32>
    %d = linalg.sub ins(%h, %twice : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    %next = linalg.mul ins(%d, %expd : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) -> tensor<8xf32>
    return %next, %total : tensor<8xf32>, tensor<f32>
  }
}
