// RUN: rankc-opt %s -comm-accumulate-gradients | FileCheck %s
// Applying it twice changes nothing.
// RUN: rankc-opt %s -comm-accumulate-gradients -comm-accumulate-gradients | FileCheck %s

// accumulate = 4: the gradient gets an accumulator (zero at first) and is
// carried as state between updates; the update step returns (sum + g) / 4
// (then averaged over the ranks by comm-bucket-gradients) and restarts the
// accumulator at zero. The program's own allreduce stays.
// CHECK-LABEL: func.func @all(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4xf32> {comm.param = "w"}, %[[X:[a-z0-9]+]]: tensor<4xf32> {comm.input = "x"},
// CHECK-SAME: %[[SUM:[a-z0-9]+]]: tensor<4xf32> {comm.optimizer_state = "g@grad_sum"}, %{{.*}}: tensor<4xf32> {comm.optimizer_state = "g@grad"})
// CHECK-SAME: -> (tensor<4xf32> {comm.outputs = ["loss"]}, tensor<4xf32> {comm.grad_of = "w", comm.optimizer_state = "g@grad", comm.outputs = ["g"]}, tensor<4xf32> {comm.optimizer_state = "g@grad_sum"})
// CHECK: %[[LOSS:.*]] = comm.allreduce sum %[[X]]
// CHECK: %[[G:.*]] = arith.mulf %[[W]], %[[X]]
// CHECK: %[[AVG:.*]] = linalg.generic {{.*}} ins(%[[SUM]], %[[G]] :
// CHECK: arith.addf
// CHECK: %[[K:.*]] = arith.constant 4.000000e+00 : f32
// CHECK: arith.divf %{{.*}}, %[[K]]
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: return %[[LOSS]], %[[AVG]], %[[ZERO]]
module attributes {comm.world_size = 2 : i64, comm.data_parallel = #comm.data_parallel<accumulate = 4 : i64, optimizer = <kind = sgd, lr = 0.1 : f64, weight_decay = 0.0 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, nesterov = false>>} {
  func.func @all(%w: tensor<4xf32> {comm.param = "w"}, %x: tensor<4xf32> {comm.input = "x"})
      -> (tensor<4xf32> {comm.outputs = ["loss"]}, tensor<4xf32> {comm.grad_of = "w", comm.outputs = ["g"]})
      attributes {comm.ranks = "all"} {
    %0 = comm.allreduce sum %x tag "t" : tensor<4xf32>
    %1 = arith.mulf %w, %x : tensor<4xf32>
    return %0, %1 : tensor<4xf32>, tensor<4xf32>
  }
}
