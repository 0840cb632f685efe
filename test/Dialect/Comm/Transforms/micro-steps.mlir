// RUN: rankc-opt %s -comm-micro-steps | FileCheck %s
// Applying it twice changes nothing.
// RUN: rankc-opt %s -comm-micro-steps -comm-micro-steps | FileCheck %s
// The whole comm pipeline: the update step gets the same signature.
// RUN: rankc-opt %s -rankc-pipeline | FileCheck %s --check-prefix=BOTH

// The micro-step of `all` (accumulate = 4): the gradient is added into its
// accumulator; the gradient output is the last update's (carried), the
// parameter and the optimizer's step count pass through; the program's own
// allreduce stays, partitioned as in any program. The program itself is
// untouched (the passes after this one build its update step).
// CHECK-LABEL: func.func @all(
// CHECK-SAME: attributes {comm.ranks = "all"}
// CHECK-LABEL: func.func @all__micro(
// CHECK-SAME: %[[W:[a-z0-9]+]]: tensor<4xf32> {comm.param = "w"}, %[[X:[a-z0-9]+]]: tensor<4xf32> {comm.input = "x"},
// CHECK-SAME: %[[SUM:[a-z0-9]+]]: tensor<4xf32> {comm.optimizer_state = "g@grad_sum"}, %[[LAST:[a-z0-9]+]]: tensor<4xf32> {comm.optimizer_state = "g@grad"}, %[[STEP:[a-z0-9]+]]: tensor<i64> {comm.optimizer_state = "optimizer@step"})
// CHECK-SAME: attributes {comm.micro_step_of = "all"}
// CHECK: %[[NEWSUM:.*]] = call @all_part0__micro(%[[W]], %[[X]], %[[SUM]])
// CHECK: %[[LOSS:.*]] = comm.allreduce sum %[[X]]
// CHECK: return %[[LOSS]], %[[LAST]], %[[NEWSUM]], %[[W]], %[[STEP]]
// CHECK-LABEL: func.func private @all_part0__micro(
// CHECK-SAME: attributes {comm.part_of = "all__micro"}
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NOT: arith.divf
// CHECK: return

// BOTH-LABEL: func.func @all(
// BOTH-SAME: -> (tensor<4xf32> {comm.outputs = ["loss"]}, tensor<4xf32> {comm.grad_of = "w", comm.optimizer_state = "g@grad", comm.outputs = ["g"]}, tensor<4xf32> {comm.optimizer_state = "g@grad_sum"}, tensor<4xf32> {comm.outputs = ["w"], comm.update_of = "w"}, tensor<i64> {comm.optimizer_state = "optimizer@step"}) attributes {comm.ranks = "all"}
// BOTH: comm.allreduce mean {{.*}} tag "rankc.bucket.0"
// BOTH-LABEL: func.func @all__micro(
// BOTH-SAME: -> (tensor<4xf32> {comm.outputs = ["loss"]}, tensor<4xf32> {comm.grad_of = "w", comm.optimizer_state = "g@grad", comm.outputs = ["g"]}, tensor<4xf32> {comm.optimizer_state = "g@grad_sum"}, tensor<4xf32> {comm.outputs = ["w"], comm.update_of = "w"}, tensor<i64> {comm.optimizer_state = "optimizer@step"}) attributes {comm.micro_step_of = "all"}
// BOTH-NOT: rankc.bucket
// BOTH: comm.allreduce sum %{{.*}} tag "t"
module attributes {comm.world_size = 2 : i64, comm.data_parallel = #comm.data_parallel<accumulate = 4 : i64, optimizer = <kind = sgd, lr = 0.1 : f64, weight_decay = 0.0 : f64, momentum = 0.0 : f64, dampening = 0.0 : f64, nesterov = false>>} {
  func.func @all(%w: tensor<4xf32> {comm.param = "w"}, %x: tensor<4xf32> {comm.input = "x"})
      -> (tensor<4xf32> {comm.outputs = ["loss"]}, tensor<4xf32> {comm.grad_of = "w", comm.outputs = ["g"]})
      attributes {comm.ranks = "all"} {
    %0 = comm.allreduce sum %x tag "t" : tensor<4xf32>
    %1 = arith.mulf %w, %x : tensor<4xf32>
    return %0, %1 : tensor<4xf32>, tensor<4xf32>
  }
}
